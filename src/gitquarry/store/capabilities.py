"""What this process's SQLite can do."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Protocol


class _Store(Protocol):
    """What :func:`require_commit_fts` reads of a ``store.connection.Store``."""

    conn: sqlite3.Connection
    path: Path

_NO_FTS5_CODES = (sqlite3.SQLITE_ERROR, sqlite3.SQLITE_AUTH)


def fts5_available(conn: sqlite3.Connection) -> bool:
    """Whether ``conn`` can create FTS5 tables (probed with a throwaway temp table).

    The probe failing with ``SQLITE_ERROR`` (``no such module: fts5``: SQLite built without
    FTS5) or ``SQLITE_AUTH`` (an authorizer forbids the virtual table) means "not
    available"; the error code decides, never the message text.
    :raises sqlite3.DatabaseError: any other failure (corruption, I/O), unchanged.
    """
    try:
        conn.execute("CREATE VIRTUAL TABLE temp._gq_fts5_probe USING fts5(x)")
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) in _NO_FTS5_CODES:
            return False
        raise
    conn.execute("DROP TABLE temp._gq_fts5_probe")
    return True


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the main schema holds a table (or virtual table) called ``name``."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def require_commit_fts(store: _Store) -> None:
    """Check that the commit-history FTS5 index exists.

    :raises Fts5UnavailableError: this SQLite has no FTS5, so the index was created without it.
    :raises IndexCorruptError: FTS5 is available but the table is gone (the file was altered).
    """
    from gitquarry.errors import Fts5UnavailableError, IndexCorruptError

    if has_table(store.conn, "commit_fts"):
        return
    if fts5_available(store.conn):
        raise IndexCorruptError(store.path, "the commit_fts full-text table is missing")
    raise Fts5UnavailableError()
