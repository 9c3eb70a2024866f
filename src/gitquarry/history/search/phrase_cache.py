"""The lexical ranking from per-phrase BM25 terms kept per index state (issue 21 target 3).

FTS5's ``bm25()`` is a sum of one term per phrase of the MATCH expression (``fts5_aux.c``)::

    score = 0.0
    for each phrase i, in expression order:
        score += IDF[i] * (F[i] * (k1 + 1)) / (F[i] + k1 * (1 - b + b * D / avgdl))
    return -score

where ``F[i]`` is the column-weighted count of the phrase's instances *reported for the row*
(see below), ``D`` the row's token count and ``IDF[i]``/``avgdl`` statistics of the whole
index. A one-phrase query ``"p"`` therefore returns exactly ``-term(p, row)`` for every row
that holds ``p`` (``0.0 + x`` is ``x``). This module keeps, for each phrase a warm process has
searched, the rows holding it and that value (one FTS5 scan per phrase per index state),
and answers ``lexical._ranked`` for a query without filters by adding those values up in
expression order: the same IEEE-754 additions FTS5 does (negating every term flips only the
sign of each rounded sum), so the values and the order are bit for bit FTS5's.

Which phrases a row reports: FTS5 reports a phrase's instances at a row only when the
phrase's own node is positioned on that row. A word with an expansion is
``("own" OR ("unit1" AND "unit2"))``: ``own`` is reported wherever the row holds it; the
units only where the row holds *every* unit (an ``AND`` node sits on a row only when all its
children match there). The match rule is the same: a word matches where its own text or all
its units are; ``AND`` queries need every word, ``OR`` queries one.

Guards (the answer never depends on this module; a wrong path falls back to FTS5):
- the state key is the database file (device, inode, change time) plus FTS5's averages and
  structure records read inside the search's own read transaction: any write to the
  full-text index changes the structure record, so terms from another state are never used;
- the first query of a state whose expression has two or more phrases is also run through
  FTS5 and compared value for value (a C library built to fuse the multiply-add would round
  differently); any difference turns the cache off for the process;
- a phrase is scanned on its second miss in a state (the first query of a phrase costs what
  FTS5 alone costs; a query with a phrase not kept is FTS5's);
- only long-lived processes use it (``enable``): the MCP server and the daemon. A one-shot
  CLI search would pay the scans and the NumPy import for nothing.

Memory: at most ``MAX_ENTRIES`` (row id, value) pairs in all (16 bytes each). When a phrase
would not fit, it is not kept and its queries are FTS5's: nothing is evicted, so a working set
larger than the budget never turns queries into repeated scans (measured at 100k synthetic
commits with LRU eviction: 3× slower than FTS5 alone).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Literal

from gitquarry.retrieval.fts import QueryTerms, fts5_string

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

#: (row id, value) pairs kept in all phrases together (16 bytes each: 48 MiB)
MAX_ENTRIES = 3_000_000
#: a phrase matching more rows than this is not kept (its scan is the query's cost anyway)
MAX_PHRASE_ROWS = 400_000

_lock = threading.Lock()
_enabled = False
_verified: set[tuple[Any, ...]] = set()
_broken = False
#: database path → (state key, phrase → (ids, values)) in least-recently-used order
_states: dict[str, tuple[tuple[Any, ...], OrderedDict[str, tuple[Any, Any]]]] = {}
_entries = 0
#: database path → phrases missed once in its current state (scanned on the next miss)
_missed: dict[str, set[str]] = {}
MAX_MISSED = 4096
#: counters for benchmarks and tests: phrases scanned, phrases found kept, queries answered
stats = {"scans": 0, "hits": 0, "answered": 0, "verified": 0}


def enable(on: bool = True) -> None:
    """Turn the cache on (long-lived processes) or off (what it keeps stays until ``clear``)."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    """Whether ``lexical`` asks this module first."""
    return _enabled and not _broken


def clear() -> None:
    """Drop every kept phrase and verification (the next query scans again)."""
    global _entries
    with _lock:
        _states.clear()
        _commits.clear()
        _missed.clear()
        _verified.clear()
        _entries = 0


def _state_key(conn: sqlite3.Connection) -> tuple[str, tuple[Any, ...]] | None:
    row = conn.execute("PRAGMA database_list").fetchone()
    path = str(row[2] or "") if row is not None else ""
    if not path:
        return None  # in-memory or temporary database: nothing identifies its state
    try:
        st = os.stat(path)
    except OSError:
        return None
    records = tuple(
        bytes(r[1]) for r in conn.execute(
            "SELECT id, block FROM commit_fts_data WHERE id IN (1, 10) ORDER BY id")
    )
    return path, (st.st_dev, st.st_ino, st.st_ctime_ns, records)


def _phrases(conn: sqlite3.Connection, terms: QueryTerms, weights: str,
             key: tuple[str, tuple[Any, ...]]) -> dict[str, tuple[Any, Any]] | None:
    """Each distinct phrase of ``terms`` → (row ids ascending, FTS5 values), or None when
    some phrase is not kept (the caller asks FTS5, at its usual cost).

    A phrase is scanned (and kept) on its second miss in a state, never its first: a phrase
    searched once costs nothing more than FTS5 alone, and a working set larger than
    ``MAX_ENTRIES`` does not turn every query into scans."""
    import numpy as np

    global _entries
    path, state = key
    out: dict[str, tuple[Any, Any]] = {}
    scan: list[str] = []
    with _lock:
        current = _states.get(path)
        if current is None or current[0] != state:
            if current is not None:
                _entries -= sum(len(ids) for ids, _ in current[1].values())
            current = (state, OrderedDict())
            _states[path] = current
            _missed[path] = set()
        kept = current[1]
        missed = _missed.setdefault(path, set())
        for phrase in terms.phrases:
            if phrase in kept:
                kept.move_to_end(phrase)
                out[phrase] = kept[phrase]
                stats["hits"] += 1
            elif phrase in missed:
                scan.append(phrase)
            else:
                if len(missed) >= MAX_MISSED:
                    missed.clear()
                missed.add(phrase)
    if set(out) | set(scan) != set(terms.phrases):
        return None
    for phrase in dict.fromkeys(scan):
        if phrase in out:
            continue
        size = int(conn.execute("SELECT count(*) FROM commit_fts WHERE commit_fts MATCH ?",
                                (fts5_string(phrase),)).fetchone()[0])
        if size > MAX_PHRASE_ROWS or _entries + size > MAX_ENTRIES:
            return None  # full: nothing is evicted (no thrashing); FTS5 answers
        rows = conn.execute(
            f"SELECT rowid, bm25(commit_fts, {weights}) FROM commit_fts "
            "WHERE commit_fts MATCH ?", (fts5_string(phrase),)
        ).fetchall()
        stats["scans"] += 1
        pairs = np.array(rows, dtype=np.float64).reshape(len(rows), 2)
        if len(rows) and float(pairs[:, 0].max()) >= 2.0**53:  # ids beyond a double's
            pairs_ids = np.array([r[0] for r in rows], dtype=np.int64)
        else:
            pairs_ids = pairs[:, 0].astype(np.int64)
        ids, values = pairs_ids, np.ascontiguousarray(pairs[:, 1])
        if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            order = np.argsort(ids, kind="stable")
            ids, values = ids[order], values[order]
        out[phrase] = (ids, values)
        if len(ids) > MAX_PHRASE_ROWS:
            continue
        with _lock:
            current = _states.get(path)
            if current is None or current[0] != state or phrase in current[1]:
                continue
            current[1][phrase] = (ids, values)
            _entries += len(ids)
    return out


#: database path → (state key, commit ids ascending, committer times, merge flags)
_commits: dict[str, tuple[tuple[Any, ...], Any, Any, Any]] = {}


def _commit_columns(conn: sqlite3.Connection,
                    key: tuple[str, tuple[Any, ...]]) -> tuple[Any, Any, Any]:
    """(ids ascending, ``timestamp``, ``is_merge``) of every ``git_commits`` row, read once
    per state (the key adds the table's row count and largest id to the full-text state: a
    commit's row and its full-text row are written in one transaction)."""
    import numpy as np

    path, state = key
    count, largest = conn.execute(
        "SELECT count(*), coalesce(max(id), 0) FROM git_commits").fetchone()
    full = (*state, int(count), int(largest))
    with _lock:
        kept = _commits.get(path)
        if kept is not None and kept[0] == full:
            return kept[1], kept[2], kept[3]
    rows = conn.execute("SELECT id, timestamp, is_merge FROM git_commits ORDER BY id").fetchall()
    table = np.array(rows, dtype=np.int64).reshape(len(rows), 3)
    columns = (np.ascontiguousarray(table[:, 0]), np.ascontiguousarray(table[:, 1]),
               np.ascontiguousarray(table[:, 2]))
    with _lock:
        _commits[path] = (full, *columns)
    return columns


def _within(docs: np.ndarray, columns: tuple[Any, Any, Any], after: int | None,
            before: int | None, is_merge: int | None) -> np.ndarray:
    """The rows of ``docs`` whose commit passes the time bounds and the merge filter (as
    ``+rowid IN (SELECT id FROM git_commits WHERE …)`` keeps them)."""
    import numpy as np

    ids, times, merges = columns
    if len(ids) == 0 or len(docs) == 0:
        return docs[:0]
    at = np.searchsorted(ids, docs)
    at[at == len(ids)] = 0
    keep = ids[at] == docs
    if after is not None:
        keep &= times[at] >= after
    if before is not None:
        keep &= times[at] <= before
    if is_merge is not None:
        keep &= merges[at] == is_merge
    return docs[keep]


def _lookup(ids: np.ndarray, values: np.ndarray,
            docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether each of ``docs`` is in ``ids``, its value there or 0.0)."""
    import numpy as np

    if len(ids) == 0:
        return np.zeros(len(docs), dtype=bool), np.zeros(len(docs))
    at = np.searchsorted(ids, docs)
    at[at == len(ids)] = 0
    present = ids[at] == docs
    return present, np.where(present, values[at], 0.0)


def _top(docs: np.ndarray, score: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The first ``n`` of ``docs`` by (score, row id)."""
    import numpy as np

    if n <= 0 or len(docs) == 0:
        return []
    if len(docs) > n:
        kth = np.partition(score, n - 1)[n - 1]
        keep = score <= kth  # every row that can be among the first n (ties included)
        docs, score = docs[keep], score[keep]
    order = np.lexsort((docs, score))[:n]
    return [(int(d), float(s)) for d, s in zip(docs[order], score[order], strict=True)]


def rank(conn: sqlite3.Connection, terms: QueryTerms, limit: int, weights: str, *,
         after: int | None = None, before: int | None = None,
         is_merge: int | None = None,
         glob: bool = False) -> list[tuple[int, float, bool]] | None:
    """``lexical.rank_lexical(conn, terms, filters, limit)`` (without a glob) as (row id,
    bm25, every) triples: rows holding every word first, each group by (bm25, row id);
    ``after``/``before``/``is_merge`` are the filters' row conditions (inclusive Unix-second
    committer-time bounds, merge flag); ``glob``: only the rows of ``temp.gq_candidates``
    (read per query: it is the query's own set). None when the cache cannot answer (off, no
    state key, or a failed verification): the caller asks FTS5."""
    if not enabled() or not terms.words:
        return None
    key = _state_key(conn)
    if key is None:
        return None
    import numpy as np

    table = _phrases(conn, terms, weights, key)
    if table is None:
        return None
    word_docs: list[np.ndarray] = []
    for word in terms.words:
        own = table[word.text][0]
        if word.units:
            together = table[word.units[0]][0]
            for unit in word.units[1:]:
                together = np.intersect1d(together, table[unit][0], assume_unique=True)
            own = np.union1d(own, together)
        word_docs.append(own)
    every = word_docs[0]
    for docs in word_docs[1:]:
        every = np.intersect1d(every, docs, assume_unique=True)
    columns = None
    if after is not None or before is not None or is_merge is not None:
        columns = _commit_columns(conn, key)
        every = _within(every, columns, after, before, is_merge)
    allowed = None
    if glob:
        found = conn.execute("SELECT id FROM temp.gq_candidates ORDER BY id")
        allowed = np.fromiter((r[0] for r in found), dtype=np.int64)
        every = np.intersect1d(every, allowed, assume_unique=True)

    def score(docs: np.ndarray) -> np.ndarray:
        total = np.zeros(len(docs))
        for word in terms.words:
            _, value = _lookup(*table[word.text], docs)
            total = total + value
            if word.units:
                values = []
                counted = np.ones(len(docs), dtype=bool)
                for unit in word.units:
                    present, value = _lookup(*table[unit], docs)
                    counted &= present
                    values.append(value)
                for value in values:
                    total = total + np.where(counted, value, 0.0)
        return total

    out = [(d, s, True) for d, s in _top(every, score(every), limit)]
    if len(out) < limit and len(terms.words) > 1:
        anywhere = word_docs[0]
        for docs in word_docs[1:]:
            anywhere = np.union1d(anywhere, docs)
        some = np.setdiff1d(anywhere, every, assume_unique=True)
        if columns is not None:
            some = _within(some, columns, after, before, is_merge)
        if allowed is not None:
            some = np.intersect1d(some, allowed, assume_unique=True)
        out += [(d, s, False) for d, s in _top(some, score(some), limit - len(out))]
    stats["answered"] += 1
    if len(terms.phrases) > 1 and key not in _verified:
        if not _verify(conn, terms, weights, out):
            return None
        _verified.add(key)
    return out


def _verify(conn: sqlite3.Connection, terms: QueryTerms, weights: str,
            hits: list[tuple[int, float, bool]]) -> bool:
    """Whether FTS5 gives the same value as ``hits`` for each of them (the AND expression
    for rows holding every word, the OR expression for the others); on any difference the
    cache is turned off for this process."""
    global _broken
    import json

    stats["verified"] += 1
    groups: tuple[tuple[bool, Literal["AND", "OR"]], ...] = ((True, "AND"), (False, "OR"))
    for every, operator in groups:
        ids = [d for d, _, e in hits if e is every]
        if not ids:
            continue
        expression = terms.expression(operator)
        found = dict(conn.execute(
            f"SELECT rowid, bm25(commit_fts, {weights}) FROM commit_fts "
            "WHERE commit_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))",
            (expression, json.dumps(ids)),
        ).fetchall())
        if any(found.get(d) != s for d, s, e in hits if e is every):
            log.warning("phrase cache: BM25 sums differ from FTS5's; cache off")
            _broken = True
            clear()
            return False
    return True
