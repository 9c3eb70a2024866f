"""The lexical ranking from compact per-phrase postings kept per index state (issue 21
target 3).

FTS5's ``bm25()`` is a sum of one term per phrase of the MATCH expression (``fts5_aux.c``)::

    score = 0.0
    for each phrase i, in expression order:
        score += IDF[i] * ((F[i] * (k1 + 1.0)) / (F[i] + k1 * (1 - b + b * D / avgdl)))
    return -1.0 * score

with ``k1 = 1.2``, ``b = 0.75``; ``F[i]`` the column-weighted count of the phrase's instances
*reported for the row* (see below), ``D`` the row's token count (all columns),
``avgdl = (double)nToken / (double)nRow`` and ``IDF[i] = log((nRow - nHit + 0.5) /
(nHit + 0.5))`` (``1e-6`` when that is ≤ 0), ``nHit`` the rows holding the phrase.

**What is kept** (per database file and index state):
- per row, ``K = k1 * (1 - b + b * D / avgdl)`` (float64, dense by row id: 8 bytes a row),
  from ``D`` read once from FTS5's ``commit_fts_docsize`` and ``nRow``/``nToken`` from its
  averages record;
- per phrase a warm process has searched, its postings: row id (int32) and ``F``
  (uint16, uint32 where a row's count needs it): **6 bytes a pair**, with its ``IDF``.
  ``F`` comes from one FTS5 scan of the phrase alone (``bm25`` of a one-phrase query is
  ``-term``): each row's ``F`` is solved from its value and then **checked**: the term
  recomputed from ``F`` with the same IEEE operations must give FTS5's value bit for bit for
  every row of the phrase, or the phrase is never kept (its queries stay FTS5's);
- per state, each commit's time and merge flag (dense by id) for the filters.

A query adds the terms up in expression order (NumPy float64, one operation at a time: the
same roundings as the C code; a row without a phrase adds nothing, as ``+ 0.0`` does not
change a sum) and takes the top rows per group. Nothing is scanned for a query: a phrase
not kept yet is built by a background thread on its own connection (``BACKGROUND``), and
the query is FTS5's.

Which phrases a row reports: FTS5 reports a phrase's instances at a row only when the
phrase's own node is positioned on that row. A word with an expansion is
``("own" OR ("unit1" AND "unit2"))``: ``own`` is reported wherever the row holds it; the
units only where the row holds *every* unit (an ``AND`` node sits on a row only when all its
children match there). The match rule is the same: a word matches where its own text or all
its units are; ``AND`` queries need every word, ``OR`` queries one.

Guards (the answer never depends on this module; a wrong path falls back to FTS5):
- the state key is the database file (device, inode, change time) plus FTS5's averages and
  structure records, read inside the search's own read transaction (and again inside the
  builder's): any write to the full-text index changes the structure record, so postings or
  row constants of another state are never used. A new state builds again from scratch
  (the phrases kept in the old one are queued first): a contentless FTS5 table gives no
  sound signal that old rows are unchanged (``UPDATE`` of an author or of an incomplete
  commit rewrites a row in place), so old rows' counts are not carried over;
- every kept phrase's values were checked against FTS5 for every one of its rows (above);
- the first query of a state whose expression has two or more phrases is also checked
  against FTS5, value for value (a C library built to fuse the multiply-add into the sum
  would round differently); until that check passes the state's queries are FTS5's, and any
  difference turns the cache off for the process;
- only long-lived processes use it (``enable``): the MCP server and the daemon.

Memory: at most ``MAX_ENTRIES`` postings in all (6 bytes each, 8 where a count needs
uint32: ≤ 48 MB) plus 18 bytes per row id per state (row constants, commit times and
flags). When a phrase would not fit it is not kept and its queries are FTS5's: nothing is
evicted, so a working set larger than the budget never turns queries into repeated scans.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import threading
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from gitquarry.retrieval.fts import QueryTerms, fts5_string

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

#: postings (row id, weighted count) kept in all phrases and states together
MAX_ENTRIES = 8_000_000
#: a phrase matching more rows than this is not kept
MAX_PHRASE_ROWS = 400_000
#: row ids above this are not kept densely (the cache stays off for that index)
MAX_ROW_ID = 20_000_000
#: build phrases on a background thread at their first miss (True, long-lived processes);
#: False: on the query's own connection at a phrase's second miss (tests, one thread)
BACKGROUND = True
#: BM25 parameters of ``fts5_aux.c``
K1 = 1.2
B = 0.75
_K1_PLUS_1 = K1 + 1.0

_lock = threading.Lock()
_enabled = False
_broken = False
_entries = 0
#: database path → its state
_states: dict[str, _State] = {}
#: phrases missed once in a state (``BACKGROUND`` False: built on the next miss)
MAX_MISSED = 4096
#: counters for benchmarks and tests: phrases built (``scans``), phrases found kept
#: (``hits``), queries answered, states verified, phrases refused by the exactness check
stats = {"scans": 0, "hits": 0, "answered": 0, "verified": 0, "refused": 0}


class _Postings(NamedTuple):
    """One phrase in one state: rows holding it (int32 ascending), their weighted counts
    ``F`` (unsigned ints), and the phrase's ``IDF``."""

    ids: Any
    freq: Any
    idf: float


