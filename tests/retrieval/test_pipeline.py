"""The shared result pipeline (retrieval/pipeline.py), step by step, on synthetic candidates:
the deterministic unit level (the corpora are tested on real repositories elsewhere)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from gitquarry.retrieval.pipeline import (
    Candidate,
    PipelineSettings,
    mmr_order,
    run_pipeline,
)
from gitquarry.retrieval.similarity import jaccard, shingles

OFF = PipelineSettings(collapse=False, ngram_dedup_enabled=False, max_chunks_per_doc=100)
WORDS = ["parser", "cache", "token", "socket", "merge", "index", "commit", "branch", "tree",
         "blob", "render", "daemon", "config", "query", "vector", "thread"]


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def make(n: int, *, seed: int = 0, texts: Sequence[str] | None = None,
         vectors: bool = True) -> list[Candidate[int]]:
    """``n`` candidates, scores strictly descending from 1.0, distinct texts and random unit
    vectors (seeded)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        text = texts[i] if texts is not None else " ".join(
            rng.choice(WORDS, size=12).tolist()) + f" item{i}"
        out.append(Candidate(key=i, score=1.0 - i / (n + 1), text=text,
                             vector=_unit(rng.normal(size=8)) if vectors else None))
    return out


def keys(outcome) -> list[int]:  # type: ignore[no-untyped-def]
    return [c.key for c in outcome.results]


def test_everything_off_is_the_plain_ranking() -> None:
    cands = make(30)
    out = run_pipeline(iter(cands), OFF, top_n=10)
    assert keys(out) == list(range(10))
    assert out.examined == 10  # lazy: read no further than needed


