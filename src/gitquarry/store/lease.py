"""The cross-process writer lease: one writer per index database at a time.

A lease is an exclusive ``flock`` on a lock file beside the database (the workspace's
``index.lock``). Whoever holds it writes its public identity into the file: ``{"holder":
"daemon job-000004", "pid": 812, "since": 1718000000.0}`` (no paths), so ``status`` can say who
writes. ``flock`` is released by the kernel when the holder dies (even ``kill -9``), so a
crashed writer never leaves a stale lease; an identity left in the file by a dead process is
recognised by its pid and reported as free.

``gitquarry index`` (the CLI), ``gitquarry graph reindex`` and every daemon job take this same
lease, so a foreground run and the daemon never write one database at once. Acquiring waits a
bounded time, retrying with exponential backoff (50 ms doubling to 1 s).

The lock file is opened with ``O_NOFOLLOW`` and checked to be a regular file
(``store.safe_paths``): a checkout that commits ``.gitquarry/index.lock`` as a link to a
victim file gets a refusal, never a truncated victim.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from gitquarry.errors import WriterBusyError
from gitquarry.store import safe_paths

#: who is writing when a caller does not say (``holder=None``): a daemon job sets its
#: ``daemon job-000004`` here for the duration of its run; everyone else is the CLI.
current_holder: ContextVar[str] = ContextVar("gitquarry_lease_holder", default="cli")

_FIRST_DELAY_S = 0.05
_MAX_DELAY_S = 1.0


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds a lease: ``holder`` (e.g. ``"cli index"``, ``"daemon job-000004"``), ``pid``
    and ``since`` (Unix seconds)."""

    holder: str
    pid: int
    since: float

    def describe(self) -> str:
        return f"{self.holder} (pid {self.pid})"

    def to_dict(self) -> dict[str, object]:
        return {"holder": self.holder, "pid": self.pid, "since": round(self.since, 3)}


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a record left by a killed holder names a dead one)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_holder(lock_path: Path) -> LeaseHolder | None:
    """The identity recorded in ``lock_path`` if its process is alive, else None.

    Never takes the lock (it cannot delay a writer)."""
    data = safe_paths.read_small(lock_path, 4096)  # never a link, never blocks on a FIFO
    try:
        raw = data.decode("utf-8") if data is not None else ""
    except UnicodeDecodeError:
        return None
    if not raw.strip():
        return None
    try:
        data = json.loads(raw)
        holder = LeaseHolder(str(data["holder"]), int(data["pid"]), float(data["since"]))
    except (ValueError, KeyError, TypeError):
        return None
    return holder if pid_alive(holder.pid) else None


@contextlib.contextmanager
def writer_lease(
    lock_path: Path,
    *,
    db_path: Path,
    holder: str | None = None,
    wait_s: float = 0.0,
    on_wait: Callable[[LeaseHolder | None], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[LeaseHolder]:
    """Hold the writer lease of ``db_path`` (lock file ``lock_path``) for the ``with`` block.

    ``holder``: the public identity to record; default ``current_holder``.

    ``wait_s``: how long to keep trying while another process holds it (0: one try).
    ``on_wait`` is called once, with the current holder, when the first try fails.
    ``should_stop``: polled between tries; when it returns True the wait ends early with
    ``WriterBusyError``.

    :raises WriterBusyError: still held after ``wait_s`` seconds (names the holder).
    :raises IndexAccessError: the lock file cannot be created or opened.
    :raises IndexPathUnsafeError: the lock file (or its directory) is a link or not a
        regular file: it came with the checkout, and is never followed or truncated.
    """
    safe_paths.ensure_state_dir(lock_path.parent)
    fd = safe_paths.open_regular(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    with os.fdopen(fd, "r+b") as handle:
        started = time.monotonic()
        delay = _FIRST_DELAY_S
        waited = False
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                current = read_holder(lock_path)
                if not waited:
                    waited = True
                    if on_wait is not None:
                        on_wait(current)
                elapsed = time.monotonic() - started
                if elapsed >= wait_s or (should_stop is not None and should_stop()):
                    who = current.describe() if current else ""
                    raise WriterBusyError(db_path, who, elapsed) from None
                time.sleep(min(delay, max(0.0, wait_s - elapsed)))
                delay = min(delay * 2, _MAX_DELAY_S)
        me = LeaseHolder(holder=holder or current_holder.get(), pid=os.getpid(),
                         since=round(time.time(), 3))
        try:
            _write_identity(handle, json.dumps(me.to_dict()))
            yield me
        finally:
            with contextlib.suppress(OSError):
                _write_identity(handle, "")
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _write_identity(handle: object, text: str) -> None:
    fd = handle.fileno()  # type: ignore[attr-defined]
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode("utf-8"), 0)
