"""The daemon's durable state: jobs, cancel tombstones, job events and watched workspaces.

One SQLite file, ``<state dir>/daemon.db`` (mode 0600, WAL), written only by the daemon
through one connection guarded by a lock. Public job ids are ``job-%06d`` of the row id.
Absolute paths live only in ``workspaces.path``; nothing read from here for a public payload
carries them (see ``Job.to_public``).

Cancellation writes two things in two transactions: the tombstone (the durable admission
record; a cancel is acknowledged only once it commits) and then the job's terminal status.
If the second write is lost, ``recover`` rebuilds ``cancelled`` from the tombstone, but only
when the tombstone's job, type, scope, generation, target and work key all match the job.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitquarry.errors import JobStateWriteError
from gitquarry.store.migrations import Migrations, run_script

#: job statuses; the last four are terminal (``failed`` with a retry time is not).
STATUSES = ("queued", "running", "interrupted", "succeeded", "superseded", "failed", "cancelled")
ACTIVE = ("queued", "running", "interrupted")
TERMINAL = ("succeeded", "superseded", "failed", "cancelled")

STATE_MIGRATIONS = Migrations()


@STATE_MIGRATIONS("0001_jobs")
def _m0001(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY,
            type TEXT NOT NULL,
            scope TEXT NOT NULL,
            generation INTEGER NOT NULL,
            target TEXT NOT NULL,
            work_key TEXT NOT NULL,
            params TEXT NOT NULL,
            status TEXT NOT NULL,
            origin TEXT NOT NULL,
            priority INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            runs INTEGER NOT NULL DEFAULT 0,
            coalesced INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            started_at REAL,
            finished_at REAL,
            not_before REAL,
            progress TEXT,
            result TEXT,
            error TEXT,
            waiting_for TEXT
        );
        CREATE INDEX jobs_by_status ON jobs (status, priority, id);
        CREATE INDEX jobs_by_work ON jobs (type, scope, generation, status);
        CREATE TABLE tombstones (
            job_id INTEGER PRIMARY KEY,
            type TEXT NOT NULL,
            scope TEXT NOT NULL,
            generation INTEGER NOT NULL,
            target TEXT NOT NULL,
            work_key TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX tombstones_by_key ON tombstones (work_key);
        CREATE TABLE job_events (
            id INTEGER PRIMARY KEY,
            job_id INTEGER NOT NULL,
            at REAL NOT NULL,
            kind TEXT NOT NULL,
            data TEXT NOT NULL
        );
        CREATE INDEX job_events_by_job ON job_events (job_id, id);
        CREATE TABLE workspaces (
            ref TEXT PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            generation INTEGER NOT NULL,
            active INTEGER NOT NULL,
            added_at REAL NOT NULL
        );
        CREATE TABLE repo_state (
            workspace_ref TEXT NOT NULL,
            repo_ref TEXT NOT NULL,
            name TEXT NOT NULL,
            last_head TEXT,
            last_indexed_at REAL,
            PRIMARY KEY (workspace_ref, repo_ref)
        );
        """,
    )


def public_id(row_id: int) -> str:
    return f"job-{row_id:06d}"


def parse_public_id(job_id: str) -> int | None:
    """``job-000042`` (or ``42``) → 42; None when malformed."""
    text = job_id.strip().lower()
    text = text.removeprefix("job-")
    return int(text) if text.isdigit() and len(text) <= 12 else None


def check_job_id(job_id: str) -> int:
    """``parse_public_id`` for a caller's argument, before the daemon is asked: the row id.

    :raises InvalidArgumentError: (``job_id``) not a job id like ``job-000001``."""
    from gitquarry.errors import InvalidArgumentError

    row_id = parse_public_id(job_id) if isinstance(job_id, str) else None
    if row_id is None:
        raise InvalidArgumentError("job_id", f"{job_id!r} is not a job id like job-000001")
    return row_id


def check_status(status: str | None) -> None:
    """:raises InvalidArgumentError: (``status``) ``status`` is given and not one of
    :data:`STATUSES`."""
    from gitquarry.errors import InvalidArgumentError

    if status is not None and status not in STATUSES:
        raise InvalidArgumentError("status", f"must be one of {', '.join(STATUSES)}, got "
                                   f"{status!r}")


