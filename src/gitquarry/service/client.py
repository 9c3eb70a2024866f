"""Starting, finding and stopping the daemon from a client process (CLI, MCP server)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from gitquarry.errors import DaemonNotRunningError, DaemonUnavailableError
from gitquarry.service import paths
from gitquarry.service.ipc import Client

START_TIMEOUT_S = 20.0


def daemon_lock_info() -> dict[str, Any] | None:
    """The running daemon's lock record (pid, version, since), or None when none runs."""
    from gitquarry.service.daemon import lock_held, read_lock_info

    lock = paths.socket_dir() / paths.LOCK_NAME
    if not lock_held(lock):
        return None
    return read_lock_info(lock)


def connect(*, wait_for_socket_s: float = 0.0) -> Client:
    """A client for the running daemon, after one ``ping``.

    When the daemon holds its lock but the socket is missing (removed under it), waits up to
    ``wait_for_socket_s`` for it to re-create the socket.
    :raises DaemonNotRunningError: no daemon runs.
    """
    client = Client()
    deadline = time.monotonic() + wait_for_socket_s
    while True:
        try:
            client.call("ping")
            return client
        except DaemonNotRunningError:
            if daemon_lock_info() is None or time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def start_daemon(*, timeout_s: float = START_TIMEOUT_S) -> tuple[Client, bool]:
    """Connect to the daemon, starting one in the background if none runs.

    Returns the client and whether this call started the daemon.
    :raises DaemonUnavailableError: it could not be started (says why).
    """
    try:
        return connect(wait_for_socket_s=5.0), False
    except DaemonNotRunningError:
        pass
    state = paths.ensure_private_dir(paths.state_dir())
    paths.ensure_private_dir(paths.socket_dir())
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
            return connect(), True
        except DaemonNotRunningError:
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


def stop_daemon(*, timeout_s: float = 30.0) -> int | None:
    """Ask the daemon to stop and wait for its process to exit; returns its pid, or None
    when none was running.

    :raises DaemonUnavailableError: it did not exit in time.
    """
    try:
        client = connect(wait_for_socket_s=5.0)
    except DaemonNotRunningError:
        return None
    result = client.call("shutdown")
    pid = int(result.get("pid") or 0)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if daemon_lock_info() is None:
            return pid
        time.sleep(0.05)
    raise DaemonUnavailableError(f"pid {pid} did not stop within {timeout_s:g} s")
