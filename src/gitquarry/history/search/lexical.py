"""The keyword ranker of commit search: exact BM25 top-k from the ``commit_fts`` FTS5 index.

**The lexical ranking** (what every function here returns a prefix of): the commits that
pass the filters and hold at least one query word, in two groups, commits holding *every*
word first, then commits holding some; within a group by FTS5 ``bm25()`` with the column
weights ``BM25_WEIGHTS`` (more negative is better), ties by row id (older rows first). A word
matches in any column through ``retrieval.fts.word_expression`` (its own text or its
identifier / CJK / version expansion). ``bm25`` statistics (IDF, average length) are over the
whole index, so a commit's value does not depend on the filters.

Exact, not approximate: no word is dropped or restricted to some columns, however common.
The costs that remain are FTS5's: it scores every row that matches the expression and passes
the filters (about 1 µs per row), so a query made only of words found in most commits costs
time proportional to the index (docs/performance.md gives the figures).
"""

from __future__ import annotations

import sqlite3
from typing import Any, Literal, NamedTuple

from gitquarry.history.search import phrase_cache
from gitquarry.history.search.candidates import POST_FILTER_FACTOR, Filters, post_filter_prefix
from gitquarry.retrieval.filters import MAX_TIME, MIN_TIME
from gitquarry.retrieval.fts import QueryTerms, parse_query

#: BM25 column weights for (title, message, author, committer, files_changed, delta_truncated)
BM25_WEIGHTS = (4.0, 2.0, 1.0, 1.0, 2.0, 1.0)
#: A time window holding at least this share of all commits is applied after ranking. Inside
#: the query a window costs ~0.1 µs per commit in it (the id set) and ~0.2 µs per matching
#: commit (the membership test) but saves bm25 (~1 µs) for matches outside it; after ranking it
#: costs bm25 for every match. Break-even is near 70 %.
BROAD_TIME_FRACTION = 0.7


class LexicalHit(NamedTuple):
    """One commit of the lexical ranking."""

    id: int
    #: FTS5 ``bm25()`` with ``BM25_WEIGHTS`` (≤ 0; more negative is better)
    bm25: float
    #: whether the commit holds every query word (the ranking's first group)
    every: bool


def lexical_sql(
    *, has_glob: bool, has_after: bool, has_before: bool, has_merges: bool = False
) -> str:
    """The BM25 top-k query. Parameters: ``:match``, ``:after``, ``:before``, ``:is_merge``
    (with ``has_merges``), ``:limit``.

    Ranked inside the FTS5 table (no join per matching row: at 100k commits the join cost
    more than the ranking). Time bounds and the glob's candidates restrict ``rowid`` through
    subqueries that SQLite evaluates once into a set; the unary ``+`` keeps FTS5 from
    turning ``rowid IN (…)`` into one full-text lookup per listed id (100x slower).
    Ties on bm25 are broken by row id: deterministic.
    """
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    where = ["commit_fts MATCH :match"]
    bounds = []
    if has_after:
        bounds.append("timestamp >= :after")
    if has_before:
        bounds.append("timestamp <= :before")
    if has_merges:
        bounds.append("is_merge = :is_merge")
    if bounds:
        where.append(f"+rowid IN (SELECT id FROM git_commits WHERE {' AND '.join(bounds)})")
    if has_glob:
        where.append("+rowid IN (SELECT id FROM temp.gq_candidates)")
    return (
        f"SELECT rowid AS id, bm25(commit_fts, {weights}) AS bm25 FROM commit_fts "
        f"WHERE {' AND '.join(where)} ORDER BY bm25, rowid LIMIT :limit"
    )


def _terms(query: str | QueryTerms) -> QueryTerms:
    return query if isinstance(query, QueryTerms) else parse_query(query)


def _ranked(
    conn: sqlite3.Connection,
    terms: QueryTerms,
    operator: Literal["AND", "OR"],
    filters: Filters,
    limit: int,
    has_glob: bool,
) -> list[LexicalHit]:
    _, row_params = filters.row_conditions
    sql = lexical_sql(
        has_glob=has_glob, has_after=filters.after is not None,
        has_before=filters.before is not None, has_merges="is_merge" in row_params,
    )
    params: dict[str, Any] = {"match": terms.expression(operator), "limit": limit}
    params.update(row_params)
    every = operator == "AND" or len(terms.words) == 1
    return [LexicalHit(int(r[0]), float(r[1]), every) for r in conn.execute(sql, params)]


