"""A long-lived process gives the ONNX session load's freed heap back to the OS
(``minilm.release_free_heap``, glibc ``malloc_trim``) once, after the load; the vectors are
the same either way."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gitquarry.embedding import minilm, process_kind

_RSS = r"""
from pathlib import Path
from gitquarry.embedding import minilm
def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
runtime = minilm.Runtime(*minilm.model_files(), "cpu", 1)
before = rss()
released = minilm.release_free_heap()
print(released, before, rss())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_release_free_heap_returns_the_session_loads_free_pages() -> None:
    done = subprocess.run([sys.executable, "-c", _RSS], capture_output=True, text=True,
                          check=True, timeout=300)
    released, before, after = done.stdout.split()
    assert released == "True"
    assert float(after) < float(before) - 4  # MB; measured ~11 MB on the bundled model


def test_a_long_lived_runtime_releases_once_and_embeds_the_same(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[bool] = []
    real = minilm.release_free_heap
    monkeypatch.setattr(minilm, "release_free_heap", lambda: calls.append(real()) or True)
    monkeypatch.setattr(minilm, "_RUNTIMES", {})
    monkeypatch.setattr(process_kind, "_long_lived", False)
    short = minilm._runtime("cpu", 1)
    assert calls == []  # a CLI process exits soon: nothing to give back
    texts = ["fix cache invalidation", "timeout", "a" * 500]
    want = short.encode(texts)

    monkeypatch.setattr(minilm, "_RUNTIMES", {})
    monkeypatch.setattr(process_kind, "_long_lived", True)
    runtime = minilm._runtime("cpu", 1)
    assert len(calls) == 1
    assert minilm._runtime("cpu", 1) is runtime and len(calls) == 1  # once per load
    assert runtime.encode(texts).tobytes() == want.tobytes()
