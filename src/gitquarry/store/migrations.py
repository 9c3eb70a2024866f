"""Named, ordered schema migrations recorded in the ``_migrations`` table.

Each corpus's schema module registers its steps on the shared ``MIGRATIONS`` set with a
decorator. A step runs in the same transaction that records it, so a crash leaves either
both or neither. ``PRAGMA user_version`` mirrors the number of applied steps, which lets an
older gitquarry detect a newer index (``SchemaTooNewError``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

MigrationFn = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True)
class _Migration:
    name: str
    fn: MigrationFn


class Migrations:
    """An ordered set of named migrations. Names must be unique; order is registration order."""

    def __init__(self) -> None:
        self._steps: list[_Migration] = []

    def __call__(self, name: str) -> Callable[[MigrationFn], MigrationFn]:
        """Decorator: register ``fn`` as migration ``name``.

        :raises ValueError: if ``name`` is already registered.
        """

        def register(fn: MigrationFn) -> MigrationFn:
            if any(step.name == name for step in self._steps):
                raise ValueError(f"duplicate migration name: {name}")
            self._steps.append(_Migration(name, fn))
            return fn

        return register

    @property
    def names(self) -> list[str]:
        return [step.name for step in self._steps]

    def pending(self, conn: sqlite3.Connection) -> list[str]:
        """Names not yet applied to ``conn``'s database, in order."""
        self._ensure_table(conn)
        done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
        return [step.name for step in self._steps if step.name not in done]

    def apply(self, conn: sqlite3.Connection) -> list[str]:
        """Apply every pending migration, each in its own transaction. Returns names applied.
        Each step is checked again under the write lock: a step another connection applied
        meanwhile is skipped (two processes may upgrade one database at once).

        :raises sqlite3.Error: if a step fails; that step is rolled back, earlier ones stay.
        """
        self._ensure_table(conn)
        done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
        applied: list[str] = []
        for step in self._steps:
            if step.name in done:
                continue
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("SELECT 1 FROM _migrations WHERE name = ?",
                                (step.name,)).fetchone() is not None:
                    # another connection applied it between our read and this lock (a
                    # docs search and the docs indexer upgrading one cache at once)
                    conn.execute("COMMIT")
                    continue
                step.fn(conn)
                conn.execute(
                    "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                    (step.name, int(time.time())),
                )
                count = conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]
                conn.execute(f"PRAGMA user_version = {int(count)}")
                conn.execute("COMMIT")
            except BaseException:
                # SQLite may already have rolled back (SQLITE_FULL, SQLITE_IOERR): a second
                # ROLLBACK would raise and hide the real error (a full disk read as corrupt)
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            applied.append(step.name)
        return applied

    @staticmethod
    def _ensure_table(conn: sqlite3.Connection) -> None:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS _migrations ("
            " name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
        )


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute a multi-statement SQL script inside the caller's transaction.

    Unlike ``Connection.executescript`` this never commits first, so a migration step and its
    record stay atomic. Statements are split with ``sqlite3.complete_statement`` (trigger
    bodies with inner ``;`` stay whole).
    """
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            if statement:
                conn.execute(statement)
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement: {buffer.strip()[:80]}")


#: The project's one migration set. Schema modules in ``gitquarry.store.schema`` register on it.
MIGRATIONS = Migrations()