@dataclass
class Job:
    """One job row. ``target`` identifies the exact work (a refs fingerprint, a revision set);
    ``work_key`` = type, scope, generation and target; ``not_before`` is the retry time of a
    failed job or the earliest start of a queued one (writer contention)."""

    id: int
    type: str
    scope: str
    generation: int
    target: str
    work_key: str
    params: dict[str, Any]
    status: str
    origin: str
    priority: int
    attempts: int = 0
    runs: int = 0
    coalesced: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    not_before: float | None = None
    progress: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    waiting_for: str | None = None

    @property
    def public_id(self) -> str:
        return public_id(self.id)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL and not (
            self.status == "failed" and self.not_before is not None
        )

    def to_public(self) -> dict[str, Any]:
        """The job as every surface shows it: opaque refs, no paths, no document text."""
        data: dict[str, Any] = {
            "id": self.public_id,
            "type": self.type,
            "status": self.status,
            "scope": self.scope,
            "generation": self.generation,
            "target": self.target[:16],
            "origin": self.origin,
            "attempts": self.attempts,
            "runs": self.runs,
            "coalesced": self.coalesced,
            "created_at": round(self.created_at, 3),
            "updated_at": round(self.updated_at, 3),
            "started_at": _round(self.started_at),
            "finished_at": _round(self.finished_at),
            "terminal": self.terminal,
            "progress": self.progress,
            "result": self.result,
            "error": self.error,
        }
        for key in ("workspace", "repository"):
            if key in self.params:
                data[key] = self.params[key]
        if self.status == "failed" and self.not_before is not None:
            data["next_attempt_at"] = round(self.not_before, 3)
        if self.status == "queued" and self.not_before is not None:
            data["not_before"] = round(self.not_before, 3)
        if self.waiting_for:
            data["waiting_for"] = self.waiting_for
        return data


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _job(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"], type=row["type"], scope=row["scope"], generation=row["generation"],
        target=row["target"], work_key=row["work_key"], params=json.loads(row["params"]),
        status=row["status"], origin=row["origin"], priority=row["priority"],
        attempts=row["attempts"], runs=row["runs"], coalesced=row["coalesced"],
        created_at=row["created_at"], updated_at=row["updated_at"],
        started_at=row["started_at"], finished_at=row["finished_at"],
        not_before=row["not_before"], progress=_loads(row["progress"]) or {},
        result=_loads(row["result"]), error=_loads(row["error"]),
        waiting_for=row["waiting_for"],
    )


@dataclass(frozen=True)
class WatchedWorkspace:
    """A registered workspace. ``path`` is private: it never leaves the daemon."""

    ref: str
    path: Path
    name: str
    generation: int
    active: bool
    added_at: float


