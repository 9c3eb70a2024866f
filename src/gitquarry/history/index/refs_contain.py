"""Which indexed refs contain a commit (``refs`` on every hit), from the index alone.

``git branch --contains`` / ``git tag --contains`` walk history once per question: seconds
per commit at 100,000 commits and 1,000 tags without a commit-graph file (measured in
``benchmarks/bench_refs_contain.py``), far too slow for every hit of every answer. Instead
the index's own commit graph (``git_commits.parents``) and the refs the last indexing run
recorded (``repo_refs``) are turned once into one bit set per commit (bit *i* set when ref
*i*'s tip reaches the commit), propagated from children to parents in one topological pass;
equal sets are shared, so a linear history with 1,000 tags holds about 1,000 distinct sets.
After that a hit's refs cost one dictionary look-up.

Bits are numbered in display order (below), so a hit's first names are its lowest set bits:
a look-up touches only the bits it shows, not every ref.

The sets are rebuilt when the commits or refs changed, and kept for the life of the process
(the MCP server's). Checking for a change costs microseconds while nothing was written: the
same connection with the same ``PRAGMA data_version`` (which moves on every commit by another
connection or process) and the same ``total_changes`` (writes through this connection) has
seen no write. Only after some write is the fingerprint read (the newest commit row, the
repositories, every ref's name and tip: about a millisecond with 1,000 refs), and only a
changed fingerprint rebuilds (seconds at 100,000 commits on a loaded 2-core machine): writes
that touch neither commits nor refs, such as embeddings, cost no rebuild.
``benchmarks/bench_refs_contain.py`` reports the warm p95 and the rebuild time, against the
previous implementation.

Persisted with the index (issue 21): ``gitquarry index`` stores the sets once per index state
(:func:`persist_ref_sets`: tables ``ref_sets_meta``, ``ref_set_values``, ``commit_ref_sets``,
keyed by the SHA-256 digest of the fingerprint above), so a fresh process (every CLI query,
every in-process search without a shared ``RefContainment``) whose fingerprint has that
digest reads only its hits' sets, one indexed look-up each, and never rebuilds. A digest that
differs (a write that did not persist, an index from before the tables) falls back to the
in-memory build, so the answer is the same either way; a persisted state that changes between
the check and a look-up is noticed in the same statement and also falls back.

A commit whose parents are not all in the index (a shallow boundary) is still found from the
refs above it.

Names are shown short, as ``git branch -a`` / ``git tag`` show them: ``main``,
``origin/feature-x``, ``v2.3.0``; with several repositories, ``<repository dir>:<ref>``.
Order: local branches, remote branches, then tags oldest first (so the first tag listed is
the first release that holds the commit). ``refs`` lists at most ``max_names``;
``refs_total`` counts them all. ``compact=True`` (the ``compact`` detail level) lists at most
two refs that are not tags (local branches first) and the first tag: where the commit is, and
the oldest release that holds it, in a few tokens.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitquarry.gitio.refs import display_ref, ref_from_bytes

MAX_NAMES = 10
#: part of the persisted digest: bump when the sets' meaning or the names' form changes
PERSIST_FORMAT = 1
#: refs other than tags listed by ``compact`` names (then the first tag)
COMPACT_BRANCHES = 2


@dataclass(frozen=True)
class _Ref:
    name: str
    order: tuple[int, int, int, str]  # repository, kind, tag time, name


def short_ref(ref: str) -> tuple[str, int]:
    """(short name, kind) with kind 0 local branch, 1 remote branch, 2 tag, 3 other."""
    for prefix, kind in (("refs/heads/", 0), ("refs/remotes/", 1), ("refs/tags/", 2)):
        if ref.startswith(prefix):
            return ref[len(prefix):], kind
    return ref, 3


#: the last state any instance reached (connection, seen, key, sets, names, tag bits): a
#: search called without a long-lived ``RefContainment`` (``pipeline.copies`` makes one per
#: call) on the same connection takes it instead of reading the fingerprint again; the
#: connection object is held, so its identity cannot be reused by another
_last: tuple[Any, ...] | None = None


class RefContainment:
    """Bit sets of containing refs for every indexed commit (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None  # held: its identity cannot be reused
        self._seen: tuple[int, int] | None = None  # (data_version, total_changes) of _conn
        self._key: tuple[Any, ...] | None = None
        self._sets: dict[int, int] | _PersistedSets = {}
        self._names: list[str] = []  # bit i is self._names[i]: display order
        self._tag_bits = 0  # bits of tags
        self.build_seconds = 0.0
        self.fingerprints = 0  # how many times the fingerprint was read (tests, benchmark)
        self.builds = 0  # in-memory builds from the commit graph (tests, benchmark)
        self.persisted_loads = 0  # times the persisted sets were taken (tests, benchmark)

    @staticmethod
    def _fingerprint(conn: sqlite3.Connection) -> tuple[Any, ...]:
        """What the sets and names are built from, read cheaply: the newest commit row (id and
        hash: new commits get ids above it, so an insert moves it, and so does an id reused
        after the newest row was deleted), every repository's id and path, and every ref's
        repository, name and tip.

        Not a count of the commits: a commit leaves the index only when no recorded ref
        reaches it any more (pruning) or its repository is forgotten, and both change the
        refs or repositories read here; and a deleted commit cannot change which refs reach
        the commits that remain (their parents are unchanged)."""
        top = conn.execute("SELECT id, hash FROM git_commits ORDER BY id DESC LIMIT 1"
                           ).fetchone()
        repos = tuple(tuple(r) for r in conn.execute(
            "SELECT id, path FROM repositories ORDER BY id"))
        refs = tuple(tuple(r) for r in conn.execute(
            "SELECT repo_id, ref, tip FROM repo_refs ORDER BY repo_id, ref"))
        return (tuple(top) if top else None, repos, refs)

    @staticmethod
    def digest(key: tuple[Any, ...]) -> str:
        """SHA-256 (hex) of a fingerprint (:meth:`_fingerprint`) and ``PERSIST_FORMAT``: the
        key of the persisted sets. The fingerprint holds only ints, strings, bytes and None
        in tuples, whose ``repr`` is stable across processes."""
        return hashlib.sha256(repr((PERSIST_FORMAT, key)).encode("utf-8")).hexdigest()

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Rebuild the sets if the commits or refs changed since the last build."""
        import time

        with self._lock:
            seen = (int(conn.execute("PRAGMA data_version").fetchone()[0]),
                    conn.total_changes)
            if self._conn is None and _last is not None and _last[0] is conn:
                self._adopt(_last)  # a new instance on the same connection (in-process calls)
            if conn is self._conn and seen == self._seen:
                return  # nothing written since the last check
            self.fingerprints += 1
            key = self._fingerprint(conn)
            self._conn, self._seen = conn, seen
            if key == self._key:
                self._share()
                return
            started = time.perf_counter()
            if not self._load_persisted(conn, self.digest(key)):
                self._build(conn)
                self.builds += 1
            self._key = key
            self.build_seconds = time.perf_counter() - started
            self._share()

    def _share(self) -> None:
        """Offer this state to later instances on the same connection (``_last``)."""
        global _last
        if self._conn is not None:
            _last = (self._conn, self._seen, self._key, self._sets, self._names, self._tag_bits)

    def _adopt(self, state: tuple[Any, ...]) -> None:
        (self._conn, self._seen, self._key, self._sets, self._names,
         self._tag_bits) = state

    def _load_persisted(self, conn: sqlite3.Connection, digest: str) -> bool:
        """Use the persisted sets if they were built from the index state ``digest``."""
        try:
            row = conn.execute("SELECT names, tag_bits FROM ref_sets_meta WHERE digest = ?",
                               (digest,)).fetchone()
        except sqlite3.OperationalError:  # an index without the tables (cannot migrate)
            return False
        if row is None:
            return False
        self._names = [str(n) for n in json.loads(row[0])]
        self._tag_bits = int.from_bytes(bytes(row[1]), "little")
        self._sets = _PersistedSets(conn, digest)
        self.persisted_loads += 1
        return True

    def _fallback(self, conn: sqlite3.Connection) -> None:
        """The persisted state moved under a look-up: build in memory now, and have the next
        :meth:`refresh` read the fingerprint again."""
        self._build(conn)
        self.builds += 1
        self._key = None
        self._seen = None

    def _build(self, conn: sqlite3.Connection) -> None:
        self._sets, self._names, self._tag_bits = build_sets(conn)

    def names(self, commit_id: int, max_names: int = MAX_NAMES, *, compact: bool = False
              ) -> tuple[list[str], int]:
        """(the refs containing the commit, in the order of the module docstring: the first
        ``max_names``, or with ``compact`` at most ``COMPACT_BRANCHES`` refs other than tags
        and the first tag; how many contain it)."""
        try:
            value = self._sets.get(commit_id, 0)
        except _Stale as stale:  # the persisted state moved under us: build in memory
            self._fallback(stale.conn)
            value = self._sets.get(commit_id, 0)
        if not value:
            return [], 0
        total = value.bit_count()
        if compact:
            tags = value & self._tag_bits
            out = self._lowest(value & ~self._tag_bits, COMPACT_BRANCHES)
            if tags:
                first_tag = tags & -tags
                out.append(self._names[first_tag.bit_length() - 1])
            return out, total
        return self._lowest(value, max_names), total

    def _lowest(self, value: int, n: int) -> list[str]:
        """The names of the ``n`` lowest set bits of ``value`` (display order)."""
        out: list[str] = []
        while value and len(out) < n:
            low = value & -value
            out.append(self._names[low.bit_length() - 1])
            value ^= low
        return out

    def annotate(self, conn: sqlite3.Connection, results: list[dict[str, Any]],
                 max_names: int = MAX_NAMES, *, compact: bool = False) -> None:
        """Add ``refs`` and ``refs_total`` to each result dict (found by ``hash``);
        ``compact``: see :meth:`names`."""
        if not results:
            return
        self.refresh(conn)
        hashes = [r["hash"] for r in results if "hash" in r]
        marks = ",".join("?" * len(hashes))
        ids = dict(conn.execute(
            f"SELECT hash, id FROM git_commits WHERE hash IN ({marks})", hashes).fetchall())
        for r in results:
            cid = ids.get(r.get("hash"))
            names, total = (self.names(cid, max_names, compact=compact) if cid is not None
                            else ([], 0))
            r["refs"] = names
            r["refs_total"] = total


def build_sets(conn: sqlite3.Connection) -> tuple[dict[int, int], list[str], int]:
    """(commit id -> bit set of the refs reaching it, only non-empty sets and equal sets
    shared; the ref names in bit order; the bits of tags), from the index's commit graph and
    recorded refs: one pass over every commit row (see the module docstring)."""
    ids: dict[str, int] = {}
    parents_of: dict[int, str] = {}
    for cid, commit_hash, parents in conn.execute(
        "SELECT id, hash, parents FROM git_commits"
    ):
        ids[commit_hash] = cid
        if parents:
            parents_of[cid] = parents
    repos = {int(r[0]): (r[1], i) for i, r in enumerate(
        conn.execute("SELECT id, path FROM repositories ORDER BY path"))}
    many = len(repos) > 1
    tip_time: dict[str, int] = {}
    refs: list[tuple[_Ref, int]] = []  # (ref, tip commit id)
    rows = conn.execute("SELECT repo_id, ref, tip FROM repo_refs").fetchall()
    if rows:
        for h, ts in conn.execute(
            "SELECT hash, timestamp FROM git_commits WHERE hash IN "
            "(SELECT DISTINCT tip FROM repo_refs)"
        ):
            tip_time[h] = int(ts)
    for repo_id, raw, tip in rows:
        name = ref_from_bytes(bytes(raw)) if isinstance(raw, bytes) else str(raw)
        short, kind = short_ref(name)
        shown = display_ref(short) if kind < 3 else display_ref(name)
        path, repo_order = repos.get(int(repo_id), ("", 0))
        if many:
            shown = f"{Path(path).name or path}:{shown}"
        cid = ids.get(tip)
        if cid is None:
            continue
        refs.append((_Ref(shown, (repo_order, kind,
                                  tip_time.get(tip, 0) if kind == 2 else 0, shown)), cid))
    refs.sort(key=lambda item: item[0].order)  # bit i = i-th ref in display order
    tips: dict[int, int] = {}
    for bit, (_, cid) in enumerate(refs):
        tips[cid] = tips.get(cid, 0) | (1 << bit)
    # children counts within the index, then a topological pass from the tips down
    child_count: dict[int, int] = {}
    parent_ids: dict[int, list[int]] = {}
    for cid, text in parents_of.items():
        plist = [p for p in (ids.get(h) for h in text.split()) if p is not None]
        if plist:
            parent_ids[cid] = plist
            for p in plist:
                child_count[p] = child_count.get(p, 0) + 1
    sets: dict[int, int] = {}
    interned: dict[int, int] = {}
    ready = [cid for cid in ids.values() if cid not in child_count]
    pending = dict(child_count)
    while ready:
        cid = ready.pop()
        value = sets.get(cid, 0) | tips.get(cid, 0)
        value = interned.setdefault(value, value)
        sets[cid] = value
        for p in parent_ids.get(cid, ()):
            if value:
                old = sets.get(p, 0)
                if old | value != old:
                    sets[p] = old | value
            left = pending[p] - 1
            pending[p] = left
            if left == 0:
                ready.append(p)
    return ({cid: v for cid, v in sets.items() if v}, [ref.name for ref, _ in refs],
            sum(1 << bit for bit, (ref, _) in enumerate(refs) if ref.order[1] == 2))


class _Stale(Exception):
    """The persisted sets changed between the check and a look-up."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__("persisted ref sets changed")
        self.conn = conn


class _PersistedSets:
    """The ``dict.get`` of the in-memory sets, answered from the persisted tables: one
    indexed look-up per commit (kept), checked against the digest in the same statement. A
    digest that moved since :meth:`RefContainment.refresh` raises ``_Stale``, on which
    :meth:`RefContainment.names` builds in memory and answers from that build."""

    _SQL = ("SELECT (SELECT v.bits FROM commit_ref_sets c JOIN ref_set_values v "
            "ON v.id = c.set_id WHERE c.commit_id = ?) FROM ref_sets_meta WHERE digest = ?")

    def __init__(self, conn: sqlite3.Connection, digest: str) -> None:
        self._conn = conn
        self._digest = digest
        self._cache: dict[int, int] = {}

    def get(self, commit_id: int, default: int = 0) -> int:
        cached = self._cache.get(commit_id)
        if cached is not None:
            return cached or default
        row = self._conn.execute(self._SQL, (commit_id, self._digest)).fetchone()
        if row is None:  # the persisted state changed under us
            raise _Stale(self._conn)
        value = int.from_bytes(bytes(row[0]), "little") if row[0] is not None else 0
        self._cache[commit_id] = value
        return value or default


def persisted_digest(conn: sqlite3.Connection) -> str | None:
    """The digest the persisted sets were built from, or None (none persisted)."""
    try:
        row = conn.execute("SELECT digest FROM ref_sets_meta").fetchone()
    except sqlite3.OperationalError:
        return None
    return str(row[0]) if row is not None else None


def persist_ref_sets(store: Any) -> bool:
    """Build the sets for the index state now and store them (``ref_sets_meta``,
    ``ref_set_values``, ``commit_ref_sets``), unless the stored ones already have this
    state's digest. One write transaction; the build reads inside it, so the digest and the
    sets describe the same state. ``store``: a writable ``gitquarry.store.Store``.

    :returns: whether the sets were (re)written.
    :raises IndexBusyError: another writer holds the lock past the busy timeout.
    """
    if store.read_only:
        return False
    from gitquarry.history.index.generations import (
        persisted_generations_digest,
        write_generations,
    )

    with store.atomic() as conn:
        digest = RefContainment.digest(RefContainment._fingerprint(conn))
        generations_stale = persisted_generations_digest(conn) != digest
        if generations_stale:  # the merge fold's commit generations, same state and digest
            write_generations(conn, digest)
        if persisted_digest(conn) == digest:
            return generations_stale
        sets, names, tag_bits = build_sets(conn)
        conn.execute("DELETE FROM commit_ref_sets")
        conn.execute("DELETE FROM ref_set_values")
        conn.execute("DELETE FROM ref_sets_meta")
        set_ids: dict[int, int] = {}
        for value in sets.values():
            if value not in set_ids:
                set_ids[value] = len(set_ids) + 1
        conn.executemany(
            "INSERT INTO ref_set_values (id, bits) VALUES (?, ?)",
            ((sid, _bits(value)) for value, sid in set_ids.items()))
        conn.executemany(
            "INSERT INTO commit_ref_sets (commit_id, set_id) VALUES (?, ?)",
            sorted((cid, set_ids[value]) for cid, value in sets.items()))
        conn.execute(
            "INSERT INTO ref_sets_meta (id, digest, names, tag_bits) VALUES (1, ?, ?, ?)",
            (digest, json.dumps(names, ensure_ascii=False), _bits(tag_bits)))
    return True


def _bits(value: int) -> bytes:
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "little")
