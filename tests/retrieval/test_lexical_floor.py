"""The lexical floor of hybrid fusion (issue 22, "hybrid is never below lexical alone"): the
first lexical hits that hold every query word stay in the fused top 10, whatever the vectors
say; nothing else moves down by more than the number of ids promised. Property checks on random
rankings (the promise, against a brute-force recount), and the rule's edge cases."""

from __future__ import annotations

import random

import pytest

from gitquarry.retrieval.fusion import LEXICAL_FLOOR, floor_lexical, rrf_fuse, rrf_fuse_partial


def _random_case(seed: int) -> tuple[list[tuple[str, float]], list[str], list[str], int]:
    rng = random.Random(seed)
    pool = [f"c{n}" for n in range(rng.randint(1, 80))]
    lexical = rng.sample(pool, rng.randint(0, len(pool)))
    semantic = rng.sample(pool, rng.randint(0, len(pool)))
    weights = [1.0, rng.choice([0.5, 1.0, 2.0, 4.0])]
    fused = rrf_fuse([lexical, semantic], weights, k=rng.choice([10, 20, 60]))
    keep = rng.randint(0, 10)
    # the lexical hits holding every query word: any subset of the first ``keep``
    every = [key for key in lexical[:keep] if rng.random() < 0.6]
    return fused, lexical, every, rng.choice([1, 3, 5, 10])


@pytest.mark.parametrize("seed", range(300))
def test_floor_keeps_its_promise_and_moves_nothing_else_far(seed: int) -> None:
    fused, _lexical, every, window = _random_case(seed)
    out = floor_lexical(fused, every, window)
    order, before = [k for k, _ in out], [k for k, _ in fused]
    assert sorted(order) == sorted(before)  # the id set never changes
    values = [v for _, v in out]
    assert values == [v for _, v in fused]  # values stay with the positions
    assert values == sorted(values, reverse=True)
    promised = every[:window]
    assert set(promised) <= set(order[:window])  # the promise
    placed = [k for k in promised if k not in before[:window]]
    for key in before:  # nobody moves down by more than the number of promised ids
        assert order.index(key) <= before.index(key) + len(promised)
    for key in before[window:]:  # past the window, by at most the number placed
        assert order.index(key) <= before.index(key) + len(placed)
    unprotected = [k for k in order if k not in set(promised)]
    assert unprotected == [k for k in before if k not in set(promised)]  # their order kept
    if not placed:
        assert out == fused
    # what the promise means for recall, recounted by brute force: any relevant set's
    # hits among the promised ids are all in the fused top ``window``
    rng = random.Random(seed + 1000)
    relevant = set(rng.sample(before, rng.randint(0, len(before))))
    assert len(relevant & set(order[:window])) >= len(relevant & set(promised))


def test_a_full_match_the_vectors_do_not_see_comes_back_into_the_top_ten() -> None:
    """Lexical ranks a commit holding every word first; the vectors rank 400 others and not
    it; prose weights (1, 2) put it below semantic-only commits. The floor puts it 10th and
    shifts only the 10th to 11th."""
    semantic = [f"s{n}" for n in range(400)]
    lexical = ["answer", *semantic[200:260]]
    fused = rrf_fuse([lexical, semantic], [1.0, 2.0], k=20)
    before = [k for k, _ in fused]
    assert before.index("answer") >= 10
    out = [k for k, _ in floor_lexical(fused, ["answer"], 10)]
    assert out.index("answer") == 9
    assert out[:9] == before[:9] and out[10] == before[9]


def test_nothing_to_place_and_edge_cases() -> None:
    fused = rrf_fuse([["a", "b", "c"], ["c", "b", "a"]], [1.0, 1.0], k=20)
    assert floor_lexical(fused, ["a", "c"], 10) == fused  # already in the window
    assert floor_lexical(fused, ["zz"], 10) == fused  # an id not ranked is ignored
    assert floor_lexical(fused, [], 2) == fused
    assert floor_lexical([], ["a"], 10) == []
    assert floor_lexical(fused, ["c"], 0) == fused  # an empty window keeps nothing
    with pytest.raises(ValueError, match="window"):
        floor_lexical(fused, ["a"], -1)
    # more protected ids than the window holds: the first ``window`` of them
    ranked = [(f"x{n}", 1.0 / (n + 1)) for n in range(6)]
    out = [k for k, _ in floor_lexical(ranked, ["x5", "x4", "x3"], 2)]
    assert out[:2] == ["x5", "x4"]


def test_the_shipped_floor() -> None:
    assert (LEXICAL_FLOOR.keep, LEXICAL_FLOOR.window) == (5, 10)


@pytest.mark.parametrize("seed", range(300))
def test_floor_over_partial_fusion_keeps_both_promises(seed: int) -> None:
    """As hybrid search composes them while vectors are partial: ``rrf_fuse_partial`` keeps
    each lexical hit without a vector at or above its lexical rank; the floor then keeps the
    first full matches in the top 10 and moves none of those hits down (``pinned``)."""
    rng = random.Random(seed)
    pool = [f"c{n}" for n in range(rng.randint(1, 80))]
    with_vector = {key for key in pool if rng.random() < rng.choice([0.2, 0.5, 0.9])}
    lexical = rng.sample(pool, rng.randint(0, len(pool)))
    semantic = [key for key in rng.sample(pool, len(pool)) if key in with_vector]
    fused = rrf_fuse_partial(lexical, semantic, [1.0, rng.choice([0.5, 1.0, 2.0, 4.0])],
                             k=rng.choice([10, 20, 60]), has_vector=with_vector.__contains__)
    every = [key for key in lexical[:5] if rng.random() < 0.6]
    pinned = [key for key in lexical if key not in with_vector]
    out = floor_lexical(fused, every, 10, pinned=pinned)
    order, before = [k for k, _ in out], [k for k, _ in fused]
    assert sorted(order) == sorted(before)
    assert [v for _, v in out] == [v for _, v in fused]
    for key in pinned:  # the partial promise survives: never below its lexical rank
        assert order.index(key) <= before.index(key)
        assert order.index(key) <= lexical.index(key)
    assert set(every) <= set(order[:10])  # the floor's promise
    free = [k for k in before if k not in set(every) and k not in set(pinned)]
    assert [k for k in order if k in set(free)] == free  # the others keep their order


def test_a_pinned_item_is_never_the_one_displaced() -> None:
    ranked = [(f"x{n}", 1.0 / (n + 1)) for n in range(12)]
    out = [k for k, _ in floor_lexical(ranked, ["x11"], 10, pinned=["x9", "x10"])]
    assert out.index("x11") <= 9
    assert out.index("x9") <= 9
    assert out.index("x10") <= 10
    assert out.index("x8") == 11  # the lowest free item of the window steps past the pins
    # a window full of pinned and protected ids has no room: nothing is placed
    full = floor_lexical(ranked, ["x11"], 3, pinned=["x0", "x1", "x2"])
    assert full == ranked