class _Rows(NamedTuple):
    """Per-row constants of one state, dense by row id."""

    #: ``k1 * (1 - b + b * D / avgdl)`` (float64; 0.0 where no row)
    k: Any
    #: number of rows (``nRow``)
    n_rows: int


class _Commits(NamedTuple):
    """``git_commits`` columns of one state, dense by id (size = the rows' dense size)."""

    exists: Any
    times: Any
    merges: Any


class _State:
    """What is kept for one database file in one index state."""

    def __init__(self, key: tuple[Any, ...], weights: str) -> None:
        self.key = key
        self.weights = weights
        self.rows: _Rows | None = None
        self.commits: _Commits | None = None
        self.commits_key: int | None = None
        self.phrases: OrderedDict[str, _Postings] = OrderedDict()
        #: phrases that are never kept in this state (too big, failed the check, an error)
        self.refused: set[str] = set()
        self.missed: set[str] = set()
        self.queued: set[Any] = set()
        self.verified = False
        self.entries = 0


def enable(on: bool = True) -> None:
    """Turn the cache on (long-lived processes) or off (what it keeps stays until ``clear``)."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    """Whether ``lexical`` asks this module first."""
    return _enabled and not _broken


def clear() -> None:
    """Drop every kept phrase, row table and verification (pending builds are dropped)."""
    global _entries
    with _lock:
        _states.clear()
        _entries = 0
        _jobs.clear()


def footprint() -> dict[str, int]:
    """Bytes kept now: ``postings`` (row ids and counts of every kept phrase), ``rows``
    (the per-row constants and commit columns of every state), and ``phrases``/``entries``
    (how many phrases and postings)."""
    with _lock:
        postings = sum(p.ids.nbytes + p.freq.nbytes
                       for state in _states.values() for p in state.phrases.values())
        rows = sum((state.rows.k.nbytes if state.rows is not None else 0)
                   + (sum(a.nbytes for a in state.commits) if state.commits is not None else 0)
                   for state in _states.values())
        phrases = sum(len(state.phrases) for state in _states.values())
    return {"postings": postings, "rows": rows, "phrases": phrases, "entries": _entries}


# --- the state key and FTS5's records --------------------------------------------------------


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


def _varints(blob: bytes) -> list[int]:
    """The SQLite varints of ``blob`` (big-endian 7-bit groups; the 9th byte takes 8 bits),
    as FTS5 writes its averages and docsize records."""
    out: list[int] = []
    i, n = 0, len(blob)
    while i < n:
        value = 0
        for j in range(9):
            if i >= n:
                raise ValueError("truncated varint")
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        out.append(value)
    return out


def _row_sizes(blobs: list[bytes]) -> np.ndarray:
    """Each docsize record's total token count (the sum of its varints: ``D``), int64.
    Vectorised for varints of up to 8 bytes; a record of other shape goes through
    ``_varints``."""
    import numpy as np

    n = len(blobs)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    lens = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=n)
    buf = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    ends = buf < 0x80
    last = np.cumsum(lens) - 1
    if len(buf) == 0 or not bool(np.all(ends[last[lens > 0]])):
        return np.array([sum(_varints(b)) for b in blobs], dtype=np.int64)
    end_at = np.flatnonzero(ends)
    which: np.ndarray = np.cumsum(ends) - ends  # the varint each byte belongs to
    shift = end_at[which] - np.arange(len(buf))
    if int(shift.max()) >= 8:
        return np.array([sum(_varints(b)) for b in blobs], dtype=np.int64)
    parts = (buf & 0x7F).astype(np.int64) << (7 * shift)
    row = np.repeat(np.arange(n), lens)
    return np.bincount(row, weights=parts, minlength=n).astype(np.int64)


def _read_rows(conn: sqlite3.Connection) -> _Rows | None:
    """The row constants of the connection's current state (None when the index is empty or
    its row ids are out of range)."""
    import numpy as np

    found = conn.execute("SELECT block FROM commit_fts_data WHERE id = 1").fetchone()
    if found is None:
        return None
    totals = _varints(bytes(found[0]))
    n_rows, n_tokens = totals[0], sum(totals[1:])
    if n_rows <= 0:
        return None
    avgdl = float(n_tokens) / float(n_rows)
    rows = conn.execute("SELECT id, sz FROM commit_fts_docsize").fetchall()
    if not rows:
        return None
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if int(ids.min()) < 0 or int(ids.max()) > MAX_ROW_ID:
        return None
    sizes = _row_sizes([bytes(r[1]) for r in rows]).astype(np.float64)
    k = np.zeros(int(ids.max()) + 1)
    k[ids] = K1 * ((1 - B) + (B * sizes) / avgdl)  # fts5Bm25Function's operations, in order
    return _Rows(k, int(n_rows))


def _read_commits(conn: sqlite3.Connection, size: int) -> tuple[int, _Commits]:
    """(the largest commit id, the columns). Kept with the full-text state: a commit row is
    added, deleted or rewritten (``_replace_commit`` sets ``is_merge`` with the diff) only
    together with its full-text row, and its time never changes; the largest id is checked
    per query as well (an index lookup)."""
    import numpy as np

    largest = int(conn.execute("SELECT coalesce(max(id), 0) FROM git_commits").fetchone()[0])
    key = largest
    width = max(size, largest + 1)
    table = np.array(conn.execute("SELECT id, timestamp, is_merge FROM git_commits").fetchall(),
                     dtype=np.int64).reshape(-1, 3)
    exists = np.zeros(width, dtype=bool)
    times = np.zeros(width, dtype=np.int64)
    merges = np.zeros(width, dtype=np.int8)
    exists[table[:, 0]] = True
    times[table[:, 0]] = table[:, 1]
    merges[table[:, 0]] = table[:, 2]
    return key, _Commits(exists, times, merges)


def _term_values(p: _Postings, k: np.ndarray) -> np.ndarray:
    """``IDF * ((F * (k1 + 1)) / (F + K))`` for each row of ``p`` (positive; float64)."""
    import numpy as np

    freq = p.freq.astype(np.float64)
    return p.idf * ((freq * _K1_PLUS_1) / (freq + k[p.ids]))


def _build(conn: sqlite3.Connection, rows: _Rows, phrase: str,
           weights: str) -> _Postings | None:
    """The phrase's postings from one FTS5 scan, or None when they cannot be kept (too many
    rows, an error, or a value ``F`` does not reproduce bit for bit)."""
    import numpy as np

    found = conn.execute(
        f"SELECT rowid, bm25(commit_fts, {weights}) FROM commit_fts WHERE commit_fts MATCH ?",
        (fts5_string(phrase),)).fetchall()
    stats["scans"] += 1
    if len(found) > MAX_PHRASE_ROWS:
        return None
    n = len(found)
    ids = np.fromiter((r[0] for r in found), dtype=np.int64, count=n)
    values = np.fromiter((r[1] for r in found), dtype=np.float64, count=n)
    if n and (int(ids.min()) < 0 or int(ids.max()) >= len(rows.k)):
        return None  # a row without a docsize record in this state
    if n > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        order = np.argsort(ids, kind="stable")
        ids, values = ids[order], values[order]
    ratio = (rows.n_rows - n + 0.5) / (n + 0.5)
    idf = math.log(ratio) if ratio > 0 else 0.0
    if idf <= 0.0:
        idf = 1e-6
    k = rows.k[ids]
    term = -1.0 * values
    with np.errstate(divide="ignore", invalid="ignore"):
        solved = np.rint(term * k / (idf * _K1_PLUS_1 - term))
    if n and not bool(np.all(np.isfinite(solved))):
        return None
    solved = np.maximum(solved, 0.0)
    top = float(solved.max()) if n else 0.0
    dtype = np.uint16 if top < 2**16 else np.uint32 if top < 2**32 else None
    if dtype is None:
        return None
    postings = _Postings(ids.astype(np.int32), solved.astype(dtype), idf)
    if not np.array_equal(-1.0 * (0.0 + _term_values(postings, rows.k)), values):
        stats["refused"] += 1
        log.info("phrase cache: %r's values are not reproduced; not kept", phrase)
        return None
    return postings


# --- the builder (background thread or inline) -----------------------------------------------

#: pending jobs: (path, state key, kind, argument)
_jobs: deque[tuple[str, tuple[Any, ...], str, Any]] = deque()
_wake = threading.Condition(_lock)
_busy = False
_worker: threading.Thread | None = None


def _current(path: str, key: tuple[Any, ...]) -> _State | None:
    state = _states.get(path)
    return state if state is not None and state.key == key else None


def _queue(state: _State, path: str, kind: str, arg: Any) -> None:
    """Queue a job for ``state`` once (caller holds ``_lock``)."""
    global _worker
    tag = (kind, arg if kind != "verify" else None)
    if tag in state.queued:
        return
    state.queued.add(tag)
    _jobs.append((path, state.key, kind, arg))
    if _worker is None or not _worker.is_alive():
        _worker = threading.Thread(target=_work, name="gq-postings", daemon=True)
        _worker.start()
    _wake.notify_all()


def wait_idle(timeout: float = 60.0) -> bool:
    """Wait until no build is queued or running (benchmarks, tests); whether it got there."""
    import time

    deadline = time.monotonic() + timeout
    with _lock:
        while _jobs or _busy:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _wake.wait(left)
    return True


def _work() -> None:
    global _busy
    conns: dict[str, sqlite3.Connection] = {}
    while True:
        with _lock:
            while not _jobs:
                _busy = False
                _wake.notify_all()
                _wake.wait(30.0)
                if not _jobs:
                    for c in conns.values():
                        c.close()
                    conns.clear()
            path, key, kind, arg = _jobs.popleft()
            _busy = True
        try:
            conn = conns.get(path)
            if conn is None:
                conn = sqlite3.connect(path, timeout=5.0)
                conns[path] = conn
            _run_job(conn, path, key, kind, arg)
        except Exception as exc:  # the cache is an optimisation: never break the process
            log.info("phrase cache: %s job failed: %s", kind, exc)
            with _lock:
                state = _current(path, key)
                if state is not None and kind == "phrase":
                    state.refused.add(arg)
            failed = conns.pop(path, None)
            if failed is not None:
                failed.close()


def _run_job(conn: sqlite3.Connection, path: str, key: tuple[Any, ...], kind: str,
             arg: Any) -> None:
    """Run one job on ``conn`` in a read transaction of ``key``'s state (dropped when the
    database has moved on)."""
    conn.execute("BEGIN")
    try:
        now = _state_key(conn)
        with _lock:
            state = _current(path, key)
        if now is None or now != (path, key) or state is None:
            return
        _fill(conn, path, state, kind, arg)
    finally:
        conn.execute("ROLLBACK")


def _fill(conn: sqlite3.Connection, path: str, state: _State, kind: str, arg: Any) -> None:
    """Build what ``kind`` names into ``state`` from ``conn`` (in ``state``'s snapshot)."""
    global _entries, _broken
    if state.rows is None:
        rows = _read_rows(conn)
        with _lock:
            if rows is None:
                state.refused.add("")
            state.rows = rows
    rows = state.rows
    if rows is None:
        return
    if kind == "commits":
        commits_key, commits = _read_commits(conn, len(rows.k))
        with _lock:
            state.commits, state.commits_key = commits, commits_key
    elif kind == "phrase":
        if arg in state.phrases or arg in state.refused:
            return
        postings = _build(conn, rows, arg, state.weights)
        with _lock:
            size = 0 if postings is None else len(postings.ids)
            if postings is None or _entries + size > MAX_ENTRIES:
                state.refused.add(arg)  # full: nothing is evicted (no thrashing)
            elif _current(path, state.key) is state and arg not in state.phrases:
                state.phrases[arg] = postings
                state.entries += size
                _entries += size
    elif kind == "verify":
        terms, hits = arg
        if _verify(conn, terms, state.weights, hits):
            with _lock:
                state.verified = True


# --- answering -----------------------------------------------------------------------------


def _state_for(key: tuple[str, tuple[Any, ...]], weights: str) -> _State:
    """The kept state of ``key``'s file, a new one when the file's state moved on (caller
    holds ``_lock``). A new state queues the old one's phrases, most recently used first."""
    global _entries
    path, state_key = key
    state = _states.get(path)
    if state is not None and state.key == state_key and state.weights == weights:
        return state
    fresh = _State(state_key, weights)
    _states[path] = fresh
    if state is not None:
        _entries -= state.entries
        if BACKGROUND:
            for phrase in reversed(state.phrases):
                _queue(fresh, path, "phrase", phrase)
    return fresh


def _need(conn: sqlite3.Connection, key: tuple[str, tuple[Any, ...]], state: _State,
          kind: str, arg: Any, *, seen: bool) -> None:
    """Have ``kind`` built: queued for the background thread, or (``BACKGROUND`` False) now
    on ``conn`` when it was ``seen`` missing before (a phrase's second miss)."""
    if BACKGROUND:
        with _lock:
            _queue(state, key[0], kind, arg)
    elif seen:
        _fill(conn, key[0], state, kind, arg)


def _dense_mask(size: int, ids: np.ndarray) -> np.ndarray:
    import numpy as np

    mask = np.zeros(size, dtype=bool)
    mask[ids[(ids >= 0) & (ids < size)]] = True
    return mask


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
    return list(zip(docs[order].tolist(), score[order].tolist(), strict=True))


def rank(conn: sqlite3.Connection, terms: QueryTerms, limit: int, weights: str, *,
         after: int | None = None, before: int | None = None,
         is_merge: int | None = None,
         glob: bool = False) -> list[tuple[int, float, bool]] | None:
    """``lexical.rank_lexical(conn, terms, filters, limit)`` as (row id, bm25, every)
    triples: rows holding every word first, each group by (bm25, row id);
    ``after``/``before``/``is_merge`` are the filters' row conditions (inclusive Unix-second
    committer-time bounds, merge flag); ``glob``: only the rows of ``temp.gq_candidates``
    (read per query: it is the query's own set). None when the cache cannot answer (off, no
    state key, a phrase or table not built yet, a state not verified yet, or a failed
    verification): the caller asks FTS5."""
    if not enabled() or not terms.words:
        return None
    key = _state_key(conn)
    if key is None:
        return None
    import numpy as np

    with _lock:
        state = _state_for(key, weights)
        if "" in state.refused:
            return None
        if len(terms.phrases) > 1 and not state.verified and ("verify", None) in state.queued:
            return None  # the state's first check is under way: FTS5 answers until it passes
        table: dict[str, _Postings] = {}
        missing: list[tuple[str, bool]] = []
        for phrase in dict.fromkeys(terms.phrases):
            kept = state.phrases.get(phrase)
            if kept is not None:
                state.phrases.move_to_end(phrase)
                table[phrase] = kept
                stats["hits"] += 1
            elif phrase in state.refused:
                return None
            else:
                seen = phrase in state.missed
                if not seen:
                    if len(state.missed) >= MAX_MISSED:
                        state.missed.clear()
                    state.missed.add(phrase)
                missing.append((phrase, seen))
        filtered = after is not None or before is not None or is_merge is not None
    for phrase, seen in missing:
        _need(conn, key, state, "phrase", phrase, seen=seen)
    with _lock:
        for phrase, _ in missing:
            kept = state.phrases.get(phrase)
            if kept is None:
                return None
            table[phrase] = kept
        rows = state.rows
    if rows is None:
        return None
    size = len(rows.k)
    commits = None
    if filtered:
        largest = int(conn.execute("SELECT coalesce(max(id), 0) FROM git_commits").fetchone()[0])
        if state.commits is None or state.commits_key != largest:
            _need(conn, key, state, "commits", None, seen=True)
        if state.commits is None or state.commits_key != largest:
            return None
        commits = state.commits

    total = np.zeros(size)
    matched = np.zeros(size, dtype=np.uint8)
    for word in terms.words:
        own = table[word.text]
        total[own.ids] += _term_values(own, rows.k)
        if not word.units:
            matched[own.ids] += 1
            continue
        units = [table[u] for u in word.units]
        if len(units) == 1:
            full = _dense_mask(size, units[0].ids)
        else:
            count_units = np.zeros(size, dtype=np.uint8)
            for unit in units:
                count_units[unit.ids] += 1
            full = count_units == len(units)
        for unit in units:
            counted = full[unit.ids]
            total[unit.ids[counted]] += _term_values(unit, rows.k)[counted]
        present = full
        present[own.ids] = True
        matched += present
    allowed = np.ones(size, dtype=bool)
    if commits is not None:
        allowed &= commits.exists[:size]
        if after is not None:
            allowed &= commits.times[:size] >= after
        if before is not None:
            allowed &= commits.times[:size] <= before
        if is_merge is not None:
            allowed &= commits.merges[:size] == is_merge
    if glob:
        found = conn.execute("SELECT id FROM temp.gq_candidates")
        allowed &= _dense_mask(size, np.fromiter((r[0] for r in found), dtype=np.int64))
    n_words = len(terms.words)
    every = np.flatnonzero((matched == n_words) & allowed)
    out = [(d, s, True) for d, s in _top(every, -1.0 * total[every], limit)]
    if len(out) < limit and n_words > 1:
        some = np.flatnonzero((matched > 0) & (matched < n_words) & allowed)
        out += [(d, s, False) for d, s in _top(some, -1.0 * total[some], limit - len(out))]
    stats["answered"] += 1
    if len(terms.phrases) > 1 and not state.verified:
        if BACKGROUND:
            with _lock:
                _queue(state, key[0], "verify", (terms, out))
            return None
        if not _verify(conn, terms, weights, out):
            return None
        state.verified = True
    return out


def phrase_counts(conn: sqlite3.Connection, phrases: list[str]) -> dict[str, int]:
    """How many rows hold each of ``phrases`` that is kept for ``conn``'s current state (what
    ``SELECT count(*) … MATCH phrase`` gives in the same snapshot: the postings are that
    phrase's rows); phrases not kept are left out. {} when the cache is off."""
    if not enabled() or not phrases:
        return {}
    key = _state_key(conn)
    if key is None:
        return {}
    with _lock:
        state = _states.get(key[0])
        if state is None or state.key != key[1]:
            return {}
        kept = ((p, state.phrases.get(p)) for p in phrases)
        return {p: len(k.ids) for p, k in kept if k is not None}


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
