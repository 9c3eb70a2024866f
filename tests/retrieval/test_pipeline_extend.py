"""``extend_pipeline``: a resumable run read on to a larger ``top_n`` is the run with that
``top_n`` (issue 21 target 3: the ranking a cursor pins, without running the filters over
the first candidates twice). Random candidate lists with copies (groups), near-duplicate
texts, scores below a threshold and corpus folds, compared field by field with a new run."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gitquarry.retrieval.pipeline import (
    Candidate,
    PipelineOutcome,
    PipelineSettings,
    extend_pipeline,
    run_pipeline,
)

WORDS = ["fix", "parser", "option", "flag", "shell", "completion", "bar", "progress", "echo"]


def _candidates(seed: int, n: int) -> list[Candidate[int]]:
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(n)]
    out = []
    score = 1.0
    for key in range(n):
        score -= rng.random() * 0.02
        text = texts[rng.randrange(key + 1)] if rng.random() < 0.2 else texts[key]
        out.append(Candidate(
            key=key, score=max(score, 0.0), text=text,
            group=rng.randrange(n // 3) if rng.random() < 0.3 else None,
            folded=[1000 + key] if rng.random() < 0.05 else [],
            fold_under=rng.randrange(key) if key and rng.random() < 0.1 else None))
    return out


def _view(outcome: PipelineOutcome[int]) -> tuple[Any, ...]:
    return (
        [(c.key, c.input_rank, c.score, list(c.absorbed), list(c.moves)) for c in outcome.results],
        list(outcome.removed), outcome.examined, list(outcome.warnings),
        [outcome.explain(c) for c in outcome.results],
    )


SETTINGS = [
    PipelineSettings(),
    PipelineSettings(collapse=False),
    PipelineSettings(min_confidence=0.55),
    PipelineSettings(ngram_dedup_threshold=0.5),
]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("seed", range(12))
def test_a_run_read_on_equals_a_new_run(settings: PipelineSettings, seed: int) -> None:
    n = 30 + seed * 7
    for small, large in ((1, 5), (3, 12), (10, 50), (5, 400)):
        reference = run_pipeline(iter(_candidates(seed, n)), settings, top_n=large)
        first = run_pipeline(iter(_candidates(seed, n)), settings, top_n=small,
                             resumable=True)
        alone = run_pipeline(iter(_candidates(seed, n)), settings, top_n=small)
        before = _view(first)
        assert before == _view(alone)  # resumable changes nothing about the run itself
        longer = extend_pipeline(first, large)
        assert longer is not None
        assert _view(longer) == _view(reference), (seed, small, large)
        assert extend_pipeline(first, large + 5) is None  # read on once only
        # the first outcome keeps its own removed list and examined count
        assert (list(first.removed), first.examined) == (before[1], before[2])


def test_not_resumable_where_the_order_is_chosen_from_a_pool() -> None:
    for settings in (PipelineSettings(mmr_enabled=True), PipelineSettings(normalise=True)):
        first = run_pipeline(iter(_candidates(1, 40)), settings, top_n=5, resumable=True)
        assert extend_pipeline(first, 20) is None
    plain = run_pipeline(iter(_candidates(1, 40)), PipelineSettings(), top_n=5)
    assert extend_pipeline(plain, 20) is None


def test_the_inline_jaccard_picks_the_loops_host() -> None:
    """``pipeline._most_jaccard`` against ``_most_similar`` with ``similarity.jaccard``: the
    same host (the first maximum: duplicate texts tie) and the same value, empty texts
    included."""
    from gitquarry.retrieval import pipeline
    from gitquarry.retrieval.similarity import jaccard

    rng = random.Random(8)
    pool = ["", "fix", "fix the parser", *[" ".join(rng.choice(WORDS) for _ in range(
        rng.randint(2, 8))) for _ in range(30)]]
    for _ in range(400):
        kept = [Candidate(key=i, score=1.0, text=rng.choice(pool))
                for i in range(rng.randint(0, 12))]
        c = Candidate(key=99, score=1.0, text=rng.choice(pool))
        a = c.shingles
        want = pipeline._most_similar(kept, lambda k, a=a: jaccard(a, k.shingles))
        got = pipeline._most_jaccard(c, kept)
        assert (got[0] is want[0]) and got[1] == want[1], (c.text, [k.text for k in kept])
