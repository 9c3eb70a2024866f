"""When matching commits were made: counts per time bin, for the web page's histogram.

The set counted is the keyword ranking's match set under the same filters as a search
(``history.lexical``: the same FTS5 expression from ``retrieval.fts``, the same files-glob
candidates and inclusive committer-time bounds): the commits holding *every* query word, or,
when none does, those holding *any* (``basis`` says which). Semantic similarity has no match
set (every commit has a score), so semantic-only searches have no timeline.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from gitquarry.history.search.candidates import GlobCandidates
from gitquarry.retrieval.fts import fts5_match_expression
from gitquarry.store import Store

DEFAULT_BINS = 36


@dataclass(frozen=True)
class TimelineBin:
    """Commits with ``start <= timestamp < end`` (Unix s; the last bin includes ``end``)."""

    start: int
    end: int
    count: int


@dataclass(frozen=True)
class Timeline:
    """``total`` matching commits in ``bins`` (equal widths, oldest first); ``basis`` is
    ``all_words``, ``any_word`` or ``none`` (no searchable word, or nothing matched)."""

    basis: str
    total: int
    bins: list[TimelineBin] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def match_times(store: Store, query: str, *, files_glob: str | None = None,
                after: int | None = None, before: int | None = None) -> tuple[str, list[int]]:
    """(basis, committer times of every matching commit). See the module docstring.

    :raises InvalidGlobError: ``files_glob`` is malformed.
    """
    conn = store.conn
    where = ["commit_fts MATCH ?"]
    args: list[Any] = []
    if after is not None:
        where.append("c.timestamp >= ?")
        args.append(after)
    if before is not None:
        where.append("c.timestamp <= ?")
        args.append(before)
    if files_glob:
        glob = GlobCandidates(conn, files_glob)
        glob.materialize()
        where.append("c.id IN (SELECT id FROM temp.gq_candidates)")
    sql = ("SELECT c.timestamp FROM commit_fts JOIN git_commits c ON c.id = commit_fts.rowid "
           f"WHERE {' AND '.join(where)}")
    for basis, operator in (("all_words", "AND"), ("any_word", "OR")):
        expression = fts5_match_expression(query, operator)  # type: ignore[arg-type]
        if not expression:
            return "none", []
        times = [int(r[0]) for r in conn.execute(sql, [expression, *args])]
        if times:
            return basis, times
    return "none", []


def bin_times(times: list[int], *, bins: int = DEFAULT_BINS, start: int | None = None,
              end: int | None = None) -> list[TimelineBin]:
    """Equal-width bins from ``start`` (default: the oldest time) to ``end`` (newest)."""
    if not times:
        return []
    lo = min(times) if start is None else min(start, min(times))
    hi = max(times) if end is None else max(end, max(times))
    n = max(1, min(bins, len(set(times)) if hi == lo else bins))
    width = max(1, -(-(hi - lo + 1) // n))
    counts = [0] * n
    for t in times:
        counts[min(n - 1, (t - lo) // width)] += 1
    return [TimelineBin(lo + i * width, min(hi, lo + (i + 1) * width), c)
            for i, c in enumerate(counts)]


def match_timeline(store: Store, query: str, *, files_glob: str | None = None,
                   after: int | None = None, before: int | None = None,
                   bins: int = DEFAULT_BINS) -> Timeline:
    """The histogram of matching commits over time (see the module docstring)."""
    basis, times = match_times(store, query, files_glob=files_glob, after=after,
                               before=before)
    return Timeline(basis, len(times), bin_times(times, bins=bins, start=after, end=before))
