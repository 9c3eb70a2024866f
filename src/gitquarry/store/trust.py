"""Which index files are ours: an owner token in the database, recorded in the user's state.

A checkout (or an archive) can ship a plausible ``index.db`` or ``repo_docs.db`` full of
forged commits. So every database gitquarry creates through ``open_store`` gets a random
owner token (128 bits, hex) in its table ``_gitquarry_owner``, and the token is recorded as a
file ``<user state dir>/owned-indexes/<token>`` (mode 0600 in a 0700 directory; its content is
the database's real path when it was created, for people reading the directory). Opening an
existing database reads the token first, before any write or migration:

* a token recorded here: ours (it moved with its workspace: still ours);
* a token not recorded here (``foreign``): another installation, another user, a forgery;
* no token at all (``legacy``): a gitquarry older than this scheme, or a forgery of one.

Readers refuse both with ``IndexUntrustedError``. A writer (``gitquarry index``,
``graph reindex``, ``repo-docs index``, the daemon's jobs) sets a foreign one aside (renamed
to ``<name>.untrusted-<UTC time>``, with its ``-wal``/``-shm``) and builds a new one, and
adopts a legacy one (stamps and records a token, keeping its contents) with a notice. The
callers only let a writer do either after checking that git tracks nothing in the directory
(``safe_paths.refuse_tracked``): a file that came with the checkout is never adopted.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from pathlib import Path

from gitquarry.errors import IndexAccessError
from gitquarry.store import safe_paths
from gitquarry.store.capabilities import has_table

OWNER_TABLE = "_gitquarry_owner"
RECORDS_DIR_NAME = "owned-indexes"
_TOKEN = re.compile(r"[0-9a-f]{32}")


def records_dir() -> Path:
    """``<user state dir>/owned-indexes`` (not created)."""
    from gitquarry.store.user_state import state_dir

    return state_dir() / RECORDS_DIR_NAME


def read_token(conn: sqlite3.Connection) -> str | None:
    """The owner token stored in ``conn``'s database, or None (no table, no row, or a
    value that is not a token).

    :raises sqlite3.Error: the file cannot be read (corrupt, not a database, busy).
    """
    if not has_table(conn, OWNER_TABLE):
        return None
    row = conn.execute(f"SELECT token FROM {OWNER_TABLE} LIMIT 1").fetchone()
    token = row[0] if row is not None else None
    return token if isinstance(token, str) and _TOKEN.fullmatch(token) else None


def is_recorded(token: str) -> bool:
    """Whether this installation (this user's state directory) created the token's index."""
    if not _TOKEN.fullmatch(token):
        return False
    try:
        return safe_paths.check_regular(records_dir() / token)
    except IndexAccessError:
        return False


def _record(token: str, db_path: Path) -> None:
    directory = records_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
    except OSError as exc:
        raise IndexAccessError(
            directory, f"{exc.strerror or exc}; gitquarry records the indexes it creates "
            "there (set XDG_STATE_HOME to a writable directory)",
        ) from exc
    # the path as the file system spells it (a non-UTF-8 name is bytes, not an error)
    safe_paths.write_small(directory / token, os.fsencode(db_path.resolve()) + b"\n",
                           mode=0o600)


def stamp(conn: sqlite3.Connection, db_path: Path) -> str:
    """Give the database a new owner token and record it. Returns the token.

    The record is written first: a crash in between leaves a record nobody holds (harmless),
    never a token nobody recorded.
    :raises IndexAccessError: the state directory cannot be written.
    """
    import secrets  # only here: hmac/hashlib at import cost every query (issue 21 §1)

    token = secrets.token_hex(16)
    _record(token, db_path)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {OWNER_TABLE} (token TEXT NOT NULL)")
        conn.execute(f"DELETE FROM {OWNER_TABLE}")
        conn.execute(f"INSERT INTO {OWNER_TABLE} (token) VALUES (?)", (token,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return token


def classify(conn: sqlite3.Connection) -> str:
    """``"ours"``, ``"foreign"`` or ``"legacy"`` (see the module docstring), or ``"empty"``:
    a database with no schema at all (a file another gitquarry process has just created and
    not yet stamped, or an empty file: nothing in it can be forged), treated as new.

    :raises sqlite3.Error: the file cannot be read.
    """
    token = read_token(conn)
    if token is None:
        if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            return "empty"
        return "legacy"
    return "ours" if is_recorded(token) else "foreign"


def set_aside(db_path: Path) -> Path:
    """Rename the database and its companion files to ``<name>.untrusted-<UTC time>``
    (``-wal``/``-shm``/``-journal`` keep their suffix). Returns the new database path.

    :raises IndexPathUnsafeError: one of them is a link or not a regular file.
    :raises IndexAccessError: a rename failed.
    """
    when = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = db_path.with_name(f"{db_path.name}.untrusted-{when}")
    n = 1
    while safe_paths.check_regular(target):
        n += 1
        target = db_path.with_name(f"{db_path.name}.untrusted-{when}-{n}")
    for suffix in safe_paths.SQLITE_SUFFIXES:
        source = Path(f"{db_path}{suffix}")
        if safe_paths.check_regular(source):
            try:
                os.rename(source, Path(f"{target}{suffix}"))
            except OSError as exc:
                raise IndexAccessError(source, exc.strerror or str(exc)) from exc
    return target