@pytest.mark.parametrize("vectors", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_mmr_lambda_one_equals_plain_ranking(seed: int, vectors: bool) -> None:
    cands = make(40, seed=seed, vectors=vectors)
    plain = keys(run_pipeline(iter(make(40, seed=seed, vectors=vectors)), OFF, top_n=10))
    diverse = PipelineSettings(collapse=False, ngram_dedup_enabled=False, mmr_enabled=True,
                               mmr_lambda=1.0, max_chunks_per_doc=100)
    out = run_pipeline(iter(cands), diverse, top_n=10)
    assert keys(out) == plain
    assert all(not c.moves for c in out.results)
    assert [c.key for c in mmr_order(cands, 1.0)] == list(range(40))


def test_mmr_below_one_prefers_novel_results() -> None:
    base = _unit(np.ones(8))
    other = _unit(np.array([1, -1, 1, -1, 1, -1, 1, -1], dtype=float))
    cands = [
        Candidate(key=0, score=1.0, vector=base, text="a"),
        Candidate(key=1, score=0.99, vector=base, text="b"),  # same direction as 0
        Candidate(key=2, score=0.90, vector=other, text="c"),
    ]
    out = run_pipeline(iter(cands), PipelineSettings(
        collapse=False, ngram_dedup_enabled=False, mmr_enabled=True, mmr_lambda=0.5),
        top_n=3)
    assert keys(out) == [0, 2, 1]
    moved = {c.key: [(m.step, m.before, m.after) for m in c.moves] for c in out.results}
    assert moved == {0: [], 2: [("mmr", 3, 2)], 1: [("mmr", 2, 3)]}


def test_confidence_threshold_removes_exactly_the_results_under_it() -> None:
    cands = make(50)
    threshold = 0.6
    expected = [c.key for c in cands if c.score >= threshold]
    below = [c.key for c in cands if c.score < threshold]
    settings = PipelineSettings(collapse=False, ngram_dedup_enabled=False,
                                min_confidence=threshold)
    out = run_pipeline(iter(make(50)), settings, top_n=50)
    assert keys(out) == expected
    assert sorted(r.key for r in out.removed) == below
    assert all(r.step == "threshold" for r in out.removed)
    # a score exactly at the threshold stays
    edge = [Candidate(key=0, score=0.6), Candidate(key=1, score=0.5999999)]
    assert keys(run_pipeline(iter(edge), settings, top_n=5)) == [0]


def test_ngram_dedup_thresholds_zero_and_one_are_the_extremes() -> None:
    texts = ["fix the parser cache for tokens", "fix the parser cache for tokens",
             "fix the parser cache for token streams", "render the daemon config",
             "query vectors in threads"]

    def run(threshold: float) -> list[int]:
        settings = PipelineSettings(collapse=False, ngram_dedup_threshold=threshold)
        return keys(run_pipeline(iter(make(5, texts=texts)), settings, top_n=5))

    assert run(0.0) == [0]  # every text is a duplicate of the first
    assert run(1.0) == [0, 2, 3, 4]  # only the identical text is removed
    # in between: removed exactly when the Jaccard similarity reaches the threshold
    sim = jaccard(shingles(texts[0]), shingles(texts[2]))
    assert 0 < sim < 1
    assert run(sim) == [0, 3, 4]
    assert run(min(1.0, sim + 0.01)) == [0, 2, 3, 4]


def test_embedding_dedup_thresholds_zero_and_one_are_the_extremes() -> None:
    v = _unit(np.arange(1, 9, dtype=float))
    w = _unit(np.arange(8, 0, -1, dtype=float))
    cands = lambda: [  # noqa: E731
        Candidate(key=0, score=1.0, vector=v, text="a"),
        Candidate(key=1, score=0.9, vector=v.copy(), text="b"),
        Candidate(key=2, score=0.8, vector=w, text="c"),
        Candidate(key=3, score=0.7, vector=None, text="d"),  # no vector: never removed
    ]

    def run(threshold: float) -> list[int]:
        settings = PipelineSettings(collapse=False, ngram_dedup_enabled=False,
                                    dedup_enabled=True, dedup_threshold=threshold)
        return keys(run_pipeline(iter(cands()), settings, top_n=5))

    assert run(0.0) == [0, 3]
    assert run(1.0) == [0, 2, 3]
    out = run_pipeline(iter(cands()), PipelineSettings(
        collapse=False, ngram_dedup_enabled=False, dedup_enabled=True, dedup_threshold=1.0),
        top_n=5)
    (absorbed,) = out.results[0].absorbed
    assert (absorbed.key, absorbed.step) == (1, "embedding_dedup")


def test_top_n_is_filled_from_further_down_after_dedup() -> None:
    texts = ["same words in every copy"] * 6 + [f"distinct text number {i} {WORDS[i]}"
                                                for i in range(10)]
    pulled: list[int] = []

    def source() -> Iterator[Candidate[int]]:
        for c in make(16, texts=texts):
            pulled.append(c.key)
            yield c

    out = run_pipeline(source(), PipelineSettings(collapse=False), top_n=5)
    assert keys(out) == [0, 6, 7, 8, 9]
    assert pulled == list(range(10))  # read just far enough
    assert [a.key for a in out.results[0].absorbed] == [1, 2, 3, 4, 5]


def test_collapse_keeps_the_best_ranked_copy() -> None:
    cands = make(6)
    for c, group in zip(cands, ["p1", None, "p1", "p2", "p1", "p2"], strict=True):
        c.group = group
    out = run_pipeline(iter(cands), PipelineSettings(ngram_dedup_enabled=False), top_n=6)
    assert keys(out) == [0, 1, 3]
    assert [(a.key, a.step) for a in out.results[0].absorbed] == [(2, "collapse"),
                                                                  (4, "collapse")]
    off = run_pipeline(iter(make(6)), OFF, top_n=6)
    assert keys(off) == list(range(6))


def test_per_document_limit() -> None:
    cands = make(8)
    for c, doc in zip(cands, "aaabbbcc", strict=True):
        c.doc = doc
    out = run_pipeline(iter(cands), PipelineSettings(ngram_dedup_enabled=False,
                                                     max_chunks_per_doc=2), top_n=8)
    assert keys(out) == [0, 1, 3, 4, 6, 7]
    assert [a.key for a in out.results[0].absorbed] == [2]


def test_fold_hook_refills_the_window() -> None:
    def fold(window: list[Candidate[int]]) -> dict[int, int]:
        return {1: 0} if any(c.key == 1 for c in window) else {}

    out = run_pipeline(iter(make(10)), OFF, top_n=3, fold=fold)
    assert keys(out) == [0, 2, 3]
    assert [(a.key, a.step) for a in out.results[0].absorbed] == [(1, "fold")]
    # a fold naming something outside the window, or itself, is ignored
    bad = run_pipeline(iter(make(10)), OFF, top_n=3, fold=lambda w: {9: 0, 2: 2})
    assert keys(bad) == [0, 1, 2]


class _Lengths:
    """A deterministic stand-in for a cross-encoder: prefers passages holding the query."""

    name = "lengths"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        return [float(p.count(query)) for p in passages]


def test_rerank_reorders_the_head_and_reports_it() -> None:
    texts = ["alpha", "beta", "gamma gamma", "delta", "gamma"]
    settings = PipelineSettings(collapse=False, ngram_dedup_enabled=False,
                                rerank_enabled=True, rerank_top_n=5)
    out = run_pipeline(iter(make(5, texts=texts)), settings, top_n=3, query="gamma",
                       reranker=_Lengths())
    assert keys(out) == [2, 4, 0]
    assert out.results[0].moves[-1].step == "rerank" and out.results[0].rerank_score == 2.0
    assert "rerank" in out.steps


def test_rerank_without_a_model_is_a_warning_not_an_error() -> None:
    settings = PipelineSettings(collapse=False, rerank_enabled=True)
    out = run_pipeline(iter(make(5)), settings, top_n=3)
    assert keys(out) == [0, 1, 2]
    assert [code for code, _ in out.warnings] == ["rerank_unavailable"]

    class Broken:
        name = "broken"

        def score(self, query: str, passages: Sequence[str]) -> list[float]:
            raise RuntimeError("model exploded")

    out = run_pipeline(iter(make(5)), settings, top_n=3, reranker=Broken())
    assert keys(out) == [0, 1, 2]
    assert [code for code, _ in out.warnings] == ["rerank_failed"]


def test_normalise_min_max_and_explain_shape() -> None:
    raw = [Candidate(key=k, score=s, text=f"text {k}") for k, s in
           (("a", 12.0), ("b", 9.0), ("c", 3.0))]
    out = run_pipeline(iter(raw), PipelineSettings(normalise=True, min_confidence=0.5),
                       top_n=3)
    assert [(c.key, round(c.score, 3)) for c in out.results] == [("a", 1.0), ("b", 0.667)]
    assert out.summary()["removed"] == [{"key": "c", "step": "threshold", "input_rank": 3,
                                         "score": 0.0}]
    assert out.explain(out.results[1]) == {"input_rank": 2, "rank": 2, "moved": [],
                                           "absorbed": {}}
