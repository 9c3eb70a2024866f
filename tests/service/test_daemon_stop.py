"""``gitquarry daemon stop`` returns once the daemon has stopped: its lock released, its
process gone and its socket removed (s7 breaker §3), within a bounded wait that ends in a
typed error saying what was left.

The daemon is a real ``python -m gitquarry daemon run`` process; ``fault_hooks/`` on its
``PYTHONPATH`` (``GQ_TEST_LINGER_S``) makes it linger after it let go of its lock and socket,
as a slow interpreter exit does, which the earlier stop (waiting for the lock alone) returned
through while the process still ran.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitquarry.errors import DaemonUnavailableError
from gitquarry.service import paths
from gitquarry.service.client import _process_gone, stop_daemon

from .conftest import DaemonProcess

HOOKS = Path(__file__).parent / "fault_hooks"


def _lingering(service_env: dict[str, str], seconds: float) -> dict[str, str]:
    return {**service_env, "PYTHONPATH": os.pathsep.join(
        [str(HOOKS), *filter(None, [service_env.get("PYTHONPATH")])]),
        "GQ_TEST_LINGER_S": str(seconds)}


def test_stop_returns_only_after_the_process_has_exited(
        service_env: dict[str, str], daemon: DaemonProcess) -> None:
    proc = daemon.start(env=_lingering(service_env, 1.5))
    sock = paths.client_socket_path()
    assert sock.exists()
    started = time.monotonic()
    assert stop_daemon() == proc.pid
    # the process exited (a zombie until reaped: poll() reaps it now, it does not wait)
    assert proc.poll() == 0, "stop_daemon returned while the daemon process still ran"
    assert time.monotonic() - started >= 1.0  # it waited through the linger
    assert not os.path.lexists(sock)
    assert paths.running_daemon() is None


def test_a_daemon_that_does_not_exit_in_time_is_a_typed_error_saying_what_is_left(
        service_env: dict[str, str], daemon: DaemonProcess) -> None:
    proc = daemon.start(env=_lingering(service_env, 30))
    try:
        with pytest.raises(DaemonUnavailableError) as info:
            stop_daemon(timeout_s=0.5)
        message = str(info.value)
        assert f"pid {proc.pid} did not stop within 0.5 s" in message
        assert "its process still runs" in message and f"kill {proc.pid}" in message
        assert info.value.exit_code == 1
    finally:
        proc.kill()
        proc.wait(10)


def test_process_gone_reads_running_exited_and_zombie_processes() -> None:
    assert not _process_gone(os.getpid())  # a daemon in a thread of this process
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert not _process_gone(child.pid)
    finally:
        child.kill()
    deadline = time.monotonic() + 10
    while not _process_gone(child.pid):  # exited, not reaped yet: a zombie is gone
        assert time.monotonic() < deadline, "a killed child never read as gone"
        time.sleep(0.02)
    child.wait(10)
    assert _process_gone(child.pid)


@pytest.mark.slow  # ~15 s: the stop request's answer wait (STOP_ANSWER_S) runs out
def test_a_daemon_that_does_not_answer_is_a_typed_error_naming_its_pid(
        service_env: dict[str, str], daemon: DaemonProcess) -> None:
    import signal

    from gitquarry.service import client

    proc = daemon.start()
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(DaemonUnavailableError) as info:
            stop_daemon()
        took = time.monotonic() - started
        message = str(info.value)
        assert f"pid {proc.pid} holds the daemon lock but did not answer" in message
        assert f"kill {proc.pid}" in message and "gitquarry daemon stop" not in message
        # bounded by the answer wait (and the socket wait), not the 60 s of other calls
        assert took < client.STOP_ANSWER_S + 30, took
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    assert stop_daemon() == proc.pid
    assert proc.wait(10) == 0
