"""Issue 21 §1 (cold hybrid): the bundled model's first texts run on an unoptimised ONNX
session (``ORT_DISABLE_ALL``: cheaper to load), later ones on the optimised session; the two
give bitwise-equal vectors on texts of every length (so a query vector never depends on how
many texts its process embedded before), and the switch happens once, after
``QUICK_TEXTS``."""

from __future__ import annotations

import random

import numpy as np

from gitquarry.embedding import minilm
from gitquarry.embedding.minilm import Runtime, model_files


def _texts() -> list[str]:
    rng = random.Random(7)
    words = ["fix", "cache", "invalidation", "timeout", "parser", "error", "token", "auth",
             "merge", "branch", "répertoire", "数据", "naïve", "def", "__init__(self):",
             "return", "None", "{}", "[]", "->", "=>", "0x1f", "README.md",
             "src/gitquarry/cli/fast.py"]
    out = ["fix cache", "timeout", "x", "", "a" * 3000, "🙂 emoji and ümlauts"]
    for n in (1, 3, 8, 20, 60, 150, 300, 600):
        out += [" ".join(rng.choice(words) for _ in range(n)) for _ in range(3)]
    return out


def test_unoptimised_session_gives_the_same_vectors() -> None:
    model, tokenizer = model_files()
    texts = _texts()
    optimised = Runtime(model, tokenizer, "cpu", 1)  # quick_texts=0: optimised throughout
    quick = Runtime(model, tokenizer, "cpu", 1, quick_texts=len(texts) + 1)
    assert optimised.optimized and not quick.optimized
    want = optimised.encode(texts)
    got = quick.encode(texts)
    assert not quick.optimized  # every text ran on the unoptimised session
    assert np.array_equal(got, want) and got.tobytes() == want.tobytes()
    for budget in (16, 128):
        assert quick.encode(texts, budget).tobytes() == optimised.encode(texts, budget).tobytes()


def test_the_bundled_runtime_switches_once_after_quick_texts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(minilm, "_RUNTIMES", {})
    embedder = minilm.MiniLMOnnxEmbedder(threads=1)
    first = embedder.embed(["fix cache"])
    runtime = next(iter(minilm._RUNTIMES.values()))
    assert not runtime.optimized and runtime.quick_texts == minilm.QUICK_TEXTS
    quick_session = runtime.session
    more = embedder.embed([f"text {i}" for i in range(minilm.QUICK_TEXTS)])
    assert runtime.optimized and runtime.session is not quick_session
    optimised_session = runtime.session
    again = embedder.embed(["fix cache"])
    assert runtime.session is optimised_session
    assert first.tobytes() == again.tobytes()
    assert more.shape == (minilm.QUICK_TEXTS, minilm.DIMENSIONS)


def test_a_long_lived_process_loads_the_optimised_session_at_once(monkeypatch) -> None:
    """The MCP server and the daemon call ``mark_long_lived``: their runtime starts on the
    optimised session (no swap after the first texts, whose old session stayed in memory);
    any other process starts on the quick one."""
    from gitquarry.embedding import process_kind

    monkeypatch.setattr(minilm, "_RUNTIMES", {})
    monkeypatch.setattr(process_kind, "_long_lived", False)
    assert not minilm._runtime("cpu", 1).optimized  # a CLI process: the quick session first

    monkeypatch.setattr(minilm, "_RUNTIMES", {})
    process_kind.mark_long_lived()
    assert process_kind.is_long_lived()
    runtime = minilm._runtime("cpu", 1)
    assert runtime.optimized and runtime.quick_texts == 0
