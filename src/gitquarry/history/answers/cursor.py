"""Pinned rankings behind ``next_cursor``: paging that never repeats or skips a commit.

A search that returns fewer commits than its ranking holds (``top_n`` reached, or a token
budget dropped some) pins the ranking: the ordered commits (hash, score, ranks) and the
response's facts (mode, totals) are stored under a random id, and ``next_cursor`` is
``<id>.<offset>``. A later call with that cursor returns the next commits of the *same*
ranking, whatever was indexed in between (new commits, new vectors, moved refs): the ranking
is read from the pin, only the commits' data is read from the index. So pages never hold a
commit twice and never skip one. A pinned commit that left the index since (a force-push
pruned it) is skipped with a ``cursor_commits_gone`` warning. Calling the same cursor twice
returns the same page (retries are safe).

Pins live in ``<index_dir>/cursors.db`` (its own SQLite file: the index is never written by
a search), shared by the CLI and the MCP server, for ``CURSOR_TTL_S`` seconds; at most
``MAX_PINS`` are kept. The file is in WAL mode, so a process pinning a ranking never blocks
another one reading a pin (under load a writer can hold its lock for seconds); a read that
still fails is an ``IndexBusyError`` ("try again"), never an expired cursor. A pin id is 16
letters and digits: it never starts with ``-``, so ``--cursor ID`` reads the same to every
command-line parser (the fast path leaves dash-led values to Click; ids of the old alphabet,
``_`` and ``-`` included, are still accepted). Where that file cannot be written (a
read-only index directory) pins live in the process's memory instead (good for one MCP
server; the CLI then says so); a file only locked by another process is tried again before
each use. An unknown, evicted or expired cursor raises ``CursorExpiredError``; a cursor used
with other search arguments than it was made for raises ``InvalidArgumentError``.

The ranking pinned is the search's final ranking (after the result pipeline: copies
collapsed, near-duplicates removed, merges folded), ``max(4 x top_n, 50)`` results long
(``history.answers.pin_depth``), so a cursor pages through at most that many commits.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import secrets
import sqlite3
import string
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitquarry.errors import (
    CursorExpiredError,
    GitquarryError,
    IndexBusyError,
    InvalidArgumentError,
)
from gitquarry.history.models import RANKING_FIELDS, RankingFacts
from gitquarry.store import safe_paths

#: seconds a pinned ranking is kept
CURSOR_TTL_S = 3600
#: pins kept at most (oldest evicted first)
MAX_PINS = 2000
#: commits a pin holds at most
MAX_PINNED = 800
FILE_NAME = "cursors.db"
#: milliseconds a pin read or write waits for another process's lock (the index's own)
BUSY_TIMEOUT_MS = 10_000
#: the characters of a new pin id (no ``-``: see the module docstring)
_ID_ALPHABET = string.ascii_letters + string.digits
_CURSOR = re.compile(r"([A-Za-z0-9_-]{16})\.(\d{1,6})")


@dataclass(frozen=True, kw_only=True)
class PinnedHit(RankingFacts):
    """One commit of a pinned ranking: its hash and the ranking facts of the first call
    (``copies``, ``copies_omitted`` and ``pipeline`` too, so later pages carry the fields the
    first one does)."""

    hash: str

    def to_row(self) -> list[Any]:
        """The stored form: ``[hash, score, lexical_rank, …]`` (``RANKING_FIELDS`` order)."""
        return [self.hash, *(getattr(self, name) for name in RANKING_FIELDS)]

    @classmethod
    def from_row(cls, row: list[Any]) -> PinnedHit:
        """The inverse of ``to_row`` (pins written before the later fields existed load
        with their defaults)."""
        return cls(hash=row[0], **dict(zip(RANKING_FIELDS, row[1:], strict=False)))


@dataclass
class Pin:
    """A pinned ranking: ``hits`` in order, ``params`` the digest of the search arguments,
    ``meta`` the first response's facts (``total_commits_indexed``, modes, ...)."""

    hits: list[PinnedHit]
    params: str
    meta: dict[str, Any]
    created_at: float


def params_digest(params: dict[str, Any]) -> str:
    """A digest of the search arguments that define a ranking (query, filters, mode)."""
    text = json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def parse_cursor(cursor: str) -> tuple[str, int]:
    """(pin id, offset) of ``cursor``. :raises InvalidArgumentError: not a cursor."""
    found = _CURSOR.fullmatch(cursor.strip()) if isinstance(cursor, str) else None
    if found is None:
        raise InvalidArgumentError(
            "cursor", f"{str(cursor)[:80]!r} is not a cursor (pass next_cursor exactly as given)"
        )
    return found.group(1), int(found.group(2))


