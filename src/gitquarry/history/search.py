"""``search_git_history``: the one search function behind the CLI and MCP surfaces.

Pipeline: validate → candidate filters (files glob, time range) → BM25 top-k from FTS5 →
(semantic top-k, when vectors exist) → RRF → normalise → hydrate. Filters are part of the
ranking queries themselves, so ``top_n`` is filled whenever enough matching commits exist.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitquarry.errors import InvalidArgumentError
from gitquarry.history.models import CommitResult, GitSearchResponse, Warning_
from gitquarry.retrieval.filters import MAX_TIME, MIN_TIME, check_time_range, compile_glob
from gitquarry.retrieval.fts import (
    document_fractions,
    fts5_match_expression,
    query_words,
    tiered_match_expression,
)
from gitquarry.retrieval.fusion import normalise_rrf, rrf_fuse
from gitquarry.store import Store
from gitquarry.store.capabilities import require_commit_fts
from gitquarry.store.connection import translate_sqlite_error

log = logging.getLogger(__name__)

#: BM25 column weights for (title, message, author, committer, files_changed, delta_truncated)
BM25_WEIGHTS = (4.0, 2.0, 1.0, 1.0, 2.0, 1.0)
TOP_N_MAX = 100
#: how many candidates each ranker contributes to fusion, relative to top_n
CANDIDATE_FACTOR = 4
CANDIDATE_MIN = 50


@dataclass(frozen=True)
class Filters:
    """Candidate filters. Times are Unix seconds UTC, inclusive bounds."""

    files_glob: str | None = None
    after: int | None = None
    before: int | None = None


def lexical_sql(*, has_glob: bool, has_after: bool, has_before: bool) -> str:
    """The BM25 top-k query. Parameters: ``:match``, ``:after``, ``:before``, ``:limit``.

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
    if bounds:
        where.append(f"+rowid IN (SELECT id FROM git_commits WHERE {' AND '.join(bounds)})")
    if has_glob:
        where.append("+rowid IN (SELECT id FROM temp.gq_candidates)")
    return (
        f"SELECT rowid AS id, bm25(commit_fts, {weights}) AS bm25 FROM commit_fts "
        f"WHERE {' AND '.join(where)} ORDER BY bm25, rowid LIMIT :limit"
    )


#: A glob matching at least this share of all paths is "broad": it is applied after ranking.
BROAD_GLOB_PATH_FRACTION = 0.25
#: How many more hits a ranker returns when a broad glob is applied after it.
POST_FILTER_FACTOR = 2

Hits = list[tuple[int, float]]


