"""Long-lived processes (MCP server, daemon) run NumPy's BLAS on one thread
(``embedding.process_kind``): the semantic ranker's cosines are bit for bit those of a
multi-threaded BLAS at the sizes OpenBLAS keeps on one thread anyway (every index up to 10k
vectors, click's included) and where its threads split evenly (100k, measured by hand);
where a split leaves a remainder (30,001 rows) a few cosines of the threaded product differed
in the last bit, depending on the thread count, and the rankings were the same. The setting
is made before NumPy loads, never over the user's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gitquarry.embedding import process_kind

# A fresh interpreter per BLAS setting: OpenBLAS reads its thread count once, at load.
_COSINES = r"""
import hashlib, json, sys
import numpy as np
from gitquarry.retrieval.vectors import cosine_top_k
rng = np.random.default_rng(21)
out = {}
for n in (1, 7, 1000, 10000, 30001):
    m = rng.standard_normal((n, 384)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    digest = hashlib.sha256()
    top, sims = [], []
    for _ in range(12):
        q = rng.standard_normal(384).astype(np.float32)
        q /= np.linalg.norm(q)
        s = m @ q
        digest.update(s.tobytes())
        sims.append(s)
        top.append([j for j, _ in cosine_top_k(m, q, 50)])
    np.save(f"{sys.argv[1]}-{n}.npy", np.stack(sims))
    out[n] = [digest.hexdigest(), repr(top)]
print(json.dumps(out))
"""


def _cosines(threads: str | None, where: Path) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != process_kind.BLAS_THREADS_VARIABLE}
    if threads is not None:
        env[process_kind.BLAS_THREADS_VARIABLE] = threads
    done = subprocess.run([sys.executable, "-c", _COSINES, str(where)], env=env,
                          capture_output=True, text=True, check=True, timeout=300)
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


@pytest.mark.timeout(600)
def test_one_blas_thread_gives_the_same_cosines(tmp_path: Path) -> None:
    one = _cosines("1", tmp_path / "one")
    assert set(one) == {"1", "7", "1000", "10000", "30001"}
    for threads in ("2", None):  # None: the library's default (one thread per CPU)
        name = f"t{threads}"
        other = _cosines(threads, tmp_path / name)
        for n in ("1", "7", "1000", "10000"):  # bit for bit
            assert other[n] == one[n], n
        # the rankings are the same; the values at most a last bit apart
        assert other["30001"][1] == one["30001"][1]
        a = np.load(tmp_path / "one-30001.npy")
        b = np.load(tmp_path / f"{name}-30001.npy")
        assert np.max(np.abs(a - b)) <= 6e-8
        assert np.count_nonzero(a != b) <= a.size // 1000


_MARK = r"""
import os, sys
from gitquarry.embedding.process_kind import BLAS_THREADS_VARIABLE, mark_long_lived
if sys.argv[1] == "numpy-first":
    import numpy
mark_long_lived()
print(os.environ.get(BLAS_THREADS_VARIABLE, "<unset>"))
"""


@pytest.mark.parametrize(("given", "order", "want"), [
    (None, "mark-first", "1"),          # the server's start: NumPy not loaded yet
    ("3", "mark-first", "3"),           # the user's own setting is kept
    (None, "numpy-first", "<unset>"),   # too late to matter: left alone
])
def test_mark_long_lived_sets_one_blas_thread_before_numpy_loads(
        given: str | None, order: str, want: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != process_kind.BLAS_THREADS_VARIABLE}
    if given is not None:
        env[process_kind.BLAS_THREADS_VARIABLE] = given
    done = subprocess.run([sys.executable, "-c", _MARK, order], env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    assert done.stdout.strip() == want


def test_the_mcp_server_marks_itself_before_numpy_loads() -> None:
    """``build_server`` calls ``mark_long_lived`` while NumPy is still unloaded, so the
    setting takes effect (NumPy loads on the first semantic query)."""
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "import tempfile\n"
        "from gitquarry.mcp.server import build_server\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    server, searcher = build_server(Path(d))\n"
        "    searcher.close()\n"
        "print('numpy' in sys.modules, os.environ.get('OPENBLAS_NUM_THREADS'))\n")
    env = {k: v for k, v in os.environ.items() if k != process_kind.BLAS_THREADS_VARIABLE}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True, timeout=120)
    assert done.stdout.split()[-2:] == ["False", "1"]
