"""Hybrid fusion while vectors are still being computed (issue 20 §4), pure: the semantic
list only reorders among items with vectors; an item without one keeps its lexical rank."""

from __future__ import annotations

import random

import pytest

from gitquarry.retrieval.fusion import rrf_fuse, rrf_fuse_partial


def _case(rng: random.Random) -> tuple[list[int], list[int], set[int]]:
    universe = list(range(rng.randint(1, 60)))
    lexical = rng.sample(universe, rng.randint(0, len(universe)))
    embedded = {i for i in universe if rng.random() < rng.choice([0.05, 0.25, 0.5, 0.9])}
    semantic = rng.sample(sorted(embedded), len(embedded))
    return lexical, semantic, embedded


@pytest.mark.parametrize("seed", range(200))
def test_an_item_without_a_vector_never_drops_below_its_lexical_rank(seed: int) -> None:
    rng = random.Random(seed)
    lexical, semantic, embedded = _case(rng)
    weights = rng.choice([(1.0, 1.0), (1.0, 0.5), (1.0, 2.0)])
    fused = rrf_fuse_partial(lexical, semantic, weights, k=20, has_vector=embedded.__contains__)
    order = [key for key, _ in fused]
    assert sorted(order) == sorted(set(lexical) | set(semantic))  # nothing lost or added
    for rank, key in enumerate(lexical):
        if key not in embedded:
            assert order.index(key) == rank
    values = [value for _, value in fused]
    assert values == sorted(values, reverse=True)
    # embedded items keep their fused order among themselves
    full = [key for key, _ in rrf_fuse([lexical, semantic], weights, k=20)]
    assert [key for key in order if key in embedded] == [key for key in full if key in embedded]


def test_full_and_empty_coverage() -> None:
    lexical, semantic = [1, 2, 3, 4], [4, 3, 9]
    everything = {1, 2, 3, 4, 9}
    assert rrf_fuse_partial(lexical, semantic, (1.0, 1.0), k=20,
                            has_vector=everything.__contains__) == rrf_fuse(
        [lexical, semantic], (1.0, 1.0), k=20)
    nothing: set[int] = set()
    fused = rrf_fuse_partial(lexical, [], (1.0, 1.0), k=20, has_vector=nothing.__contains__)
    assert [key for key, _ in fused] == lexical


def test_exact_title_answer_is_not_pushed_down_by_recent_embedded_commits() -> None:
    """The issue's case: the answer (lexical #1) has no vector yet; recent commits that do
    rank high semantically. Plain RRF puts them above it; the rule keeps it first."""
    lexical = ["answer", "e1", "e2", "e3"]
    semantic = ["e3", "e2", "e1", "e4"]
    embedded = {"e1", "e2", "e3", "e4"}
    plain = [key for key, _ in rrf_fuse([lexical, semantic], (1.0, 1.0), k=20)]
    assert plain.index("answer") > 0
    fused = rrf_fuse_partial(lexical, semantic, (1.0, 1.0), k=20,
                             has_vector=embedded.__contains__)
    assert fused[0][0] == "answer"
