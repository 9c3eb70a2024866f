"""Starting, finding and stopping the daemon from a client process (CLI, MCP server, web).

Every surface that may start a daemon goes through ``start_daemon``: the one-per-user check
is the lock in the state directory (``paths.running_daemon``), not the socket directory, so
a client whose ``XDG_RUNTIME_DIR`` differs from the daemon's (or is missing, or unusable)
talks to the socket the running daemon recorded, and one that cannot reach it gets
``DaemonUnreachableError`` instead of a second daemon on the same job database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gitquarry.errors import (
    DaemonNotRunningError,
    DaemonUnavailableError,
    DaemonUnreachableError,
)
from gitquarry.service import paths
from gitquarry.service.ipc import Client

START_TIMEOUT_S = 20.0
#: how long a client waits for the socket of a daemon that holds its lock but cannot be
#: reached yet (just starting, its socket being re-created), seconds
SOCKET_WAIT_S = 5.0
#: overrides ``SOCKET_WAIT_S`` (a positive number of seconds; the daemon tests set it short)
SOCKET_WAIT_ENV = "GITQUARRY_DAEMON_SOCKET_WAIT_S"


def socket_wait_s() -> float:
    """``GITQUARRY_DAEMON_SOCKET_WAIT_S`` when it is a positive number, else 5 s."""
    raw = os.environ.get(SOCKET_WAIT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return SOCKET_WAIT_S
    return value if 0 < value <= 3600 else SOCKET_WAIT_S


def daemon_lock_info() -> dict[str, Any] | None:
    """The running daemon's lock record (pid, version, since, socket), or None when none
    runs (the lock in the state directory)."""
    return paths.running_daemon()


def connect(*, wait_for_socket_s: float | None = 0.0, timeout_s: float = 60.0) -> Client:
    """A client for the running daemon, after one ``ping``; each of its calls waits at most
    ``timeout_s`` seconds for an answer.

    When the daemon holds its lock but its socket cannot be reached (not bound yet, removed
    under it), waits up to ``wait_for_socket_s`` for it (None: ``socket_wait_s()``).
    :raises DaemonNotRunningError: no daemon runs.
    :raises DaemonUnreachableError: a daemon runs but its recorded socket cannot be reached.
    """
    client = Client(timeout_s=timeout_s)
    if wait_for_socket_s is None:
        wait_for_socket_s = socket_wait_s()
    deadline = time.monotonic() + wait_for_socket_s
    while True:
        try:
            client.call("ping")
            return client
        except (DaemonNotRunningError, DaemonUnavailableError) as exc:
            if isinstance(exc, DaemonUnreachableError):
                raise
            info = daemon_lock_info()
            if info is None:
                if isinstance(exc, DaemonNotRunningError):
                    raise
                raise DaemonNotRunningError() from exc
            if time.monotonic() >= deadline:
                why = "nothing listens there" if isinstance(exc, DaemonNotRunningError) \
                    else exc.reason
                raise DaemonUnreachableError(int(info.get("pid") or 0),
                                             str(info.get("socket") or ""), why) from exc
            time.sleep(0.1)


def start_daemon(*, timeout_s: float = START_TIMEOUT_S) -> tuple[Client, bool]:
    """Connect to the daemon, starting one in the background if none runs.

    Returns the client and whether this call started the daemon. A daemon holding this
    user's lock is never doubled: when it cannot be reached, the error says so.
    :raises DaemonUnreachableError: a daemon runs but this process cannot reach it.
    :raises DaemonUnavailableError: it could not be started (says why).
    """
    try:
        return connect(wait_for_socket_s=None), False
    except DaemonNotRunningError:
        pass
    state = paths.ensure_private_dir(paths.state_dir())
    err_path = paths.private_file(state / "daemon.stderr")
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gitquarry", "daemon", "run"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            start_new_session=True, close_fds=True, env=dict(os.environ),
        )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            client = connect()
            info = daemon_lock_info() or {}
            return client, int(info.get("pid") or 0) == proc.pid
        except (DaemonNotRunningError, DaemonUnreachableError):
            pass
        code = proc.poll()
        if code is not None:
            # lost a start race to another daemon: use that one
            try:
                return connect(wait_for_socket_s=2.0), False
            except DaemonNotRunningError:
                pass
            detail = err_path.read_text(encoding="utf-8", errors="replace").strip()
            lines = [line for line in detail.splitlines() if line.strip()]
            raise DaemonUnavailableError(
                f"it exited with status {code}" + (f": {lines[-1]}" if lines else "")
            )
        time.sleep(0.05)
    raise DaemonUnavailableError(f"it did not answer within {timeout_s:g} s")


#: how long ``stop_daemon`` waits for the daemon to answer (its ping, then the stop request),
#: seconds: the daemon answers from its own socket thread, even while a job runs
STOP_ANSWER_S = 10.0
#: how often ``stop_daemon`` looks whether the daemon has gone, seconds
_STOP_POLL_S = 0.05


def _process_gone(pid: int) -> bool:
    """Whether process ``pid`` has exited. A zombie (exited, its parent has not reaped it
    yet: a daemon this very process started) counts as gone; it is never reaped here (its
    ``Popen`` object may still ask for its status). This process itself is never gone (a
    daemon run in a thread of it, as a test does)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # the pid now names another user's process: ours has gone
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False  # no /proc (macOS): kill(0) found it, so it runs
    return state in (b"Z", b"X")


def _stop_state(pid: int, sock: Path | None) -> list[str]:
    """What is left of a stopping daemon: empty once it has stopped, else the reasons."""
    left: list[str] = []
    if daemon_lock_info() is not None:
        left.append("it still holds its lock")
    if pid > 0 and not _process_gone(pid):
        left.append("its process still runs")
    if sock is not None and os.path.lexists(sock):
        left.append(f"its socket {sock} is still there")
    return left


def stop_daemon(*, timeout_s: float = 30.0) -> int | None:
    """Ask the daemon to stop and wait until it has: its lock released, its process gone
    (pid no longer running; a zombie counts as gone) and its socket removed. Returns its
    pid, or None when none was running. Waits at most ``timeout_s`` seconds.

    :raises DaemonUnavailableError: it did not answer the stop request within
        ``STOP_ANSWER_S`` (stopped, hung, or reached through another environment), or did
        not stop in time (the reason says what was left: the lock, the process, the socket,
        and how to end it).
    """
    info = daemon_lock_info() or {}
    try:
        client = connect(wait_for_socket_s=None, timeout_s=STOP_ANSWER_S)
    except DaemonNotRunningError:
        return None
    except DaemonUnreachableError as exc:  # stopped (SIGSTOP), hung, or another environment
        raise DaemonUnavailableError(
            f"pid {exc.pid} holds the daemon lock but did not answer the stop request "
            f"({exc.why}); if it runs with another XDG_STATE_HOME/XDG_RUNTIME_DIR, stop it "
            f"from a shell with those, else end it with `kill {exc.pid}`") from exc
    recorded = info.get("socket")
    sock = Path(recorded) if isinstance(recorded, str) and Path(recorded).is_absolute() \
        else None
    result = client.call("shutdown")
    pid = int(result.get("pid") or info.get("pid") or 0)
    deadline = time.monotonic() + timeout_s
    while True:
        left = _stop_state(pid, sock)
        if not left:
            return pid
        if time.monotonic() >= deadline:
            raise DaemonUnavailableError(
                f"pid {pid} did not stop within {timeout_s:g} s ({'; '.join(left)}); it may "
                f"be finishing a step of its job: run `gitquarry daemon stop` again, or end "
                f"it with `kill {pid}`")
        time.sleep(_STOP_POLL_S)
