"""What the "hybrid never below lexical" rule measured in issue 22 (``LexicalGuard(keep=5,
slot=2)``, off by default) guarantees, on constructed rankings: hybrid's top 10 always holds
lexical's top 5, so for any set of relevant commits hybrid Recall@10 ≥ lexical Recall@5,
whatever the semantic ranking and the RRF weights. (It cannot promise Recall@10 ≥ lexical
Recall@10 per query: that would need lexical's top 10 unchanged.) And without the guard the
same constructed case loses a lexical top-5 hit, which is why the rule exists."""

from __future__ import annotations

import random

import pytest

from gitquarry.retrieval.fusion import LexicalGuard, guard_lexical, rrf_fuse


def _recall(ranking: list[str], relevant: set[str], k: int) -> float:
    return len(relevant & set(ranking[:k])) / len(relevant)


@pytest.mark.parametrize("seed", range(200))
def test_guarded_hybrid_top10_holds_lexical_top5(seed: int) -> None:
    rng = random.Random(seed)
    pool = [f"c{n}" for n in range(rng.randint(1, 60))]
    lexical = rng.sample(pool, rng.randint(0, len(pool)))
    semantic = rng.sample(pool, rng.randint(0, len(pool)))
    weights = [1.0, rng.choice([0.5, 1.0, 2.0, 4.0])]
    fused = rrf_fuse([lexical, semantic], weights, k=rng.choice([10, 20, 60]))
    hybrid = [key for key, _ in guard_lexical(fused, lexical, semantic, LexicalGuard(5, 2, 0))]
    assert set(lexical[:5]) <= set(hybrid[:10])
    relevant = set(rng.sample(pool, rng.randint(1, len(pool))))
    assert _recall(hybrid, relevant, 10) >= _recall(lexical, relevant, 5)


def test_without_the_guard_a_vector_blind_lexical_hit_drops_out() -> None:
    """Lexical ranks the answer 4th; the vectors do not hold it; with prose weights (1, 2)
    ten semantic-only commits outrank it. The guard puts it back at rank 8 or better."""
    lexical = ["l1", "l2", "l3", "answer", "l5"]
    semantic = [f"s{n}" for n in range(1, 31)]
    fused = rrf_fuse([lexical, semantic], [1.0, 2.0], k=20)
    assert "answer" not in [key for key, _ in fused[:10]]
    guarded = [key for key, _ in guard_lexical(fused, lexical, semantic, LexicalGuard(5, 2, 0))]
    assert guarded.index("answer") + 1 <= 8