class CursorStore:
    """Pinned rankings of one index (see the module docstring). Thread-safe."""

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / FILE_NAME
        self._lock = threading.Lock()
        self._memory: dict[str, Pin] = {}
        self._conn: sqlite3.Connection | None = None
        self.persistent = True
        #: why the pins are kept in memory only (None while ``persistent``)
        self.problem: str | None = None
        #: the file was only locked by another process: try it again before each use
        self._retry_open = False
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # read-only, locked, cannot open
                self._memory_only(exc)
            else:  # not a database / malformed: the pins are a 1-hour cache, start afresh
                try:
                    for suffix in safe_paths.SQLITE_SUFFIXES:
                        safe_paths.unlink_regular(Path(f"{self.path}{suffix}"))
                    self._conn = self._open()
                except (sqlite3.Error, OSError, GitquarryError) as again:
                    self._memory_only(again)
        except (sqlite3.Error, OSError, GitquarryError) as exc:
            self._memory_only(exc)

    def _open(self) -> sqlite3.Connection:
        """:raises IndexPathUnsafeError: ``cursors.db`` (or its directory, -wal, -shm) is a
        link or not a regular file: never followed (the pins then live in memory)."""
        safe_paths.check_sqlite_files(self.path)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS pins (id TEXT PRIMARY KEY, created_at REAL NOT NULL, "
                "params TEXT NOT NULL, meta TEXT NOT NULL, hits TEXT NOT NULL)"
            )
            conn.commit()
        except BaseException:
            conn.close()
            raise
        try:  # the pruning in ``pin`` by age (a file made before the index gets it here)
            conn.execute("CREATE INDEX IF NOT EXISTS pins_created_at ON pins(created_at)")
            conn.commit()
        except sqlite3.OperationalError:  # read-only: ``get`` works without it
            conn.rollback()
        return conn

    def _memory_only(self, exc: BaseException) -> None:
        self.persistent = False
        self.problem = f"{self.path.name} cannot be used ({exc})"
        self._retry_open = isinstance(exc, sqlite3.Error) and _busy(exc)

    def _reconnect(self) -> sqlite3.Error | None:
        """Open the file again when it was only locked (the lock held); the error when it
        still is, else None."""
        if self._conn is not None or not self._retry_open:
            return None
        try:
            self._conn = self._open()
        except sqlite3.Error as exc:
            if _busy(exc):
                return exc
            self._memory_only(exc)
            return None
        except (OSError, GitquarryError) as exc:
            self._memory_only(exc)
            return None
        self.persistent, self.problem, self._retry_open = True, None, False
        return None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def pin(self, hits: list[PinnedHit], params: str, meta: dict[str, Any]) -> str:
        """Store a ranking; returns its id."""
        pin_id = new_pin_id()
        now = time.time()
        hits = hits[:MAX_PINNED]
        with self._lock:
            self._reconnect()
            if self._conn is not None:
                try:
                    self._conn.execute(
                        "INSERT INTO pins VALUES (?, ?, ?, ?, ?)",
                        (pin_id, now, params, json.dumps(meta),
                         json.dumps([h.to_row() for h in hits])),
                    )
                    # both on the created_at index: a pin scanned and sorted every pin
                    # before (8.4 ms CPU per call with 1,249 pins on the MCP server)
                    self._conn.execute("DELETE FROM pins WHERE created_at < ?",
                                       (now - CURSOR_TTL_S,))
                    self._conn.execute(
                        "DELETE FROM pins WHERE created_at < (SELECT created_at FROM pins "
                        "ORDER BY created_at DESC LIMIT 1 OFFSET ?)", (MAX_PINS - 1,))
                    self._conn.commit()
                    return pin_id
                except sqlite3.Error as exc:
                    self._memory_only(exc)
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.close()  # rolls back: no lock left held
                    self._conn = None
            self._memory[pin_id] = Pin(hits, params, meta, now)
            for old in [k for k, p in self._memory.items() if p.created_at < now - CURSOR_TTL_S]:
                del self._memory[old]
            while len(self._memory) > MAX_PINS:
                del self._memory[next(iter(self._memory))]
        return pin_id

    def get(self, cursor: str, params: str) -> tuple[Pin, int]:
        """The pin and offset ``cursor`` names.

        :raises InvalidArgumentError: not a cursor, or made for other search arguments.
        :raises CursorExpiredError: unknown, evicted or older than ``CURSOR_TTL_S`` (or the
            store's file is damaged).
        :raises IndexBusyError: another process kept ``cursors.db`` locked past
            ``BUSY_TIMEOUT_MS`` (the pin may well exist: try again).
        """
        pin_id, offset = parse_cursor(cursor)
        pin: Pin | None = None
        with self._lock:
            if pin_id not in self._memory and (still := self._reconnect()) is not None:
                raise IndexBusyError(self.path) from still  # the pin may be there
            if pin_id in self._memory:
                pin = self._memory[pin_id]
            elif self._conn is not None:
                try:
                    row = self._conn.execute(
                        "SELECT created_at, params, meta, hits FROM pins WHERE id = ?", (pin_id,)
                    ).fetchone()
                except sqlite3.Error as exc:
                    if _busy(exc):  # another process held its lock past the timeout
                        raise IndexBusyError(self.path) from exc
                    raise CursorExpiredError(  # a damaged store: its pins are lost
                        cursor, f"{FILE_NAME} cannot be read: {exc}") from exc
                if row is not None:
                    pin = Pin([PinnedHit.from_row(h) for h in json.loads(row[3])], row[1],
                              json.loads(row[2]), float(row[0]))
        if pin is None:
            raise CursorExpiredError(cursor, "no such ranking is kept any more")
        if pin.created_at < time.time() - CURSOR_TTL_S:
            raise CursorExpiredError(cursor, f"rankings are kept for {CURSOR_TTL_S // 60} minutes")
        if pin.params != params:
            raise InvalidArgumentError(
                "cursor", "it was made for another search: pass the same query and filters "
                "(detail, max_tokens and top_n may change)")
        if offset > len(pin.hits):
            raise InvalidArgumentError("cursor", "its offset lies past the end of the ranking")
        return pin, offset


def _busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" / "busy" (worth a retry)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def new_pin_id() -> str:
    """A random pin id: 16 ASCII letters and digits (about 95 bits)."""
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(16))


def make_cursor(pin_id: str, offset: int) -> str:
    return f"{pin_id}.{offset}"
