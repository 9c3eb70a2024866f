"""Any sentence-transformers model, by name (from the local Hugging Face cache) or local path.

Optional: needs ``pip install 'gitquarry[sentence-transformers]'`` (which brings torch). The
package is imported only when the model first loads. gitquarry never downloads a model: it
sets ``HF_HUB_OFFLINE=1`` before importing and passes ``local_files_only=True``, so a model
that is neither a directory nor already in the Hugging Face cache is an
:class:`EmbeddingModelUnavailableError`, not a download. Fetch one yourself first, e.g.
``SentenceTransformer("BAAI/bge-small-en-v1.5")`` once in a Python shell while online.

The model string is the namespace's model identity: the same model named by hub id and by a
local path gives two namespaces.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any, Final

import numpy as np

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding.base import Embedder
from gitquarry.embedding.text import truncate_to_token_budget
from gitquarry.errors import (
    EmbeddingConfigInvalidError,
    EmbeddingDependencyMissingError,
    EmbeddingFailedError,
    EmbeddingModelUnavailableError,
)

PROVIDER: Final = "sentence-transformers"
#: the model used when ``[embedding] model`` is empty.
DEFAULT_MODEL: Final = "BAAI/bge-small-en-v1.5"
INSTALL_HINT: Final = "pip install 'gitquarry[sentence-transformers]'"
_ENCODE_BATCH: Final = 32


def _require_package() -> None:
    if importlib.util.find_spec("sentence_transformers") is None:
        raise EmbeddingDependencyMissingError(PROVIDER, "sentence-transformers", INSTALL_HINT)


class SentenceTransformersEmbedder(Embedder):
    """A sentence-transformers model in this process. ``device``: "cpu", "cuda" or "auto".

    Construction checks that the package is installed; the model loads on first use (reading
    :attr:`dimensions` or :attr:`max_tokens` loads it too).
    """

    provider = PROVIDER
    data_boundary = "local_process"

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu") -> None:
        if device not in ("cpu", "cuda", "auto"):
            raise EmbeddingConfigInvalidError(
                "device", f"must be cpu, cuda or auto, not {device!r}"
            )
        _require_package()
        self.model = model
        self._device = device
        self._st_model: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        if self._st_model is not None:
            return self._st_model
        with self._lock:
            if self._st_model is None:
                self._st_model = self._load()
        return self._st_model

    def _load(self) -> Any:
        os.environ["HF_HUB_OFFLINE"] = "1"
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingDependencyMissingError(
                PROVIDER, "sentence-transformers", f"{INSTALL_HINT} ({exc})"
            ) from exc
        device = None if self._device == "auto" else self._device
        try:
            return SentenceTransformer(self.model, device=device, local_files_only=True)
        except (OSError, ValueError) as exc:
            # huggingface_hub raises OSError subclasses (LocalEntryNotFoundError) and
            # ValueError for a model absent from the cache in offline mode.
            raise EmbeddingModelUnavailableError(
                PROVIDER,
                self.model,
                f"not a local directory and not in the Hugging Face cache ({exc})",
            ) from exc
        except RuntimeError as exc:  # torch: CUDA requested but unavailable
            raise EmbeddingFailedError(
                f"could not load {self.model!r} on {self._device}: {exc}"
            ) from exc

    @property
    def dimensions(self) -> int:
        dims = self._loaded().get_sentence_embedding_dimension()
        if not dims:
            raise EmbeddingFailedError(f"model {self.model!r} does not report its vector length")
        return int(dims)

    @property
    def max_tokens(self) -> int:
        return int(getattr(self._loaded(), "max_seq_length", 0) or 512)

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        model = self._loaded()
        budget = self.max_tokens
        vectors = model.encode(
            [truncate_to_token_budget(t, budget) for t in texts],
            batch_size=_ENCODE_BATCH,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def create(config: EmbeddingConfig) -> SentenceTransformersEmbedder:
    """Registry factory for ``provider = "sentence-transformers"``.

    :raises EmbeddingDependencyMissingError: sentence-transformers is not installed.
    """
    return SentenceTransformersEmbedder(config.model or DEFAULT_MODEL, device=config.device)