class GlobCandidates:
    """The commits that changed a path matching a glob, applied as cheaply as possible.

    The glob is matched against the distinct ``paths`` (not every commit) into
    ``temp.gq_paths``. A selective glob then materialises its commit ids in
    ``temp.gq_candidates``, which both rankers filter on. A broad glob (most paths match, e.g.
    ``src/**/*.py``) would make that set most of the index, so it is first applied *after*
    ranking: the ranker returns ``POST_FILTER_FACTOR`` times more hits over all commits and
    the non-matching ones are dropped. If that leaves too few while more matches may exist,
    the ids are materialised and the ranker runs again, so ``top_n`` is still filled whenever
    enough matching commits exist.
    """

    def __init__(self, conn: sqlite3.Connection, files_glob: str) -> None:
        """:raises InvalidGlobError: the pattern is malformed."""
        match = compile_glob(files_glob)
        rows = conn.execute("SELECT id, path FROM paths").fetchall()
        path_ids = [row[0] for row in rows if match(row[1])]
        self.conn = conn
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS gq_candidates (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.gq_candidates")
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS gq_paths (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.gq_paths")
        conn.executemany("INSERT INTO temp.gq_paths (id) VALUES (?)", ((i,) for i in path_ids))
        self.broad = bool(rows) and len(path_ids) >= BROAD_GLOB_PATH_FRACTION * len(rows)
        self.materialized = False
        if not self.broad:
            self.materialize()

    def materialize(self) -> int:
        """Fill ``temp.gq_candidates``; returns the number of candidate commits."""
        if not self.materialized:
            self.conn.execute(
                "INSERT OR IGNORE INTO temp.gq_candidates (id) SELECT commit_id "
                "FROM commit_paths WHERE path_id IN (SELECT id FROM temp.gq_paths)"
            )
            self.materialized = True
        return int(self.conn.execute("SELECT count(*) FROM temp.gq_candidates").fetchone()[0])

    def keep(self, ids: list[int]) -> set[int]:
        """The subset of commit ``ids`` that changed a matching path."""
        kept: set[int] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            kept.update(
                int(r[0])
                for r in self.conn.execute(
                    f"SELECT DISTINCT commit_id FROM commit_paths WHERE commit_id IN ({marks}) "
                    "AND path_id IN (SELECT id FROM temp.gq_paths)",
                    part,
                )
            )
        return kept

    def post_filter(self, wide: Hits, asked: int, limit: int, need: int) -> Hits | None:
        """``wide`` (ranked over all commits, ``asked`` requested) without non-matching commits,
        at most ``limit``; None when fewer than ``need`` remain and the full match set was not
        seen (the caller then reruns on materialised candidates)."""
        kept = self.keep([cid for cid, _ in wide])
        hits = [hit for hit in wide if hit[0] in kept]
        if len(hits) >= need or len(wide) < asked:
            return hits[:limit]
        return None


#: A time window holding at least this share of all commits is applied after ranking.
BROAD_TIME_FRACTION = 0.25


def _time_window_count(conn: sqlite3.Connection, filters: Filters) -> int:
    bounds, params = [], []
    if filters.after is not None:
        bounds.append("timestamp >= ?")
        params.append(filters.after)
    if filters.before is not None:
        bounds.append("timestamp <= ?")
        params.append(filters.before)
    sql = f"SELECT count(*) FROM git_commits WHERE {' AND '.join(bounds)}"
    return int(conn.execute(sql, params).fetchone()[0])


def _within_window(conn: sqlite3.Connection, hits: Hits, filters: Filters) -> Hits:
    """``hits`` whose committer time lies within the filters' bounds, order kept."""
    if not hits:
        return []
    ids = [cid for cid, _ in hits]
    marks = ",".join("?" * len(ids))
    stamps = dict(
        conn.execute(f"SELECT id, timestamp FROM git_commits WHERE id IN ({marks})", ids)
    )
    lo = filters.after if filters.after is not None else MIN_TIME
    hi = filters.before if filters.before is not None else MAX_TIME
    return [hit for hit in hits if lo <= stamps.get(hit[0], lo - 1) <= hi]


#: A word in more than this share of all commits is searched in titles, messages and file
#: names only, not in diffs: it says little about a commit (BM25 gives it a low IDF) but
#: matching it in every diff would make BM25 score most of the index.
COMMON_WORD_DF_FRACTION = 0.1
COMMON_WORD_COLUMNS = ("title", "message", "files_changed")
#: Below this many commits every word matches everywhere (ranking cost is small anyway).
COMMON_WORD_MIN_DOCS = 2000


def lexical_top_k(
    conn: sqlite3.Connection,
    query: str,
    filters: Filters,
    limit: int,
    *,
    has_glob: bool,
    total_docs: int = 0,
    need: int | None = None,
) -> list[tuple[int, float]]:
    """BM25 top-``limit`` as (commit id, bm25) best first; [] when nothing is searchable.

    Commits holding every word come first (an AND query, ranked by BM25); when they are
    fewer than ``limit``, commits holding some of the words follow (an OR query, ranked by
    BM25). In an index of at least ``COMMON_WORD_MIN_DOCS`` commits, a word found in more
    than half of them is dropped (FTS5's BM25 clamps its IDF to ~0), unless every word is;
    one found in more than ``COMMON_WORD_DF_FRACTION`` only matches in titles, messages and
    file names (``COMMON_WORD_COLUMNS``).

    A broad time window (at least ``BROAD_TIME_FRACTION`` of all commits) is applied after
    ranking ``POST_FILTER_FACTOR`` times more hits, like a broad glob, falling back to the
    filtered query when fewer than ``need`` (default ``limit``) remain and more may exist.
    """
    if (filters.after is not None or filters.before is not None) and total_docs:
        inside = _time_window_count(conn, filters)
        if inside >= BROAD_TIME_FRACTION * total_docs:
            unbounded = Filters(files_glob=filters.files_glob)
            asked = limit * POST_FILTER_FACTOR
            wide = lexical_top_k(
                conn, query, unbounded, asked, has_glob=has_glob, total_docs=total_docs
            )
            kept = _within_window(conn, wide, filters)
            if len(kept) >= (need or limit) or len(wide) < asked:
                return kept[:limit]
    words = query_words(query)
    if not words:
        return []
    common: set[str] = set()
    if total_docs >= COMMON_WORD_MIN_DOCS:
        share = document_fractions(conn, "commit_fts", words, total_docs)
        # BM25 gives a word in over half of all commits no weight: drop it (unless all are).
        informative = [w for w in words if share[w] <= 0.5]
        words = informative or words
        common = {w for w in words if share[w] > COMMON_WORD_DF_FRACTION}
    every = tiered_match_expression(
        words, "AND", common=common, common_columns=COMMON_WORD_COLUMNS
    )
    sql = lexical_sql(
        has_glob=has_glob,
        has_after=filters.after is not None,
        has_before=filters.before is not None,
    )
    params: dict[str, Any] = {"match": every, "limit": limit}
    if filters.after is not None:
        params["after"] = filters.after
    if filters.before is not None:
        params["before"] = filters.before
    hits = [(int(r[0]), float(r[1])) for r in conn.execute(sql, params)]
    if len(hits) < limit and len(words) > 1:
        seen = {cid for cid, _ in hits}
        some = tiered_match_expression(
            words, "OR", common=common, common_columns=COMMON_WORD_COLUMNS
        )
        params.update(match=some, limit=limit + len(hits))
        for r in conn.execute(sql, params):
            if int(r[0]) not in seen and len(hits) < limit:
                hits.append((int(r[0]), float(r[1])))
    return hits


def hydrate(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    """Full rows for ``ids`` plus ``repo_path`` (the first repository, by path, holding it)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT c.*, (SELECT r.path FROM repo_commits rc JOIN repositories r "
        "ON r.id = rc.repo_id WHERE rc.commit_id = c.id ORDER BY r.path LIMIT 1) AS repo_path "
        f"FROM git_commits c WHERE c.id IN ({marks})",
        ids,
    ).fetchall()
    return {int(r["id"]): r for r in rows}


def _result(row: sqlite3.Row, score: float, **extra: Any) -> CommitResult:
    return CommitResult(
        hash=row["hash"],
        title=row["title"],
        author=row["author"],
        committer=row["committer"],
        timestamp=int(row["timestamp"]),
        message=row["message"],
        files_changed=json.loads(row["files_changed"]),
        delta_truncated=row["delta_truncated"],
        score=round(score, 6),
        repo_path=row["repo_path"] or "",
        author_time=int(row["author_time"]),
        parents=row["parents"].split(),
        is_merge=bool(row["is_merge"]),
        **extra,
    )


def _index_warnings(conn: sqlite3.Connection, total: int) -> list[Warning_]:
    """Facts about the index that make any answer incomplete."""
    out: list[Warning_] = []
    if total == 0:
        out.append(
            Warning_(
                code="empty_index",
                message="the index holds no commits; run `gitquarry index` on the workspace",
            )
        )
    unfinished = int(
        conn.execute("SELECT count(*) FROM repositories WHERE run_in_progress = 1").fetchone()[0]
    )
    if unfinished:
        out.append(
            Warning_(
                code="indexing_incomplete",
                message=(
                    f"{unfinished} {'repository is' if unfinished == 1 else 'repositories are'} "
                    "being indexed, or a run was interrupted: results may be incomplete "
                    "(`gitquarry index` finishes the work)"
                ),
            )
        )
    return out


def _rank_with_glob(
    rank: Callable[[int, bool], Hits], glob: GlobCandidates | None, limit: int, need: int
) -> Hits:
    """Run ``rank(n, materialized)`` under ``glob`` (see ``GlobCandidates``): up to ``limit``
    hits, and at least ``need`` (the caller's top_n) whenever that many commits match."""
    if glob is None:
        return rank(limit, False)
    if not glob.materialized:
        asked = limit * POST_FILTER_FACTOR
        hits = glob.post_filter(rank(asked, False), asked, limit, need)
        if hits is not None:
            return hits
        glob.materialize()
    return rank(limit, True)


def validate_top_n(top_n: int) -> None:
    if isinstance(top_n, bool) or not isinstance(top_n, int) or not 1 <= top_n <= TOP_N_MAX:
        raise InvalidArgumentError(
            "top_n", f"must be an integer from 1 to {TOP_N_MAX}, got {top_n!r}"
        )


def validate_request(
    *,
    top_n: int,
    mode: str,
    files_glob: str | None,
    after: int | None,
    before: int | None,
) -> None:
    """Check search arguments before any work (the index is not opened).

    :raises InvalidArgumentError: top_n outside 1..100, unknown mode, after later than before.
    :raises InvalidGlobError: ``files_glob`` is malformed.
    """
    validate_top_n(top_n)
    if mode not in ("lexical", "semantic", "hybrid"):
        raise InvalidArgumentError("mode", f"must be lexical, semantic or hybrid, got {mode!r}")
    check_time_range(after, before)
    if files_glob:
        compile_glob(files_glob)


def search_git_history(
    store: Store,
    query: str,
    *,
    top_n: int = 5,
    files_glob: str | None = None,
    after: int | None = None,
    before: int | None = None,
    mode: str = "lexical",
    semantic: Any | None = None,
    lexical_weight: float = 1.0,
    semantic_weight: float = 1.0,
    rrf_k: int = 60,
) -> GitSearchResponse:
    """Search indexed commits.

    ``mode`` is "lexical", "semantic" or "hybrid". ``semantic`` is a ranker from
    ``gitquarry.history.semantic`` (or None: hybrid/semantic then degrade to lexical with a
    warning). ``after``/``before`` are inclusive Unix-second bounds on the committer time.
    Results are sorted by ``score`` descending, ties broken deterministically.

    :raises InvalidArgumentError: top_n outside 1..100, unknown mode, after > before.
    :raises InvalidGlobError: ``files_glob`` is malformed.
    :raises IndexCorruptError: the database is unreadable.
    """
    validate_request(top_n=top_n, mode=mode, files_glob=files_glob, after=after, before=before)
    if files_glob is not None and files_glob == "":
        files_glob = None
    filters = Filters(files_glob=files_glob, after=after, before=before)
    conn = store.conn
    warnings: list[Warning_] = []
    try:
        require_commit_fts(store)
        total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
        warnings.extend(_index_warnings(conn, total))
        if not query or not query.strip():
            log.warning("empty query")
            warnings.append(Warning_(code="empty_query", message="the query is empty"))
            return GitSearchResponse(
                results=[], query=query, total_commits_indexed=total, requested_mode=mode,
                effective_mode="lexical", warnings=warnings,
            )
        glob: GlobCandidates | None = None
        if files_glob is not None:
            conn.execute("BEGIN")
            glob = GlobCandidates(conn, files_glob)
        try:
            limit = max(top_n * CANDIDATE_FACTOR, CANDIDATE_MIN)

            def lexical_rank(n: int, materialized: bool) -> Hits:
                return lexical_top_k(
                    conn, query, filters, n, has_glob=materialized, total_docs=total,
                    need=top_n,
                )

            pending: Callable[[], Any] | None = None
            semantic_post = glob is not None and not glob.materialized
            semantic_asked = limit * POST_FILTER_FACTOR if semantic_post else limit
            if mode != "lexical" and semantic is not None:
                # SQLite reads now; the query embedding and the matrix product run on a worker
                # thread while the keyword ranking below runs here.
                pending = semantic.start(
                    conn, query, filters, semantic_asked, has_glob=glob is not None
                    and not semantic_post
                )
            lexical: Hits = (
                _rank_with_glob(lexical_rank, glob, limit, top_n) if mode != "semantic" else []
            )
            if not fts5_match_expression(query) and mode == "lexical":
                warnings.append(
                    Warning_(
                        code="no_searchable_terms",
                        message=f"the query {query!r} holds no searchable word",
                    )
                )
            semantic_hits: list[tuple[int, float]] = []
            effective = "lexical"
            embedded_fraction = 0.0
            if mode in ("semantic", "hybrid"):
                if semantic is None:
                    warnings.append(
                        Warning_(
                            code="semantic_unavailable",
                            message="no embedding model is configured; used lexical search",
                        )
                    )
                else:
                    assert pending is not None
                    outcome = pending()
                    semantic_hits = list(outcome.hits)
                    if semantic_post and glob is not None:
                        kept = glob.post_filter(semantic_hits, semantic_asked, limit, top_n)
                        if kept is None:  # too few matching: rank over the materialised set
                            glob.materialize()
                            outcome = semantic.top_k(conn, query, filters, limit, has_glob=True)
                            kept = list(outcome.hits)
                        semantic_hits = kept
                    embedded_fraction = outcome.embedded_fraction
                    if total:  # an empty index already says so once
                        warnings.extend(outcome.warnings)
                    effective = outcome.effective_mode(mode)
            if effective == "lexical" and mode == "semantic":  # degraded: rank by keywords
                lexical = _rank_with_glob(lexical_rank, glob, limit, top_n)
            if effective == "semantic":
                rankings: list[list[int]] = [[i for i, _ in semantic_hits]]
                weights = [semantic_weight]
            elif effective == "hybrid":
                rankings = [[i for i, _ in lexical], [i for i, _ in semantic_hits]]
                weights = [lexical_weight, semantic_weight]
            else:
                rankings = [[i for i, _ in lexical]]
                weights = [lexical_weight]
            fused = rrf_fuse(rankings, weights, k=rrf_k)[:top_n]
            rows = hydrate(conn, [i for i, _ in fused])
            lex_rank = {cid: n for n, (cid, _) in enumerate(lexical, start=1)}
            lex_score = dict(lexical)
            sem_rank = {cid: n for n, (cid, _) in enumerate(semantic_hits, start=1)}
            sem_score = dict(semantic_hits)
            results = [
                _result(
                    rows[cid],
                    normalise_rrf(score, weights, k=rrf_k),
                    lexical_rank=lex_rank.get(cid),
                    semantic_rank=sem_rank.get(cid),
                    bm25=lex_score.get(cid),
                    similarity=sem_score.get(cid),
                )
                for cid, score in fused
                if cid in rows
            ]
        finally:
            if glob is not None:
                conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        raise translate_sqlite_error(store.path, exc) from exc
    return GitSearchResponse(
        results=results,
        query=query,
        total_commits_indexed=total,
        requested_mode=mode,
        effective_mode=effective,
        embedded_fraction=embedded_fraction,
        warnings=warnings,
    )
