"""The connection factory and transaction helper for a gitquarry index file.

One ``Store`` wraps one ``sqlite3.Connection`` opened in autocommit mode (transactions are
explicit, via ``atomic``). Pragmas: WAL journal (readers never block the writer),
``synchronous=NORMAL``, foreign keys on, 10 s busy timeout; SQL functions from
``retrieval.tokenize.register_functions`` (the FTS5 triggers need them); then every
connection hook (``add_connection_hook``). Opening applies pending migrations.

An index that cannot be written (a read-only directory or mount, another user's file) is
opened read-only (``mode=ro``, or ``immutable=1`` when SQLite cannot create the WAL's shared
memory file next to it): searches work, ``Store.read_only`` is True, and writes fail.

Storage failures are translated in one place, :func:`translate_storage_error`, whichever
surface meets them (CLI, MCP, daemon, web page): corruption → ``IndexCorruptError``, disk full
→ ``IndexFullError``, I/O → ``IndexIOError``, permissions / read-only → ``IndexAccessError``,
lock contention → ``IndexBusyError``. Anything else is a bug and stays a ``sqlite3.Error``.
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from gitquarry.errors import (
    GitquarryError,
    IndexAccessError,
    IndexBusyError,
    IndexCorruptError,
    IndexFullError,
    IndexIOError,
    IndexReadOnlyError,
    IndexSchemaOutdatedError,
    IndexUntrustedError,
    NoIndexError,
    SchemaTooNewError,
)
from gitquarry.retrieval.tokenize import register_functions
from gitquarry.store import safe_paths, trust
from gitquarry.store.capabilities import has_table
from gitquarry.store.compression import register_functions as register_compression
from gitquarry.store.compression import take_sql_damage
from gitquarry.store.current import _current_path

if TYPE_CHECKING:
    from gitquarry.store.migrations import Migrations

BUSY_TIMEOUT_MS = 10_000
#: Tables every index must hold after migrating; one missing means the file was tampered with.
REQUIRED_TABLES = (
    "_migrations", "repositories", "repo_refs", "git_commits", "repo_commits", "paths",
    "commit_paths", "embedding_namespaces", "commit_vectors", "nodes", "edges", "docs", "chunks",
)


def _code(exc: sqlite3.Error) -> int | None:
    """The primary SQLite result code of ``exc`` (extended codes folded), or None."""
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _is_corruption(exc: sqlite3.Error) -> bool:
    return _code(exc) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or (
        type(exc) is sqlite3.DatabaseError and _code(exc) is None
    )


def _is_access(exc: sqlite3.Error) -> bool:
    return _code(exc) in (
        sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM,
        sqlite3.SQLITE_AUTH,
    )


def _is_busy(exc: sqlite3.Error) -> bool:
    return _code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)



ConnectionHook = Callable[[sqlite3.Connection], None]
_hooks: list[ConnectionHook] = []


def add_connection_hook(hook: ConnectionHook) -> None:
    """Run ``hook(conn)`` on every connection ``open_store`` makes, after gitquarry's own
    pragmas and before migrations (plugins, diagnostics, tests; e.g. ``PRAGMA
    max_page_count``)."""
    _hooks.append(hook)


def remove_connection_hook(hook: ConnectionHook) -> None:
    """Undo ``add_connection_hook``; no error when ``hook`` is not registered."""
    if hook in _hooks:
        _hooks.remove(hook)


def translate_storage_error(
    exc: BaseException, path: Path | None = None
) -> GitquarryError | None:
    """The typed error for a storage failure, or None when ``exc`` is not one (a bug).

    ``path`` is the index file; default: the one most recently opened in this context.
    Every surface calls this (or :func:`storage_errors`) at its edge.
    """
    if isinstance(exc, GitquarryError):
        return exc
    if not isinstance(exc, sqlite3.Error):
        if isinstance(exc, OSError) and exc.errno is not None:
            import errno

            where = path or _current_path.get() or Path("index.db")
            if exc.errno == errno.ENOSPC:
                return IndexFullError(where, exc.strerror or str(exc))
        return None
    where = path or _current_path.get() or Path("index.db")
    code = _code(exc)
    detail = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and "user-defined function" in detail:
        damage = take_sql_damage()  # a damaged compressed diff read in SQL (gq_inflate)
        if damage is not None:
            return IndexCorruptError(where, damage.detail)
    if _is_busy(exc):
        return IndexBusyError(where)
    if code == sqlite3.SQLITE_FULL:
        return IndexFullError(where, detail)
    if code == sqlite3.SQLITE_IOERR:
        return IndexIOError(where, detail)
    if code == sqlite3.SQLITE_READONLY:
        return IndexReadOnlyError(where, detail)
    if _is_access(exc):
        return IndexAccessError(where, f"{detail}; check the permissions of {where} and its "
                                "directory")
    if _is_corruption(exc):
        return IndexCorruptError(where, detail)
    return None


@contextmanager
def storage_errors(path: Path | None = None) -> Iterator[None]:
    """Re-raise storage failures inside the block as their typed errors
    (:func:`translate_storage_error`); anything else propagates unchanged."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        typed = translate_storage_error(exc, path)
        if typed is None or typed is exc:
            raise
        raise typed from exc


