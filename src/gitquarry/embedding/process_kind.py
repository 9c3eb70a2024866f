"""Whether this process is long-lived (the MCP server, the daemon), read when the bundled
model's runtime is created. No third-party imports: the servers set it at start-up without
loading NumPy or ONNX Runtime.

A long-lived process embeds many texts, so it loads the optimised ONNX session at once
instead of answering its first texts with the quick unoptimised one
(:data:`gitquarry.embedding.minilm.QUICK_TEXTS`): replacing a session after the first call
left the first one's memory in the process (MCP server on pallets/click, 100 hybrid calls:
271 MB RSS with the swap, 254 MB without; measured 2026-12-02, docs/performance.md).

It also runs NumPy's BLAS on one thread (:data:`BLAS_THREADS_VARIABLE`, set before NumPy
loads unless the user set it): the only BLAS call on the query path is the semantic ranker's
matrix-vector product, and OpenBLAS's second thread busy-waits after each one. Measured on
the MCP server, click, warm hybrid calls: that thread cost ~24 ms CPU per call of ~95 ms
(2026-12-02, s4-mcp, docs/performance.md). The product's values are the same on one thread
(each cosine is one dot product, computed by one thread either way;
``tests/embedding/test_blas_threads.py`` compares them bit for bit).

After its warm-up (:func:`settle_heap`, called by the MCP server after each search) it moves
the objects it keeps (modules, the ONNX session's wrappers, the indexes' memos) out of the
cyclic garbage collector's reach (``gc.freeze``) and collects young objects less often: a
full collection walked all ~100k of them, ~60-80 ms CPU once every ~150 warm calls, and the
young collections ran ~1.4 times a call. Reference counting frees what a call allocates
either way; only cycles wait for a collection (measured 2026-12-02, s8-mcp,
docs/performance.md)."""

from __future__ import annotations

import gc
import os
import sys
from typing import Final

#: the environment variable OpenBLAS (NumPy's bundled BLAS) reads its thread count from, once,
#: when NumPy loads it
BLAS_THREADS_VARIABLE: Final = "OPENBLAS_NUM_THREADS"

_long_lived = False

#: the young generation's collection threshold in a settled long-lived process (net new
#: container objects; CPython's default is 700, which a warm MCP search passes ~1.4 times
#: while its net growth over the call is far below it)
SETTLED_GC_THRESHOLD: Final = 10_000
#: what :func:`settle_heap` froze last: whether the embedding runtime was loaded then
_settled: bool | None = None


def mark_long_lived() -> None:
    """This process answers many queries: no quick session, one BLAS thread (see the module
    doc; the BLAS setting only takes effect when NumPy is not loaded yet, and a value the
    user set in the environment is kept)."""
    global _long_lived
    _long_lived = True
    if "numpy" not in sys.modules:
        os.environ.setdefault(BLAS_THREADS_VARIABLE, "1")


def is_long_lived() -> bool:
    """True once :func:`mark_long_lived` was called in this process."""
    return _long_lived


def settle_heap() -> bool:
    """In a long-lived process (:func:`mark_long_lived`), after a request was answered: the
    first time, and again the first time after the embedding runtime (ONNX Runtime) got
    loaded, collect cyclic garbage, freeze every object that survives (``gc.freeze``: kept
    for the process's life, never scanned again) and raise the young generation's
    threshold to :data:`SETTLED_GC_THRESHOLD`. Returns whether it froze now. Answers are
    unchanged: no object is freed earlier or later by reference counting, and garbage
    cycles made after the freeze are still collected."""
    global _settled
    if not _long_lived:
        return False
    loaded = "onnxruntime" in sys.modules
    if _settled is not None and _settled == loaded:
        return False
    gc.collect()
    gc.freeze()
    first, second, third = gc.get_threshold()
    gc.set_threshold(max(first, SETTLED_GC_THRESHOLD), second, third)
    _settled = loaded
    return True
