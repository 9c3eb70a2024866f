"""Reciprocal rank fusion and score normalisation."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def rrf_fuse(
    rankings: Sequence[Sequence[K]], weights: Sequence[float] | None = None, k: int = 60
) -> list[tuple[K, float]]:
    """Fuse ranked lists with reciprocal rank fusion: score(d) = Σ w_i / (k + rank_i(d)).

    ``rankings`` are lists of ids, best first (rank 1 = first). Returns (id, fused score)
    sorted by score descending; ties keep the order of first appearance across the lists
    (list 0 first), so the result is deterministic.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[K, float] = {}
    first_seen: dict[K, int] = {}
    order = 0
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            if key not in first_seen:
                first_seen[key] = order
                order += 1
    return sorted(scores.items(), key=lambda kv: (-kv[1], first_seen[kv[0]]))


def rrf_max_score(weights: Sequence[float], k: int = 60) -> float:
    """The best possible fused score: rank 1 in every list."""
    return sum(w / (k + 1) for w in weights)


def normalise_rrf(score: float, weights: Sequence[float], k: int = 60) -> float:
    """Map a fused score to [0, 1] by dividing by the best possible score."""
    best = rrf_max_score(weights, k)
    return 0.0 if best <= 0 else max(0.0, min(1.0, score / best))
