"""What ``CommitResult.score`` means in each mode: one small module, so a change of fusion
(``retrieval.fusion``) changes scores in one place.

Every score is in [0, 1], higher is better, and results are always sorted by it (descending):

- **lexical**: ``0.5 × [the commit holds every query word] + 0.5 × bm25 / bm25_max``, where
  ``bm25`` is the commit's BM25 (FTS5's value, sign flipped) and ``bm25_max`` the largest BM25
  any commit could reach for this query: every phrase of the query at saturated frequency,
  ``Σ idf(phrase) × (k1 + 1)`` with FTS5's ``k1 = 1.2`` and ``idf = ln((N − n + 0.5) /
  (n + 0.5))`` floored at 1e-6 (``n`` commits hold the phrase, ``N`` commits are indexed).
  The first half says "all words present" (the lexical ranking puts those commits first);
  the second how strongly they match: a commit mentioning the words once in a long diff
  scores near 0.5, one naming them in its title near 0.8. It does not depend on the other
  results.
- **semantic**: the cosine similarity of the query and commit embeddings, floored at 0.
- **hybrid**: the RRF fused score divided by the best possible fused score (rank 1 in every
  list), so 1.0 means "first in both rankings"; the per-ranker evidence (each ranker's rank,
  the lexical score above and the raw bm25, the cosine similarity) is in ``--explain`` /
  ``explain`` output.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence

from gitquarry.history.search import phrase_cache
from gitquarry.retrieval.fts import expression_phrases, fts5_string
from gitquarry.retrieval.fusion import normalise_rrf, rrf_normaliser

#: FTS5's BM25 constants (``fts5_aux.c``).
BM25_K1 = 1.2
#: FTS5 floors an IDF that would be zero or negative (a phrase in half the rows or more).
IDF_FLOOR = 1e-6


def fts5_idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a phrase found in ``hits`` of ``rows`` rows (the floor when ``hits`` is
    at least ``rows``, which a consistent snapshot never shows but a caller may pass)."""
    if hits >= rows:
        return IDF_FLOOR
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0 else IDF_FLOOR


def bm25_upper_bound(conn: sqlite3.Connection, query: str, rows: int) -> float:
    """``bm25_max`` for ``query`` over ``commit_fts`` holding ``rows`` commits (0.0 when the
    query has no phrase). One FTS5 count per distinct phrase (about a millisecond per
    100,000 commits that hold it); a phrase that appears twice in the expression counts twice,
    as it does in ``bm25()``."""
    phrases = expression_phrases(query)
    # a warm process keeps the phrases' rows (the same snapshot): no count per phrase
    counts: dict[str, int] = phrase_cache.phrase_counts(conn, phrases)
    total = 0.0
    for phrase in phrases:
        if phrase not in counts:
            counts[phrase] = int(
                conn.execute(
                    "SELECT count(*) FROM commit_fts WHERE commit_fts MATCH ?",
                    (fts5_string(phrase),),
                ).fetchone()[0]
            )
        total += fts5_idf(rows, counts[phrase]) * (BM25_K1 + 1)
    return total


def lexical_score(bm25: float, upper: float, every_word: bool) -> float:
    """The lexical score (module doc) of a commit with FTS5 value ``bm25`` (≤ 0)."""
    strength = 0.0 if upper <= 0 else min(1.0, max(0.0, -bm25 / upper))
    return 0.5 * float(every_word) + 0.5 * strength


def semantic_score(similarity: float) -> float:
    """The semantic score: cosine similarity floored at 0 (and capped at 1 against rounding)."""
    return min(1.0, max(0.0, similarity))


def fused_score(fused: float, weights: Sequence[float], k: int) -> float:
    """The hybrid score: RRF ``fused`` over the best possible fused score, in [0, 1]."""
    return normalise_rrf(fused, weights, k=k)


def result_scorer(
    mode: str, weights: Sequence[float], k: int
) -> Callable[[float, float | None, float | None], float]:
    """``result_score`` with ``mode``, ``weights`` and ``k`` fixed: ``(fused, lexical,
    similarity) -> score``, the hybrid normaliser computed once for a search's candidates."""
    if mode in ("lexical", "semantic"):
        return lambda fused, lexical, similarity: result_score(
            mode, fused, weights, k, lexical, similarity)
    normalise = rrf_normaliser(weights, k)
    return lambda fused, lexical, similarity: normalise(fused)


def result_score(
    mode: str,
    fused: float,
    weights: Sequence[float],
    k: int,
    lexical: float | None,
    similarity: float | None,
) -> float:
    """``CommitResult.score`` in ``mode`` (the effective mode) from the commit's fused RRF
    value and its evidence: its ``lexical_score`` and cosine ``similarity`` (None when that
    ranker did not return it)."""
    if mode == "lexical":
        return lexical if lexical is not None else 0.0
    if mode == "semantic":
        return semantic_score(similarity) if similarity is not None else 0.0
    return fused_score(fused, weights, k)
