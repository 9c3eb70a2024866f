"""s5-warm-pipeline: the kept shingles (``similarity.MEMO``) equal the computed ones for any
text, repeated or not, and the pipeline's answers are the same with the memo on and off."""

from __future__ import annotations

import random

import pytest

from gitquarry.retrieval import similarity
from gitquarry.retrieval.pipeline import Candidate, PipelineSettings, run_pipeline

WORDS = ["fix", "Fix", "leak", "memory", "ÄRGER", "ärger", "x_y", "42", "the", "a"]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))


def test_kept_shingles_equal_computed_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    texts = [_text(rng) for _ in range(300)]
    monkeypatch.setattr(similarity, "MEMO", True)
    for t in texts + texts[::-1]:  # second time from the memo
        for n in (1, 2, 3):
            assert similarity.shingles(t, n) == similarity.compute_shingles(t, n)


def _run(texts: list[str]) -> list[tuple[int, list[tuple[int, str]]]]:
    items = [Candidate(key=i, score=1.0 - i / 1000, text=t) for i, t in enumerate(texts)]
    settings = PipelineSettings(ngram_dedup_enabled=True, ngram_dedup_threshold=0.5)
    out = run_pipeline(iter(items), settings, top_n=20, query="fix leak")
    return [(c.key, [(a.key, a.step) for a in c.absorbed]) for c in out.results]


def test_pipeline_answers_equal_with_the_memo_on_and_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    base = [_text(rng) for _ in range(60)]
    texts = [rng.choice(base) if rng.random() < 0.4 else _text(rng) for _ in range(200)]
    monkeypatch.setattr(similarity, "MEMO", False)
    off = _run(texts)
    assert any(absorbed for _, absorbed in off)  # near-duplicates are found at all
    monkeypatch.setattr(similarity, "MEMO", True)
    assert _run(texts) == off
    assert _run(texts) == off  # every text's shingles kept now