def rank_lexical(
    conn: sqlite3.Connection, query: str | QueryTerms, filters: Filters, limit: int, *,
    has_glob: bool,
) -> list[LexicalHit]:
    """The first ``limit`` hits of the lexical ranking, time bounds and
    (with ``has_glob``) ``temp.gq_candidates`` applied inside the query. [] when the query
    holds no searchable word.

    Commits holding every word come from an AND query; when they are fewer than ``limit``,
    an OR query asked for ``limit`` more than that fills the rest (the AND hits it returns
    again are skipped, so the fill is exactly the next commits of the second group).

    ``query``: the text or its ``parse_query`` terms (parsed once by the caller). A
    long-lived process answers from ``phrase_cache`` (the same hits, bit for bit).
    """
    terms = _terms(query)
    if not terms.words:
        return []
    if phrase_cache.enabled():
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        is_merge = filters.row_conditions[1].get("is_merge")
        cached = phrase_cache.rank(conn, terms, limit, weights, after=filters.after,
                                   before=filters.before, is_merge=is_merge, glob=has_glob)
        if cached is not None:
            return list(map(LexicalHit._make, cached))
    hits = _ranked(conn, terms, "AND", filters, limit, has_glob)
    if len(hits) < limit and len(terms.words) > 1:
        seen = {hit.id for hit in hits}
        for hit in _ranked(conn, terms, "OR", filters, limit + len(hits), has_glob):
            if hit[0] not in seen and len(hits) < limit:
                hits.append(hit)
    return hits


def _window_count(conn: sqlite3.Connection, filters: Filters) -> int:
    conditions, params = filters.row_conditions
    sql = f"SELECT count(*) FROM git_commits WHERE {' AND '.join(conditions)}"
    return int(conn.execute(sql, params).fetchone()[0])


def _in_window(conn: sqlite3.Connection, ids: list[int], filters: Filters) -> set[int]:
    """The commits of ``ids`` whose committer time lies within the filters' bounds (and
    that pass the merge filter)."""
    if not ids:
        return set()
    lo = filters.after if filters.after is not None else MIN_TIME
    hi = filters.before if filters.before is not None else MAX_TIME
    merge_sql, merge_params = "", []
    if filters.merges in ("exclude", "only"):
        merge_sql, merge_params = " AND is_merge = ?", [1 if filters.merges == "only" else 0]
    kept: set[int] = set()
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        kept.update(
            int(r[0])
            for r in conn.execute(
                f"SELECT id FROM git_commits WHERE id IN ({marks}) "
                f"AND timestamp BETWEEN ? AND ?{merge_sql}",
                [*part, lo, hi, *merge_params],
            )
        )
    return kept


def lexical_top_k(
    conn: sqlite3.Connection,
    query: str | QueryTerms,
    filters: Filters,
    limit: int,
    *,
    has_glob: bool,
    total_docs: int = 0,
    need: int | None = None,
) -> list[LexicalHit]:
    """A prefix of the lexical ranking under ``filters``: at most ``limit`` hits, and at
    least ``need`` (default ``limit``) whenever that many commits match.

    A broad time window or merge filter (together keeping at least ``BROAD_TIME_FRACTION`` of
    ``total_docs``) is applied after
    ranking ``POST_FILTER_FACTOR`` times more hits without it (``post_filter_prefix``: exact),
    falling back to the bounded query when fewer than ``need`` remain and more may exist.
    """
    need = limit if need is None else need
    query = _terms(query)
    windowed = bool(filters.row_conditions[0])
    if windowed and phrase_cache.enabled():
        # the kept terms apply any window at the cost of an unfiltered ranking
        return rank_lexical(conn, query, filters, limit, has_glob=has_glob)
    if windowed and total_docs and (
        _window_count(conn, filters) >= BROAD_TIME_FRACTION * total_docs
    ):
        asked = limit * POST_FILTER_FACTOR
        unbounded = Filters(files_glob=filters.files_glob)
        wide = rank_lexical(conn, query, unbounded, asked, has_glob=has_glob)
        kept = post_filter_prefix(
            wide, asked, _in_window(conn, [hit.id for hit in wide], filters), need
        )
        if kept is not None:
            return kept[:limit]
    return rank_lexical(conn, query, filters, limit, has_glob=has_glob)
