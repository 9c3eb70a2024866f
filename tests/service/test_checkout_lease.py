"""Issue 19 §1–§2 for the daemon: a watched workspace whose checkout placed its
``.gitquarry/`` (a linked writer lease, a forged index) never gets the link followed nor the
forged index served; the job fails with the typed error and the victim file is intact."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .conftest import Api, DaemonProcess, git, make_repo

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