class StateStore:
    """The daemon's state database. Thread-safe (one connection, one lock).

    Every write method raises ``JobStateWriteError`` (retryable) when SQLite cannot commit
    within ``busy_timeout_s``; nothing is half-written.
    """

    def __init__(self, path: Path, *, busy_timeout_s: float = 2.0) -> None:
        from gitquarry.service.paths import private_file

        self.path = path
        private_file(path)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            str(path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        self._conn.row_factory = sqlite3.Row
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        STATE_MIGRATIONS.apply(self._conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- plumbing --------------------------------------------------------------------------

    @contextmanager
    def _write(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise JobStateWriteError(action, str(exc)) from exc
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK")
                raise JobStateWriteError(action, str(exc)) from exc

    def _read(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    # -- jobs ------------------------------------------------------------------------------

    def get(self, row_id: int) -> Job | None:
        rows = self._read("SELECT * FROM jobs WHERE id = ?", (row_id,))
        return _job(rows[0]) if rows else None

    def list_jobs(self, *, statuses: tuple[str, ...] | None = None, scope: str | None = None,
                  limit: int = 50) -> list[Job]:
        """Newest first."""
        sql = "SELECT * FROM jobs WHERE 1 = 1"
        args: list[Any] = []
        if statuses:
            sql += f" AND status IN ({','.join('?' * len(statuses))})"
            args.extend(statuses)
        if scope:
            sql += " AND scope = ?"
            args.append(scope)
        sql += " ORDER BY id DESC LIMIT ?"
        args.append(limit)
        return [_job(r) for r in self._read(sql, args)]

    def open_jobs(self, type_: str, scope: str, generation: int) -> list[Job]:
        """Jobs of this work that are not finished: active, or failed awaiting a retry."""
        rows = self._read(
            "SELECT * FROM jobs WHERE type = ? AND scope = ? AND generation = ? AND "
            "(status IN ('queued', 'running', 'interrupted') OR "
            "(status = 'failed' AND not_before IS NOT NULL)) ORDER BY id",
            (type_, scope, generation),
        )
        return [_job(r) for r in rows]

    def last_succeeded(self, type_: str, scope: str, generation: int, *,
                       target: str | None = None) -> Job | None:
        """The newest succeeded job of this work (with this ``target`` when given)."""
        where, args = "", [type_, scope, generation]
        if target is not None:
            where = " AND target = ?"
            args.append(target)
        rows = self._read(
            "SELECT * FROM jobs WHERE type = ? AND scope = ? AND generation = ? AND "
            f"status = 'succeeded'{where} ORDER BY finished_at DESC, id DESC LIMIT 1",
            tuple(args),
        )
        return _job(rows[0]) if rows else None

    def insert(self, job: Job) -> Job:
        with self._write("the new job") as conn:
            cur = conn.execute(
                "INSERT INTO jobs (type, scope, generation, target, work_key, params, status, "
                "origin, priority, created_at, updated_at, not_before) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job.type, job.scope, job.generation, job.target, job.work_key,
                 json.dumps(job.params), job.status, job.origin, job.priority,
                 job.created_at, job.updated_at, job.not_before),
            )
            job.id = int(cur.lastrowid or 0)
        return job

    def update(self, job: Job, *, only_if_status: tuple[str, ...] | None = None,
               action: str = "the job's state") -> bool:
        """Write every mutable field of ``job``. With ``only_if_status``, only while the stored
        status is one of those (returns False, writing nothing, otherwise)."""
        job.updated_at = time.time()
        sql = (
            "UPDATE jobs SET target = ?, work_key = ?, params = ?, status = ?, attempts = ?, "
            "runs = ?, coalesced = ?, updated_at = ?, started_at = ?, finished_at = ?, "
            "not_before = ?, progress = ?, result = ?, error = ?, waiting_for = ? WHERE id = ?"
        )
        args: list[Any] = [
            job.target, job.work_key, json.dumps(job.params), job.status, job.attempts,
            job.runs, job.coalesced, job.updated_at, job.started_at, job.finished_at,
            job.not_before, json.dumps(job.progress),
            None if job.result is None else json.dumps(job.result),
            None if job.error is None else json.dumps(job.error), job.waiting_for, job.id,
        ]
        if only_if_status:
            sql += f" AND status IN ({','.join('?' * len(only_if_status))})"
            args.extend(only_if_status)
        with self._write(action) as conn:
            return conn.execute(sql, args).rowcount == 1

    def save_progress(self, job_id: int, progress: dict[str, Any],
                      waiting_for: str | None) -> None:
        """Best effort (progress is advisory): a failed write is ignored."""
        try:
            with self._write("progress") as conn:
                conn.execute(
                    "UPDATE jobs SET progress = ?, waiting_for = ?, updated_at = ? WHERE id = ?",
                    (json.dumps(progress), waiting_for, time.time(), job_id),
                )
        except JobStateWriteError:
            pass

    def next_runnable(self, now: float) -> tuple[Job | None, float | None]:
        """The next job to run (lowest priority value, then oldest), and otherwise the
        earliest time a waiting one becomes due (None: nothing waits)."""
        rows = self._read(
            "SELECT * FROM jobs WHERE (status IN ('queued', 'interrupted') OR "
            "(status = 'failed' AND not_before IS NOT NULL)) "
            "ORDER BY priority, id"
        )
        due: float | None = None
        for row in rows:
            job = _job(row)
            if job.not_before is None or job.not_before <= now:
                return job, None
            due = job.not_before if due is None else min(due, job.not_before)
        return None, due

    def add_event(self, job_id: int, kind: str, data: dict[str, Any]) -> None:
        with self._write("a job event") as conn:
            conn.execute(
                "INSERT INTO job_events (job_id, at, kind, data) VALUES (?, ?, ?, ?)",
                (job_id, time.time(), kind, json.dumps(data)),
            )

    def events(self, job_id: int, limit: int = 100) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT at, kind, data FROM job_events WHERE job_id = ? ORDER BY id DESC LIMIT ?",
            (job_id, limit),
        )
        return [
            {"at": round(r["at"], 3), "kind": r["kind"], "data": json.loads(r["data"])}
            for r in reversed(rows)
        ]

    # -- cancellation ----------------------------------------------------------------------

    def write_tombstone(self, job: Job) -> None:
        """Commit the durable cancel record. :raises JobStateWriteError: not committed."""
        with self._write("the cancellation") as conn:
            conn.execute(
                "INSERT OR REPLACE INTO tombstones (job_id, type, scope, generation, target, "
                "work_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (job.id, job.type, job.scope, job.generation, job.target, job.work_key,
                 time.time()),
            )

    def latest_for_key(self, work_key: str) -> Job | None:
        """The newest job of exactly this work (type, scope, generation, target)."""
        rows = self._read("SELECT * FROM jobs WHERE work_key = ? ORDER BY id DESC LIMIT 1",
                          (work_key,))
        return _job(rows[0]) if rows else None

    def tombstoned(self, work_key: str) -> bool:
        return bool(self._read("SELECT 1 FROM tombstones WHERE work_key = ? LIMIT 1",
                               (work_key,)))

    def recover(self) -> tuple[list[Job], list[Job]]:
        """After a restart: every queued or running job becomes ``interrupted`` (to be
        resumed), except one whose tombstone matches it exactly, which becomes
        ``cancelled``. Returns (interrupted, cancelled)."""
        interrupted: list[Job] = []
        cancelled: list[Job] = []
        now = time.time()
        rows = self._read("SELECT * FROM jobs WHERE status IN ('queued', 'running')")
        with self._write("restart recovery") as conn:
            for row in rows:
                job = _job(row)
                stone = conn.execute(
                    "SELECT * FROM tombstones WHERE job_id = ?", (job.id,)
                ).fetchone()
                if stone is not None and (
                    stone["type"], stone["scope"], stone["generation"], stone["target"],
                    stone["work_key"],
                ) == (job.type, job.scope, job.generation, job.target, job.work_key):
                    status, bucket = "cancelled", cancelled
                else:
                    status, bucket = "interrupted", interrupted
                conn.execute(
                    "UPDATE jobs SET status = ?, updated_at = ?, finished_at = ?, "
                    "waiting_for = NULL WHERE id = ?",
                    (status, now, now if status == "cancelled" else None, job.id),
                )
                job.status = status
                bucket.append(job)
        return interrupted, cancelled

    # -- workspaces ------------------------------------------------------------------------

    def workspaces(self, *, active_only: bool = True) -> list[WatchedWorkspace]:
        sql = "SELECT * FROM workspaces" + (" WHERE active = 1" if active_only else "")
        return [
            WatchedWorkspace(r["ref"], Path(r["path"]), r["name"], r["generation"],
                             bool(r["active"]), r["added_at"])
            for r in self._read(sql + " ORDER BY added_at, ref")
        ]

    def workspace(self, ref: str) -> WatchedWorkspace | None:
        for ws in self.workspaces(active_only=False):
            if ws.ref == ref:
                return ws
        return None

    def add_workspace(self, ref: str, path: Path, name: str) -> WatchedWorkspace:
        """Register (or re-activate, with the next generation) a workspace."""
        with self._write("the watched workspace") as conn:
            row = conn.execute("SELECT * FROM workspaces WHERE ref = ?", (ref,)).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO workspaces (ref, path, name, generation, active, added_at) "
                    "VALUES (?, ?, ?, 1, 1, ?)", (ref, str(path), name, time.time()),
                )
            elif not row["active"]:
                conn.execute(
                    "UPDATE workspaces SET active = 1, generation = generation + 1, "
                    "added_at = ? WHERE ref = ?", (time.time(), ref),
                )
        found = self.workspace(ref)
        assert found is not None
        return found

    def remove_workspace(self, ref: str) -> bool:
        with self._write("the watched workspace") as conn:
            return conn.execute(
                "UPDATE workspaces SET active = 0 WHERE ref = ? AND active = 1", (ref,)
            ).rowcount == 1

    def set_repo_state(self, workspace_ref: str, repo_ref: str, name: str,
                       head: str | None) -> None:
        with self._write("repository state") as conn:
            conn.execute(
                "INSERT INTO repo_state (workspace_ref, repo_ref, name, last_head, "
                "last_indexed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (workspace_ref, repo_ref) "
                "DO UPDATE SET name = excluded.name, last_head = excluded.last_head, "
                "last_indexed_at = excluded.last_indexed_at",
                (workspace_ref, repo_ref, name, head, time.time()),
            )

    def repo_states(self, workspace_ref: str) -> dict[str, dict[str, Any]]:
        return {
            r["repo_ref"]: {"name": r["name"], "last_indexed_commit": r["last_head"],
                            "last_indexed_at": _round(r["last_indexed_at"])}
            for r in self._read("SELECT * FROM repo_state WHERE workspace_ref = ?",
                                (workspace_ref,))
        }
