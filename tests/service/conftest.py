"""Fixtures for the daemon tests: an isolated user (HOME, state dir, runtime dir, config with
short debounce/reconcile intervals), real git repositories, and real daemon processes.

Nothing is mocked: daemons are ``python -m gitquarry daemon run`` subprocesses talking over
a real Unix socket, indexes are real SQLite files, repositories are real git repositories.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gitquarry.errors import GitquarryError
from testkit import FastCommit, GitRepo

FAST_CONFIG = """
[daemon]
debounce_s = 0.2
reconcile_s = 1.5
poll_s = 0.3
lease_wait_s = 0.5
cli_lease_wait_s = 60
retry_base_s = 0.5
retry_max_s = 2.0
socket_check_s = 0.2

[embedding]
provider = "none"
"""

#: an absolute path inside a string (what no daemon payload may hold)
ABS_PATH = re.compile(r"(?<![\w.:~/\-<>])/(?!/)[^\s/'\"]+/")


@pytest.fixture
def service_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """An isolated user; returns the environment for subprocesses (also set in-process)."""
    runtime = Path(tempfile.mkdtemp(prefix="gq", dir="/tmp"))  # socket paths must be short
    home = tmp_path / "home"
    home.mkdir()
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada\n\temail = "
                         "ada@example.com\n[commit]\n\tgpgsign = false\n[gc]\n\tauto = 0\n",
                         encoding="utf-8")
    config = home / "gitquarry.toml"
    config.write_text(FAST_CONFIG, encoding="utf-8")
    env = {
        "HOME": str(home), "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_RUNTIME_DIR": str(runtime), "XDG_CONFIG_HOME": str(home / ".config"),
        "GITQUARRY_CONFIG": str(config), "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        # a daemon holding its lock with an unreachable socket is reported after 2 s, not 5
        "GITQUARRY_DAEMON_SOCKET_WAIT_S": "2.0",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GITQUARRY_DEBUG", "GITQUARRY_LOG"):
        monkeypatch.delenv(key, raising=False)
    yield dict(os.environ)
    stop_autostarted()
    shutil.rmtree(runtime, ignore_errors=True)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode("utf-8", "replace").strip()


def make_repo(path: Path, commits: int = 3, *, prefix: str = "commit") -> Path:
    """A repository with ``commits`` commits on main (files and messages numbered), dated now
    (the shared builder, ``dated=False``)."""
    repo = GitRepo(path, identity=False, dated=False)
    for i in range(commits):
        repo.commit({f"f{i % 7}.txt": f"{prefix} {i}\n" * (i % 5 + 1)}, f"{prefix} number {i}")
    return path


def bulk_repo(path: Path, commits: int, *, lines: int = 20) -> Path:
    """A repository with many commits, written fast with ``git fast-import``."""
    repo = GitRepo(path)
    repo.fast_import([
        FastCommit(files={f"file{i % 50}.txt": "".join(
            f"line {j} of change {i} alpha beta gamma\n" for j in range(lines))},
            message=f"bulk change {i}\n", date=1_700_000_000 + i * 60)
        for i in range(commits)
    ])
    repo.git("reset", "-q", "--hard", "main")
    return path


def commit(repo: Path, message: str, name: str = "new.txt") -> str:
    """Commit ``name`` (holding ``message``) in the existing repository ``repo``, dated now."""
    return GitRepo(repo, init=False, identity=False, dated=False).commit(
        {name: message + "\n"}, message)


class Api:
    """Calls the daemon like every surface does and keeps every payload for the path scan."""

    def __init__(self) -> None:
        self.responses: list[Any] = []

    def call(self, op: str, **args: Any) -> Any:
        from gitquarry.service.ipc import Client

        try:
            result = Client(timeout_s=60).call(op, **args)
        except GitquarryError as exc:
            self.responses.append({"error": exc.code, "message": str(exc)})
            raise
        self.responses.append(result)
        return result

    def stream(self, op: str, **args: Any) -> list[dict[str, Any]]:
        from gitquarry.service.ipc import Client

        out = list(Client(timeout_s=120).stream(op, **args))
        self.responses.extend(out)
        return out

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self.call("jobs.show", id=job_id)["job"])

    def wait_job(self, job_id: str, predicate: Callable[[dict[str, Any]], bool],
                 timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if predicate(job):
                return job
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting on {job_id}: {json.dumps(job)}")
            time.sleep(0.05)

    def wait_done(self, job_id: str, timeout: float = 60.0) -> dict[str, Any]:
        return self.wait_job(job_id, lambda j: j["terminal"] or j["status"] == "failed",
                             timeout)

    def jobs(self, **args: Any) -> list[dict[str, Any]]:
        return list(self.call("jobs.list", limit=1000, **args)["jobs"])

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 30.0,
                 what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def assert_no_absolute_paths(self, *private: Path) -> None:
        text = json.dumps(self.responses, ensure_ascii=False)
        for path in private:
            assert str(path) not in text, f"{path} leaked into a daemon payload"
        for value in _strings(self.responses):
            match = ABS_PATH.search(value)
            assert match is None, f"absolute path in a daemon payload: {value!r}"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


class DaemonProcess:
    """``python -m gitquarry daemon run`` as a child process."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def proc(self) -> subprocess.Popen[bytes]:
        return self.procs[-1]

    def spawn(self, *, env: dict[str, str] | None = None,
              preexec: Callable[[], None] | None = None) -> subprocess.Popen[bytes]:
        with open(self.log, "ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "gitquarry", "daemon", "run"],
                env=env or self.env, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                preexec_fn=preexec,
            )
        self.procs.append(proc)
        return proc

    def start(self, **kwargs: Any) -> subprocess.Popen[bytes]:
        proc = self.spawn(**kwargs)
        self.wait_ready(proc)
        return proc

    def wait_ready(self, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
        from gitquarry.errors import DaemonNotRunningError
        from gitquarry.service.ipc import Client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"daemon exited {proc.returncode}: {self.log.read_text()}")
            try:
                if Client(timeout_s=5).call("ping")["pid"] == proc.pid:
                    return
            except DaemonNotRunningError:
                pass
            time.sleep(0.05)
        raise AssertionError("daemon did not start: " + self.log.read_text())

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        from gitquarry.service.ipc import Client

        proc = self.proc
        if proc.poll() is None:
            try:
                Client(timeout_s=5).call("shutdown")
            except GitquarryError:
                proc.terminate()
            proc.wait(30)

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        stop_autostarted()


def stop_autostarted() -> None:
    """Stop a daemon a command under test started in the background (this user's lock)."""
    from gitquarry.service.client import daemon_lock_info

    info = daemon_lock_info()
    if info and info.get("pid"):
        pid = int(info["pid"])
        # it may have exited between the lock read and the signal
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while daemon_lock_info() is not None and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture
def daemon(service_env: dict[str, str], tmp_path: Path) -> Iterator[DaemonProcess]:
    d = DaemonProcess(service_env, tmp_path / "daemon-stderr.log")
    try:
        yield d
    finally:
        d.cleanup()


@pytest.fixture
def api() -> Api:
    return Api()


def history_hashes(workspace: Path) -> list[str]:
    """Every commit hash in the workspace's index (opened read-only by a fresh process)."""
    import sqlite3

    db = workspace / ".gitquarry" / "index.db"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT hash FROM git_commits")]
    finally:
        conn.close()


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