class Store:
    """An open index database. Use ``atomic()`` for every write.

    ``path`` is the database file; ``conn`` the raw connection (row factory ``sqlite3.Row``).
    """

    def __init__(self, path: Path, conn: sqlite3.Connection, *, read_only: bool = False) -> None:
        self.path = path
        self.conn = conn
        #: opened read-only (the index cannot be written here); writes fail.
        self.read_only = read_only
        #: what opening did that the user should hear of (an index adopted or set aside)
        self.notices: list[str] = []
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
            # SQLite rolls back by itself on some errors (SQLITE_FULL, SQLITE_IOERR, ...):
            # then there is nothing left to undo, and the original error is what matters
            if conn.in_transaction:
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


def read_only_note(path: Path) -> str:
    """The message surfaces show when they answer from a read-only index (code
    ``index_read_only``)."""
    return (f"the index {path} is read-only here: searches work, but it cannot be updated "
            "(`gitquarry index` needs write access to its directory)")


def _sqlite_connect(target: str, *, uri: bool = False) -> sqlite3.Connection:
    return sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False, uri=uri)


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    if not read_only:
        return _sqlite_connect(str(path))
    uri = "file:" + urllib.parse.quote(str(path))
    conn = _sqlite_connect(uri + "?mode=ro", uri=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if _code(exc) != sqlite3.SQLITE_CANTOPEN:
            raise
    # WAL needs a -shm file it cannot create here: read the file as it stands
    return _sqlite_connect(uri + "?mode=ro&immutable=1", uri=True)


def open_store(
    path: Path,
    *,
    migrate: bool = True,
    migrations: Migrations | None = None,
    required_tables: tuple[str, ...] | None = None,
    read_only: bool = False,
    writer: bool = False,
    initialise: bool = True,
    upgrade: bool = True,
) -> Store:
    """Open the index database at ``path`` (creating it unless ``read_only``) and apply
    pending migrations (never when ``read_only``).

    Only a database this installation created is opened (``store.trust``): a new one gets an
    owner token. An existing one without a recorded token raises ``IndexUntrustedError``,
    unless ``writer`` (a command that builds the index), which sets a foreign one aside and
    builds a new one, or adopts a legacy one (no token: an older gitquarry); what it did is in
    ``store.notices``. The callers check first that git tracks nothing in the directory.
    ``path``, its directory, ``-wal``, ``-shm`` and ``-journal`` must not be links or
    non-regular files (``store.safe_paths``).

    ``migrations``/``required_tables`` select another database's schema (the repository-docs
    cache is its own file with its own migration set); default: the main index's.

    ``initialise=False`` (a read): a database with no schema yet (a zero-byte file, a SQLite
    file with no table, or one holding only an owner stamp: an index being created) is not
    initialised here but raises ``NoIndexError``, before anything is written (its
    ``workspace`` is the file's directory: the caller names its own).

    ``upgrade=False`` (a read): an index an older gitquarry wrote (schema version below this
    one's) is not migrated here but raises ``IndexSchemaOutdatedError``, before anything is
    written: only a command that builds the index (and holds the writer lease) upgrades it.

    :raises IndexCorruptError: the file exists but is not a readable SQLite database.
    :raises SchemaTooNewError: the file was written by a newer gitquarry.
    :raises IndexBusyError: another process holds the write lock past the busy timeout.
    :raises IndexReadOnlyError: ``read_only`` and the file needs a schema upgrade.
    :raises IndexAccessError, IndexFullError, IndexIOError: see the module docstring.
    :raises IndexPathUnsafeError: a link or non-regular file where the database lives.
    :raises IndexUntrustedError: not created by this installation (and not ``writer``).
    :raises NoIndexError: ``initialise`` is False and the database has no schema yet.
    :raises IndexSchemaOutdatedError: ``upgrade`` is False and the schema is an older one.
    """
    from gitquarry.store.migrations import MIGRATIONS
    from gitquarry.store.schema import register_all

    register_all()
    if migrations is None:
        migrations = MIGRATIONS
    if required_tables is None:
        required_tables = REQUIRED_TABLES
    if not read_only:
        safe_paths.ensure_state_dir(path.parent)
    existed = safe_paths.check_sqlite_files(path)  # never a link, FIFO, ... (nor its -wal)
    if not existed and not read_only:
        for suffix in ("-wal", "-shm", "-journal"):  # left by a deleted database: never replay
            safe_paths.unlink_regular(Path(f"{path}{suffix}"))
    _current_path.set(path)
    try:
        conn = _connect(path, read_only=read_only)
    except sqlite3.Error as exc:
        raise translate_storage_error(exc, path) or IndexCorruptError(path, str(exc)) from exc
    conn.row_factory = sqlite3.Row
    register_functions(conn)  # FTS5 triggers call gq_index_text / gq_index_diff
    register_compression(conn)  # ... and gq_inflate
    notices: list[str] = []
    adopt = False
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if existed:  # ours? read before anything is written or migrated
            kind = trust.classify(conn)
            if not initialise and (kind == "empty" or (
                    kind == "ours" and conn.execute("PRAGMA user_version").fetchone()[0] == 0)):
                raise NoIndexError(path.parent)  # nothing indexed yet: a read writes nothing
            if kind == "empty":
                existed = False  # nothing in it to trust or distrust: stamped as new
            elif kind != "ours":
                if not writer or read_only:
                    raise IndexUntrustedError(path, kind, trust.records_dir())
                if kind == "foreign":
                    conn.close()
                    aside = trust.set_aside(path)
                    store = open_store(path, migrate=migrate, migrations=migrations,
                                       required_tables=required_tables, writer=True)
                    store.notices.insert(0, (
                        f"{path} was not created by this installation (its owner token is "
                        f"not recorded): set it aside as {aside.name} and built a new one"))
                    return store
                adopt = True
        if not read_only:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -65536")
        for hook in list(_hooks):
            hook(conn)
        if not read_only and not existed:  # stamped before its first table: never unowned
            trust.stamp(conn, path)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(migrations.names):
            conn.close()
            raise SchemaTooNewError(path, version, len(migrations.names))
        if not upgrade and not read_only and 0 < version < len(migrations.names):
            raise IndexSchemaOutdatedError(path, version, len(migrations.names))
        if read_only and version < len(migrations.names):
            raise IndexReadOnlyError(
                path, f"it has schema version {version} and this gitquarry needs "
                f"{len(migrations.names)}, an upgrade it cannot write"
            )
        if migrate and not read_only:
            try:
                migrations.apply(conn)
            except sqlite3.OperationalError as exc:
                if translate_storage_error(exc, path) is not None:
                    raise
                # e.g. "table nodes already exists": the recorded steps and the tables disagree
                raise IndexCorruptError(path, f"schema migration failed: {exc}") from exc
        if migrate or read_only:
            missing = [t for t in required_tables if not has_table(conn, t)]
            if missing:
                raise IndexCorruptError(path, f"missing tables: {', '.join(missing)}")
        if not read_only and adopt:
            trust.stamp(conn, path)
            notices.append(f"adopted {path}, made by an older gitquarry: it now carries "
                               "this installation's owner token")
    except sqlite3.Error as exc:
        conn.close()
        typed = translate_storage_error(exc, path)
        if typed is None:
            raise
        raise typed from exc
    except BaseException:
        conn.close()
        raise
    store = Store(path, conn, read_only=read_only)
    store.notices.extend(notices)
    return store


def translate_sqlite_error(path: Path, exc: sqlite3.Error) -> Exception:
    """``translate_storage_error(exc, path)``, or ``exc`` itself when it is no storage
    condition (kept for callers that re-raise the result)."""
    return translate_storage_error(exc, path) or exc
