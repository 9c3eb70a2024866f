"""The daemon as a process: start, watch, index on commit, one per user, socket recovery,
private files, and no absolute path in any payload."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitquarry.errors import DaemonNotRunningError
from gitquarry.service import paths

from .conftest import Api, DaemonProcess, commit, history_hashes, make_repo


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_watched_commit_becomes_searchable_and_status_has_no_paths(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    ws = tmp_path / "work"
    repo = make_repo(ws / "alpha", commits=3)
    make_repo(ws / "beta", commits=2, prefix="other")
    daemon.start()
    result = api.call("watch", path=str(ws))
    assert result["workspace_ref"].startswith("ws-") and result["name"] == "work"
    first = api.wait_done(result["job"]["id"])
    assert first["status"] == "succeeded", first
    assert first["result"]["new_commits"] == 5
    assert {r["name"] for r in first["result"]["repositories"]} == {"alpha", "beta"}

    head = commit(repo, "zebra unicorn landing")
    api.wait_for(lambda: head in history_hashes(ws), timeout=20, what="the new commit indexed")
    # the keyword search a user runs finds it
    out = subprocess.run([sys.executable, "-m", "gitquarry", "history", "zebra", "--mode",
                          "lexical", "--json", "--project", str(ws)], capture_output=True,
                         text=True, env=service_env, check=True)
    assert head in out.stdout

    status = api.call("status")
    (entry,) = status["workspaces"]
    assert entry["state"] == "watching" and entry["watch_mode"] == "native"
    names = {r["name"]: r for r in entry["repositories"]}
    api.wait_for(lambda: api.call("status")["workspaces"][0]["repositories"], timeout=5)
    assert names["alpha"]["git_store_ref"].startswith("gs-")
    assert "next_reconcile_at" in entry and entry["pending_jobs"] == []
    final = api.call("status")["workspaces"][0]
    alpha = next(r for r in final["repositories"] if r["name"] == "alpha")
    assert alpha["last_indexed_commit"] == head
    jobs = api.jobs()
    assert all(j["id"].startswith("job-") and len(j["id"]) == 10 for j in jobs)
    api.call("jobs.show", id=jobs[-1]["id"])
    with pytest.raises(Exception, match="no job"):
        api.call("jobs.show", id="job-999999")
    with pytest.raises(Exception, match="not a directory"):
        api.call("watch", path=str(tmp_path / "missing"))
    api.assert_no_absolute_paths(tmp_path, Path(service_env["XDG_RUNTIME_DIR"]))


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_one_daemon_per_user_even_when_two_race(
    daemon: DaemonProcess, service_env: dict[str, str]
) -> None:
    a = daemon.spawn()
    b = daemon.spawn()
    deadline = time.monotonic() + 30
    while a.poll() is None and b.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    loser, winner = (a, b) if a.poll() is not None else (b, a)
    assert loser.wait(30) == 1
    daemon.wait_ready(winner)
    log = daemon.log.read_text()
    assert f"already running for this user (pid {winner.pid}" in log
    # a third, started later, refuses the same way
    third = subprocess.run([sys.executable, "-m", "gitquarry", "daemon", "run"],
                           env=service_env, capture_output=True, text=True, timeout=60)
    assert third.returncode == 1 and f"pid {winner.pid}" in third.stderr
    assert winner.poll() is None


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_socket_removed_under_a_running_daemon_is_recreated(
    daemon: DaemonProcess, api: Api
) -> None:
    proc = daemon.start()
    sock = paths.socket_path()
    sock.unlink()
    from gitquarry.service.client import connect

    # the client waits for the daemon (it still holds its lock) to re-create the socket
    assert connect(wait_for_socket_s=10).call("ping")["pid"] == proc.pid
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    # replaced by something else: re-created too
    sock.unlink()
    sock.write_text("not a socket")
    api.wait_for(lambda: stat.S_ISSOCK(sock.lstat().st_mode), timeout=10, what="new socket")
    assert api.call("ping")["pid"] == proc.pid


def test_private_files_and_clean_stop(daemon: DaemonProcess, api: Api, tmp_path: Path) -> None:
    proc = daemon.start()
    state = paths.state_dir()
    sock_dir = paths.socket_dir()
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE(sock_dir.stat().st_mode) == 0o700
    for path in (paths.socket_path(), state / "daemon.db", state / "daemon.log"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    daemon.stop()
    assert proc.returncode == 0
    assert not paths.socket_path().exists()
    with pytest.raises(DaemonNotRunningError):
        api.call("ping")


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_cli_start_watch_status_stop(service_env: dict[str, str], tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "proj", commits=2)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=service_env,
                              capture_output=True, text=True, timeout=120)

    try:
        out = cli("index", str(ws), "--watch", "--no-embed")
        assert out.returncode == 0, out.stderr
        assert "Watching proj (ws-" in out.stderr
        # issue 24: a next-step hint where the user stops
        assert "hint: `gitquarry daemon status`" in out.stderr, out.stderr
        status = cli("daemon", "status")
        assert status.returncode == 0 and "proj" in status.stdout
        assert str(tmp_path) not in status.stdout
        started = cli("daemon", "start")
        assert "already running" in started.stdout
        listing = cli("jobs", "list")
        assert "history_index" in listing.stdout
        job_id = listing.stdout.split()[0]
        attached = cli("jobs", "attach", job_id)
        assert attached.returncode == 0 and "succeeded" in attached.stdout
        bad = cli("jobs", "show", "nonsense")
        assert bad.returncode == 2 and "job-000001" in bad.stderr
        # issue 24: a well-formed id of no job is "not found" (exit 3), not a usage error
        missing = cli("jobs", "show", "job-999999")
        assert missing.returncode == 3, missing
        assert missing.stderr.startswith("Error: no job"), missing.stderr
        watched = cli("daemon", "watch", str(ws))
        assert watched.returncode == 0 and "hint: `gitquarry daemon status`" in watched.stderr
    finally:
        stopped = cli("daemon", "stop")
    assert stopped.returncode == 0 and "Stopped" in stopped.stdout
    assert cli("daemon", "status").returncode == 1
    assert "No gitquarry daemon was running" in cli("daemon", "stop").stdout
    del os.environ["XDG_RUNTIME_DIR"]  # fallback: the socket lives in the state dir
    assert paths.socket_dir() == paths.state_dir()


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
def test_a_connection_from_another_user_is_refused_by_peer_credentials(
    daemon: DaemonProcess, api: Api
) -> None:
    daemon.start()
    sock = paths.socket_path()
    # open the file permissions so only the peer-credential check stands in the way
    for directory in (sock.parent, sock.parent.parent):
        os.chmod(directory, 0o711)
    os.chmod(sock, 0o666)
    probe = (
        "import json, socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\n"
        # refused at connect, before any request is read: just read the answer
        "print(s.makefile().readline())\n"
    )
    python = "/usr/bin/python3"  # readable by any user (the venv may live under /root)
    if not os.access(python, os.X_OK):
        pytest.skip("no system python3 for the other user")
    out = subprocess.run([python, "-c", probe, str(sock)], capture_output=True,
                         text=True, timeout=60, preexec_fn=lambda: os.setuid(65534))
    assert out.returncode == 0, out.stderr
    reply = __import__("json").loads(out.stdout)
    assert reply["ok"] is False and reply["error"]["code"] == "peer_rejected"
    assert api.call("ping")  # the owner is still served
