"""The lexical guard of hybrid fusion (issue 22): a strong keyword hit the vectors cannot see
keeps a place near the top; nothing else changes. Checked against a brute-force reference on
seeded random rankings, plus the issue's case (lexical #1, semantic blind, pushed out of the
top 10 by RRF)."""

from __future__ import annotations

import random

import pytest

from gitquarry.retrieval.fusion import LexicalGuard, guard_lexical, rrf_fuse


def _case(rng: random.Random) -> tuple[list[str], list[str]]:
    pool = [f"c{n}" for n in range(rng.randint(1, 40))]
    lexical = rng.sample(pool, rng.randint(0, len(pool)))
    semantic = rng.sample(pool, rng.randint(0, len(pool)))
    return lexical, semantic


@pytest.mark.parametrize("seed", range(300))
def test_guard_matches_reference_and_only_moves_lexical_hits_up(seed: int) -> None:
    rng = random.Random(seed)
    lexical, semantic = _case(rng)
    guard = LexicalGuard(rng.randint(0, 5), rng.randint(1, 4), rng.choice([0, 0, 5, 20]))
    fused = rrf_fuse([lexical, semantic], [1.0, rng.choice([0.5, 1.0, 2.0])], k=20)
    out = guard_lexical(fused, lexical, semantic, guard)
    keys = [k for k, _ in out]
    assert sorted(keys) == sorted(k for k, _ in fused)  # nothing lost, nothing added
    values = [v for _, v in out]
    assert values == sorted(values, reverse=True)  # still sorted by value
    if guard.keep == 0:
        assert out == fused
    before = {k: n for n, (k, _) in enumerate(fused, start=1)}
    after = {k: n for n, k in enumerate(keys, start=1)}
    sem_rank = {k: n for n, k in enumerate(semantic, start=1)}
    guarded = {}
    for rank, key in enumerate(lexical[: guard.keep], start=1):
        if key not in guarded and sem_rank.get(key, len(semantic) + 1) > guard.blind_rank:
            guarded[key] = guard.slot * rank
    for key, deadline in guarded.items():
        assert after[key] <= deadline  # at or above its slot, whatever fusion did
        assert after[key] <= max(deadline, before[key])
    # the rest keep their relative order, and move down by at most the guarded items
    others = [k for k in keys if k not in guarded]
    assert others == sorted(others, key=before.__getitem__)
    for key in others:
        assert after[key] <= before[key] + len(guarded)
    if not guarded:
        assert out == fused


def test_the_issue_case_a_blind_lexical_first_stays_in_the_top_ten() -> None:
    semantic = [f"s{n}" for n in range(400)]
    lexical = ["answer", *semantic[200:260]]  # the vectors never rank the answer
    fused = rrf_fuse([lexical, semantic], [1.0, 2.0], k=20)
    assert [k for k, _ in fused].index("answer") >= 10  # plain RRF pushes it out
    out = guard_lexical(fused, lexical, semantic, LexicalGuard(3, 3, 0))
    assert [k for k, _ in out].index("answer") < 3
