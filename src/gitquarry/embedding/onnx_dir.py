"""Provider ``onnx``: a sentence-transformers encoder exported to an ONNX file in a local
directory, run in this process by the same runtime as the bundled model (the ``accurate``
profile: all-mpnet-base-v2 int8, built by ``tools/build_encoder_int8.py``).

``[embedding] model`` is the directory. It holds ``model.onnx`` (inputs ``input_ids``,
``attention_mask`` and optionally ``token_type_ids``; output ``last_hidden_state``),
``tokenizer.json`` and ``MANIFEST.json`` with at least ``model_id``, ``dimensions``,
``max_tokens`` and ``files.model.onnx`` (the file's SHA-256; ``sep_token`` optional, default
``[SEP]``). The pipeline is the bundled model's: the model's tokenizer, at most
``max_tokens`` tokens (or a lower document budget, cut exactly), mean pooling, L2 norm, one
text per ONNX call.

The namespace's model id is ``{model_id}@{first 12 hex digits of model.onnx's SHA-256}``
(taken from the manifest; the file is hashed once per process and must match it), so vectors
of two builds, or of two models in one directory over time, are never mixed. Nothing is
downloaded; the directory is named only by the user's own configuration (repository-owned
files cannot set ``[embedding]``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Final

import numpy as np

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding.base import Embedder
from gitquarry.embedding.minilm import Runtime, _cuda_available, resolve_threads
from gitquarry.embedding.text import truncate_to_token_budget
from gitquarry.errors import (
    EmbeddingConfigInvalidError,
    EmbeddingDeviceUnavailableError,
    EmbeddingModelUnavailableError,
)

PROVIDER: Final = "onnx"
_REQUIRED: Final = ("model_id", "dimensions", "max_tokens")


@functools.lru_cache(maxsize=8)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(directory: Path) -> dict[str, Any]:
    """The directory's ``MANIFEST.json``, checked for the fields this provider needs and for
    the model file's digest.

    :raises EmbeddingModelUnavailableError: a file is missing, the manifest is not valid
        JSON or lacks a field, or ``model.onnx`` does not match its recorded SHA-256.
    """
    name = str(directory)
    for file in ("model.onnx", "tokenizer.json", "MANIFEST.json"):
        if not (directory / file).is_file():
            raise EmbeddingModelUnavailableError(
                PROVIDER, name, f"{directory / file} is missing (build the directory with "
                "tools/build_encoder_int8.py)"
            )
    try:
        manifest = json.loads((directory / "MANIFEST.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingModelUnavailableError(PROVIDER, name, f"MANIFEST.json: {exc}") from exc
    if not isinstance(manifest, dict):
        raise EmbeddingModelUnavailableError(PROVIDER, name, "MANIFEST.json is not an object")
    missing = [k for k in _REQUIRED if k not in manifest]
    recorded = (manifest.get("files") or {}).get("model.onnx")
    if missing or not isinstance(recorded, str):
        raise EmbeddingModelUnavailableError(
            PROVIDER, name, f"MANIFEST.json lacks {missing or ['files.model.onnx']}"
        )
    model = directory / "model.onnx"
    stat = model.stat()
    if _sha256(model, stat.st_size, stat.st_mtime_ns) != recorded:
        raise EmbeddingModelUnavailableError(
            PROVIDER, name, "model.onnx does not match the SHA-256 in MANIFEST.json (a "
            "changed or partly copied file); rebuild the directory"
        )
    return manifest


class OnnxDirEmbedder(Embedder):
    """The encoder in ``directory`` (see the module docstring). ``device``: "cpu", "cuda" or
    "auto" (CUDA needs onnxruntime-gpu); ``threads``: intra-op threads, 0 = automatic. The
    manifest is read at construction (cheap); the ONNX session loads on the first embed."""

    provider = PROVIDER
    data_boundary = "local_process"

    def __init__(self, directory: Path, device: str = "cpu", threads: int = 0) -> None:
        if device not in ("cpu", "cuda", "auto"):
            raise EmbeddingConfigInvalidError(
                "device", f"must be cpu, cuda or auto, not {device!r}"
            )
        if device == "cuda" and not _cuda_available():
            raise EmbeddingDeviceUnavailableError(
                PROVIDER, "cuda", "onnxruntime has no CUDAExecutionProvider (install "
                "onnxruntime-gpu)"
            )
        self.directory = directory
        self.manifest = read_manifest(directory)
        self.model = f"{self.manifest['model_id']}@{self.manifest['files']['model.onnx'][:12]}"
        self._device = device
        self.threads = resolve_threads(threads)
        self._runtime: Runtime | None = None

    @property
    def device(self) -> str:
        if self._device == "auto":
            return "cuda" if _cuda_available() else "cpu"
        return self._device

    @property
    def dimensions(self) -> int:
        return int(self.manifest["dimensions"])

    @property
    def max_tokens(self) -> int:
        return int(self.manifest["max_tokens"])

    def runtime(self) -> Runtime:
        if self._runtime is None:
            self._runtime = Runtime(
                self.directory / "model.onnx", self.directory / "tokenizer.json", self.device,
                self.threads, max_tokens=self.max_tokens, model_id=self.model,
                sep_token=str(self.manifest.get("sep_token") or "[SEP]"),
                provider=PROVIDER,
            )
        return self._runtime

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self._embed_truncated(texts, self.max_tokens)

    def _embed_truncated(self, texts: list[str], max_tokens: int) -> np.ndarray:
        cut = [truncate_to_token_budget(t, max_tokens) for t in texts]
        return self.runtime().encode(cut, max_tokens)


def create(config: EmbeddingConfig) -> OnnxDirEmbedder:
    """Registry factory for ``provider = "onnx"``.

    :raises EmbeddingConfigInvalidError: ``model`` is empty or not a directory.
    :raises EmbeddingModelUnavailableError: the directory lacks a file or its manifest is
        wrong (see :func:`read_manifest`).
    """
    if not config.model:
        raise EmbeddingConfigInvalidError(
            "model", "provider 'onnx' needs model = the directory built by "
            "tools/build_encoder_int8.py (model.onnx, tokenizer.json, MANIFEST.json)"
        )
    directory = Path(config.model).expanduser()
    if not directory.is_dir():
        raise EmbeddingConfigInvalidError("model", f"{config.model!r} is not a directory")
    return OnnxDirEmbedder(directory, device=config.device, threads=config.threads)
