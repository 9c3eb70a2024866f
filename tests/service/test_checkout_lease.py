"""Issue 19 §1–§2 for the daemon: a watched workspace whose checkout placed its
``.gitquarry/`` (a linked writer lease, a forged index) never gets the link followed nor the
forged index served; the job fails with the typed error and the victim file is intact."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import Api, DaemonProcess, git, make_repo

# issue 24: seconds per test (daemons, Chromium, an index per case); CI runs the slow set
pytestmark = pytest.mark.slow

VICTIM = "the user's own file\n"


def _hostile_clone(tmp_path: Path, link: str, target: str) -> Path:
    src = make_repo(tmp_path / "src", commits=2)
    (src / ".gitquarry").mkdir()
    os.symlink(target, src / ".gitquarry" / link)
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "ship a lease")
    clone = tmp_path / "ws" / "clone"
    clone.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(src), str(clone)], check=True,
                   capture_output=True)
    return clone


def test_daemon_job_refuses_a_committed_lease_link(
        daemon: DaemonProcess, api: Api, tmp_path: Path) -> None:
    victim = tmp_path / "ws" / "victim.txt"
    clone = _hostile_clone(tmp_path, "index.lock", "../../victim.txt")
    victim.write_text(VICTIM, encoding="utf-8")
    daemon.start()
    job = api.wait_done(api.call("watch", path=str(clone))["job"]["id"])
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "index_path_unsafe", job
    assert "it came with the checkout" in job["error"]["message"], job
    assert victim.read_text(encoding="utf-8") == VICTIM
    assert not (clone / ".gitquarry" / "index.db").exists()


def test_daemon_job_refuses_an_untracked_lease_link(
        daemon: DaemonProcess, api: Api, tmp_path: Path) -> None:
    """Placed without git (an archive): the ``O_NOFOLLOW`` open refuses it on its own."""
    ws = tmp_path / "ws"
    make_repo(ws / "repo", commits=2)
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM, encoding="utf-8")
    (ws / ".gitquarry").mkdir()
    os.symlink(victim, ws / ".gitquarry" / "index.lock")
    daemon.start()
    job = api.wait_done(api.call("watch", path=str(ws))["job"]["id"])
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "index_path_unsafe", job
    assert victim.read_text(encoding="utf-8") == VICTIM
    # the status report reads the lease's holder: never through the link
    assert api.call("status") is not None
    assert victim.read_text(encoding="utf-8") == VICTIM


def test_daemon_and_web_page_never_serve_a_committed_forged_index(
        service_env: dict[str, str], tmp_path: Path) -> None:
    """§2 in the daemon and the web page: a clone ships ``.gitquarry/index.db`` built on the
    attacker's machine (its own state directory), holding a commit no repository has."""
    import sys
    import threading

    import pytest

    from gitquarry.config import load_config
    from gitquarry.errors import GitquarryError
    from gitquarry.service.daemon import Daemon
    from gitquarry.web.backend import WebBackend

    evil = make_repo(tmp_path / "evil" / "repo", commits=1)
    (evil / "keys.txt").write_text("0xBADC0DE\n", encoding="utf-8")
    git(evil, "add", "-A")
    git(evil, "commit", "-q", "-m", "Rotate the signing key to attacker key 0xBADC0DE")
    attacker = {**service_env, "XDG_STATE_HOME": str(tmp_path / "attacker-state")}
    subprocess.run([sys.executable, "-m", "gitquarry", "index", str(tmp_path / "evil"),
                    "--no-embed", "-q"], env=attacker, check=True, capture_output=True)
    forged = (tmp_path / "evil" / ".gitquarry" / "index.db").read_bytes()

    src = make_repo(tmp_path / "src", commits=2)
    (src / ".gitquarry").mkdir()
    (src / ".gitquarry" / "index.db").write_bytes(forged)
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "ship an index")
    clone = tmp_path / "ws" / "clone"
    clone.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(src), str(clone)], check=True,
                   capture_output=True)

    daemon = Daemon(load_config(None).daemon)
    ready = threading.Event()
    thread = threading.Thread(target=daemon.run, kwargs={"on_ready": ready.set}, daemon=True)
    thread.start()
    backend = None
    try:
        assert ready.wait(30), "the daemon did not start"
        watched = daemon.op_watch({"path": str(clone)})
        ref = watched["workspace_ref"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
                daemon.state.list_jobs(statuses=("queued", "running"), limit=10)
                or daemon.runner.current is not None):
            time.sleep(0.1)
        failed = daemon.state.list_jobs(statuses=("failed",), limit=10)
        assert failed, "the index job did not fail"
        backend = WebBackend(daemon)
        with pytest.raises(GitquarryError) as caught:
            backend.history(ref, "signing key")
        assert caught.value.code == "index_path_unsafe"
        assert "0xBADC0DE" not in str(caught.value)
        status = backend.status()
        assert "0xBADC0DE" not in repr(status)
    finally:
        if backend is not None:
            backend.close()
        daemon.stop()
        thread.join(timeout=30)
    assert (clone / ".gitquarry" / "index.db").read_bytes() == forged
