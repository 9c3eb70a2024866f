"""Search filters and the files-glob candidate set, shared by the keyword and vector rankers.

Every speed-up here changes cost, never the answer: a filter applied after ranking is applied
to a prefix of the unfiltered ranking, which is a prefix of the filtered ranking (the rankings
do not depend on the filters: BM25 statistics and cosine similarities are computed over the
whole index). When that prefix is too short to hold what the caller needs and the unfiltered
ranking went on, the filter is applied inside the ranking instead.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from gitquarry.retrieval.filters import compile_glob

Hits = list[tuple[int, float]]
#: A ranker's hit: a tuple whose first item is the commit id (the rest is the ranker's own).
H = TypeVar("H", bound=tuple[Any, ...])


@dataclass(frozen=True)
class Filters:
    """Candidate filters. Times are Unix seconds UTC, inclusive bounds."""

    files_glob: str | None = None
    after: int | None = None
    before: int | None = None
    #: None: every commit; "exclude": no merge commits; "only": merge commits only.
    merges: str | None = None

    @property
    def row_conditions(self) -> tuple[list[str], dict[str, int]]:
        """SQL conditions on ``git_commits`` columns (time bounds, merge filter) with their
        named parameters; empty when there are none."""
        conditions: list[str] = []
        params: dict[str, int] = {}
        if self.after is not None:
            conditions.append("timestamp >= :after")
            params["after"] = self.after
        if self.before is not None:
            conditions.append("timestamp <= :before")
            params["before"] = self.before
        if self.merges in ("exclude", "only"):
            conditions.append("is_merge = :is_merge")
            params["is_merge"] = 1 if self.merges == "only" else 0
        return conditions, params


#: A glob matching at least this share of all paths is "broad": it is applied after ranking.
BROAD_GLOB_PATH_FRACTION = 0.25
#: How many more hits a ranker returns when a filter is applied after it.
POST_FILTER_FACTOR = 2


def post_filter_prefix(wide: Sequence[H], asked: int, kept: set[int], need: int) -> list[H] | None:
    """``wide`` (the first ``asked`` hits of a ranking, or all of them when shorter) without
    the hits outside ``kept``, order kept; None when that leaves fewer than ``need`` while the
    ranking may go on past ``wide`` (the caller must then filter inside the ranking).

    Exact: every hit of the filtered ranking that precedes the last one returned is in
    ``wide``, so the result is a prefix of the filtered ranking."""
    hits = [hit for hit in wide if hit[0] in kept]
    if len(hits) >= need or len(wide) < asked:
        return hits
    return None


#: (database file, glob) → (state of ``paths``, ids of the matching paths)
_PATH_MATCHES: dict[tuple[str, str], tuple[tuple[int, ...], list[int]]] = {}
_PATH_MATCHES_MAX = 64


def _paths_state(conn: sqlite3.Connection, database: str) -> tuple[int, ...] | None:
    """What identifies the ``paths`` rows: the database file (device, inode, change time:
    a rebuilt index is a new file) and the table's row count and largest id (rows are only
    ever added). None for an in-memory or temporary database."""
    if not database:
        return None
    try:
        st = os.stat(database)
    except OSError:
        return None
    count, largest = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM paths").fetchone()
    return (st.st_dev, st.st_ino, st.st_ctime_ns, int(count), int(largest))


def matching_path_ids(conn: sqlite3.Connection, files_glob: str) -> tuple[list[int], int]:
    """The ids of the ``paths`` rows ``files_glob`` matches, and the number of paths.

    Matching every distinct path costs ~10 ms per 1,000 paths, so the answer is kept per
    database file and glob while ``_paths_state`` is unchanged.
    :raises InvalidGlobError: the pattern is malformed.
    """
    match = compile_glob(files_glob)
    database = str(conn.execute("PRAGMA database_list").fetchone()[2] or "")
    key = (database, files_glob)
    state = _paths_state(conn, database)
    cached = _PATH_MATCHES.get(key)
    if state is not None and cached is not None and cached[0] == state:
        return cached[1], state[3]
    rows = conn.execute("SELECT id, path FROM paths").fetchall()
    ids = [int(row[0]) for row in rows if match(row[1])]
    if state is not None:
        if len(_PATH_MATCHES) >= _PATH_MATCHES_MAX:
            _PATH_MATCHES.pop(next(iter(_PATH_MATCHES)))
        _PATH_MATCHES[key] = (state, ids)
    return ids, len(rows)


class GlobCandidates:
    """The commits that changed a path matching a glob, applied as cheaply as possible.

    The glob is matched against the distinct ``paths`` (not every commit) into
    ``temp.gq_paths``. A selective glob then materialises its commit ids in
    ``temp.gq_candidates``, which both rankers filter on. A broad glob (most paths match, e.g.
    ``src/**/*.py``) would make that set most of the index, so it is first applied *after*
    ranking: the ranker returns ``POST_FILTER_FACTOR`` times more hits over all commits and
    the non-matching ones are dropped (``post_filter_prefix``). If that leaves too few while
    more matches may exist, the ids are materialised and the ranker runs again.
    """

    def __init__(self, conn: sqlite3.Connection, files_glob: str) -> None:
        """:raises InvalidGlobError: the pattern is malformed."""
        path_ids, total = matching_path_ids(conn, files_glob)
        self.conn = conn
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS gq_candidates (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.gq_candidates")
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS gq_paths (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.gq_paths")
        conn.executemany("INSERT INTO temp.gq_paths (id) VALUES (?)", ((i,) for i in path_ids))
        self.broad = total > 0 and len(path_ids) >= BROAD_GLOB_PATH_FRACTION * total
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
        """The subset of commit ``ids`` that changed a matching path. (The ``+`` keeps SQLite
        from probing the index once per commit *and* matching path: 1,000x slower with a
        broad glob on git.git.)"""
        kept: set[int] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            kept.update(
                int(r[0])
                for r in self.conn.execute(
                    f"SELECT DISTINCT commit_id FROM commit_paths WHERE commit_id IN ({marks}) "
                    "AND +path_id IN (SELECT id FROM temp.gq_paths)",
                    part,
                )
            )
        return kept

    def post_filter(self, wide: Sequence[H], asked: int, limit: int, need: int) -> list[H] | None:
        """``post_filter_prefix`` of ``wide`` under the glob, at most ``limit`` hits."""
        hits = post_filter_prefix(wide, asked, self.keep([hit[0] for hit in wide]), need)
        return None if hits is None else hits[:limit]


def rank_with_glob(
    rank: Callable[[int, bool], list[H]], glob: GlobCandidates | None, limit: int, need: int
) -> list[H]:
    """Run ``rank(n, materialized)`` under ``glob``: a prefix of the glob-filtered ranking
    holding at least ``min(need, matches)`` and at most ``limit`` hits (``limit`` exactly when
    ``need == limit`` and that many commits match)."""
    if glob is None:
        return rank(limit, False)
    if not glob.materialized:
        asked = limit * POST_FILTER_FACTOR
        hits = glob.post_filter(rank(asked, False), asked, limit, need)
        if hits is not None:
            return hits
        glob.materialize()
    return rank(limit, True)
