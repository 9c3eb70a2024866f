"""The connection factory and transaction helper for a gitquarry index file.

One ``Store`` wraps one ``sqlite3.Connection`` opened in autocommit mode (transactions are
explicit, via ``atomic``). Pragmas: WAL journal (readers never block the writer),
``synchronous=NORMAL``, foreign keys on, 10 s busy timeout; SQL functions from
``retrieval.tokenize.register_functions`` (the FTS5 triggers need them). Opening applies pending
migrations. Any SQLite "not a database" / "malformed" failure becomes ``IndexCorruptError``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from gitquarry.errors import (
    IndexAccessError,
    IndexBusyError,
    IndexCorruptError,
    SchemaTooNewError,
)
from gitquarry.retrieval.tokenize import register_functions
from gitquarry.store.capabilities import has_table

if TYPE_CHECKING:
    from gitquarry.store.migrations import Migrations

BUSY_TIMEOUT_MS = 10_000
#: Tables every index must hold after migrating; one missing means the file was tampered with.
REQUIRED_TABLES = (
    "_migrations", "repositories", "repo_refs", "git_commits", "repo_commits", "paths",
    "commit_paths", "embedding_namespaces", "commit_vectors", "nodes", "edges", "docs", "chunks",
)


def _is_corruption(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or (
        isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
    )


def _is_access(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM) or (
        code is not None and code & 0xFF == sqlite3.SQLITE_READONLY
    )


def _is_busy(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class Store:
    """An open index database. Use ``atomic()`` for every write.

    ``path`` is the database file; ``conn`` the raw connection (row factory ``sqlite3.Row``).
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        self._depth = 0

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """A transaction (``BEGIN IMMEDIATE``) or, when nested, a savepoint.

        Commits on normal exit, rolls back on any exception (which propagates).
        :raises IndexBusyError: when another writer holds the lock past the busy timeout.
        """
        conn = self.conn
        name = f"gq_sp_{self._depth}"
        try:
            if self._depth == 0:
                conn.execute("BEGIN IMMEDIATE")
            else:
                conn.execute(f"SAVEPOINT {name}")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise IndexBusyError(self.path) from exc
            raise
        self._depth += 1
        try:
            yield conn
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                conn.execute("ROLLBACK")
            else:
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
            raise
        else:
            self._depth -= 1
            if self._depth == 0:
                conn.execute("COMMIT")
            else:
                conn.execute(f"RELEASE {name}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def size_bytes(self) -> int:
        """Bytes on disk of the database file plus its WAL."""
        total = 0
        for suffix in ("", "-wal"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total


def open_store(
    path: Path,
    *,
    migrate: bool = True,
    migrations: Migrations | None = None,
    required_tables: tuple[str, ...] | None = None,
) -> Store:
    """Open (creating if needed) the index database at ``path`` and apply pending migrations.

    ``migrations``/``required_tables`` select another database's schema (the repository-docs
    cache is its own file with its own migration set); default: the main index's.

    :raises IndexCorruptError: the file exists but is not a readable SQLite database.
    :raises SchemaTooNewError: the file was written by a newer gitquarry.
    :raises IndexBusyError: another process holds the write lock past the busy timeout.
    """
    from gitquarry.store.migrations import MIGRATIONS
    from gitquarry.store.schema import register_all

    register_all()
    if migrations is None:
        migrations = MIGRATIONS
    if required_tables is None:
        required_tables = REQUIRED_TABLES
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IndexAccessError(path.parent, exc.strerror or str(exc)) from exc
    if path.exists() and not path.is_file():
        raise IndexAccessError(path, "it is not a regular file")
    try:
        conn = sqlite3.connect(
            str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise IndexCorruptError(path, str(exc)) from exc
    conn.row_factory = sqlite3.Row
    register_functions(conn)  # FTS5 triggers call gq_index_text
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(migrations.names):
            conn.close()
            raise SchemaTooNewError(path, version, len(migrations.names))
        if migrate:
            try:
                migrations.apply(conn)
            except sqlite3.OperationalError as exc:
                if _is_busy(exc) or _is_access(exc):
                    raise
                # e.g. "table nodes already exists": the recorded steps and the tables disagree
                raise IndexCorruptError(path, f"schema migration failed: {exc}") from exc
            missing = [t for t in required_tables if not has_table(conn, t)]
            if missing:
                raise IndexCorruptError(path, f"missing tables: {', '.join(missing)}")
    except sqlite3.Error as exc:
        conn.close()
        if _is_busy(exc):
            raise IndexBusyError(path) from exc
        if _is_access(exc):
            raise IndexAccessError(path, str(exc)) from exc
        if _is_corruption(exc):
            raise IndexCorruptError(path, str(exc)) from exc
        raise
    except BaseException:
        conn.close()
        raise
    return Store(path, conn)


def translate_sqlite_error(path: Path, exc: sqlite3.Error) -> Exception:
    """Map a sqlite3 error raised while using ``path`` to a gitquarry error where one fits."""
    if _is_busy(exc):
        return IndexBusyError(path)
    if _is_access(exc):
        return IndexAccessError(path, str(exc))
    if _is_corruption(exc):
        return IndexCorruptError(path, str(exc))
    return exc
