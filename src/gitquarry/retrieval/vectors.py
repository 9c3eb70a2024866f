"""Exact cosine top-k over a matrix of L2-normalised float32 rows."""

from __future__ import annotations

import numpy as np


def cosine_top_k(
    matrix: np.ndarray, query: np.ndarray, k: int, *, mask: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """The ``k`` rows of ``matrix`` (n, d) most similar to ``query`` (d,), as (row index,
    cosine similarity), best first, ties by row index. Rows and ``query`` must be unit
    vectors, so the dot product is the cosine. ``mask`` (bool, n): rows where it is False
    never enter the result. Exact: one matrix-vector product, no copy of the matrix.
    """
    if k <= 0 or len(matrix) == 0:
        return []
    sims = matrix @ np.asarray(query, dtype=np.float32)
    if mask is not None:
        candidates = int(mask.sum())
        sims = np.where(mask, sims, -np.inf)
    else:
        candidates = len(sims)
    if candidates == 0:
        return []
    k = min(k, candidates)
    top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
    kept = [int(j) for j in top.tolist() if np.isfinite(sims[j])]
    kept.sort(key=lambda j: (-float(sims[j]), j))
    return [(j, float(sims[j])) for j in kept]
