"""One daemon per user whatever the client's environment (issue 20 §1).

The single-instance rule follows what the daemon owns (its state directory and job
database), not the socket directory: clients whose ``XDG_RUNTIME_DIR`` differs, is missing
or cannot be used all reach the one daemon through the socket path it records in the state
directory, or get a typed ``daemon_unreachable`` error; none starts a second daemon. Real
daemon processes, real sockets, a real MCP client session.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from gitquarry.service import paths

from .conftest import git, make_repo

# issue 24: real daemon processes or a second uid (seconds each); CI runs the slow set
pytestmark = pytest.mark.slow


def _daemons(state_home: str) -> list[int]:
    """Pids of every ``gitquarry daemon run`` process whose XDG_STATE_HOME is ours.

    A child the daemon forks (a ``git`` subprocess between fork and exec) shows the daemon's
    own command line and environment for a moment; a process whose parent is one of the
    found daemons is such a child, not a second daemon."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            if b"gitquarry" not in cmd or b"daemon" not in cmd or b"run" not in cmd:
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
            status = (entry / "status").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if f"XDG_STATE_HOME={state_home}".encode() in environ:
            ppid = next((int(line.split()[1]) for line in status.splitlines()
                         if line.startswith("PPid:")), 0)
            found[int(entry.name)] = ppid
    return sorted(pid for pid, ppid in found.items() if ppid not in found)


def _lock_record() -> dict[str, Any]:
    """The record in the state directory's daemon lock ({} when there is none)."""
    try:
        return dict(json.loads((paths.state_dir() / paths.LOCK_NAME).read_text("utf-8")))
    except (OSError, ValueError):
        return {}


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=env,
                          capture_output=True, text=True, timeout=180)


def _variants(service_env: dict[str, str], tmp_path: Path) -> dict[str, dict[str, str]]:
    other_runtime = Path(tempfile.mkdtemp(prefix="gq2", dir="/tmp"))
    not_a_dir = tmp_path / "runtime-is-a-file"
    not_a_dir.write_text("x", encoding="utf-8")
    missing = {k: v for k, v in service_env.items() if k != "XDG_RUNTIME_DIR"}
    return {
        "different": {**service_env, "XDG_RUNTIME_DIR": str(other_runtime)},
        "missing": missing,
        "unwritable": {**service_env, "XDG_RUNTIME_DIR": str(not_a_dir)},
        "relative": {**service_env, "XDG_RUNTIME_DIR": "run/user"},
    }


def _mcp_docs_index(env: dict[str, str], repo: Path, errlog_path: Path) -> dict[str, Any]:
    """An MCP client session (the SDK, with ``env``) calling ``repository_docs_index`` and
    attaching to the job; returns the final job."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session() -> dict[str, Any]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "gitquarry", "mcp", "--project", str(repo)],
                                       env=env)
        with open(errlog_path, "w", encoding="utf-8") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write) as s):
                await s.initialize()
                submitted = await s.call_tool("repository_docs_index", {"repo_id": "acme/one"})
                assert not submitted.is_error, submitted.content
                job_id = submitted.structured_content["job"]["id"]
                attached = await s.call_tool("service_job_attach",
                                             {"job_id": job_id, "wait_s": 60})
                assert not attached.is_error, attached.content
                return dict(attached.structured_content["job"])

    return asyncio.run(asyncio.wait_for(session(), 150))


def test_clients_with_any_runtime_dir_share_one_daemon_and_stop_it(
    service_env: dict[str, str], tmp_path: Path
) -> None:
    from gitquarry.repo_docs.registry import Registry

    state_home = service_env["XDG_STATE_HOME"]
    repo = tmp_path / "one"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# One\n\nThe one daemon.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    Registry().register("acme/one", repo)
    variants = _variants(service_env, tmp_path)
    try:
        started = _cli(service_env, "daemon", "start", "--json")
        assert started.returncode == 0, started.stderr
        pid = json.loads(started.stdout)["pid"]
        assert _daemons(state_home) == [pid]
        recorded = _lock_record()
        assert recorded["pid"] == pid and recorded["socket"] == str(paths.socket_path())

        for name, env in variants.items():
            again = _cli(env, "daemon", "start", "--json")
            assert again.returncode == 0, (name, again.stderr)
            assert json.loads(again.stdout)["started"] is False, name
            assert json.loads(again.stdout)["pid"] == pid, name
            status = _cli(env, "daemon", "status", "--json")
            assert status.returncode == 0, (name, status.stderr)
            assert json.loads(status.stdout)["daemon"]["pid"] == pid, name
        # the MCP SDK's default environment has no XDG_RUNTIME_DIR: the docs job goes to the
        # one daemon
        job = _mcp_docs_index(variants["missing"], repo, tmp_path / "mcp.err")
        assert job["status"] == "succeeded", job
        listed = _cli(service_env, "jobs", "list", "--json")
        assert job["id"] in listed.stdout
        assert _daemons(state_home) == [pid]
    finally:
        stopped = _cli(variants["missing"], "daemon", "stop", "--json")
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout) == {"stopped": True, "pid": pid}
    assert "No gitquarry daemon was running" in _cli(service_env, "daemon", "stop").stdout
    deadline = time.monotonic() + 10
    while _daemons(state_home) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _daemons(state_home) == []


def test_a_client_with_an_unusable_runtime_dir_starts_the_daemon_every_client_reaches(
    service_env: dict[str, str], tmp_path: Path
) -> None:
    state_home = service_env["XDG_STATE_HOME"]
    variants = _variants(service_env, tmp_path)
    try:
        started = _cli(variants["unwritable"], "daemon", "start", "--json")
        assert started.returncode == 0, started.stderr
        info = json.loads(started.stdout)
        assert info["started"] is True
        # it could not use its runtime directory: the socket lives in the state directory
        recorded = _lock_record()
        assert recorded["socket"] == str(paths.state_dir() / paths.SOCKET_NAME)
        for name, env in [("own", service_env), *variants.items()]:
            status = _cli(env, "daemon", "status", "--json")
            assert status.returncode == 0, (name, status.stderr)
            assert json.loads(status.stdout)["daemon"]["pid"] == info["pid"], name
        # a second `daemon run` from any environment refuses, naming the first
        for env in (service_env, variants["different"]):
            second = subprocess.run([sys.executable, "-m", "gitquarry", "daemon", "run"],
                                    env=env, capture_output=True, text=True, timeout=60)
            assert second.returncode == 1 and f"pid {info['pid']}" in second.stderr
        assert _daemons(state_home) == [info["pid"]]
    finally:
        stopped = _cli(variants["different"], "daemon", "stop", "--json")
    assert json.loads(stopped.stdout)["stopped"] is True


def test_a_running_daemon_this_client_cannot_reach_is_a_typed_error_not_a_second_daemon(
    service_env: dict[str, str], tmp_path: Path
) -> None:
    """Another process holds this user's lock and records a socket this client cannot
    reach (as a daemon in another mount namespace would): every starting surface says so."""
    state_home = service_env["XDG_STATE_HOME"]
    state = paths.ensure_private_dir(paths.state_dir())
    lock = state / paths.LOCK_NAME
    with open(lock, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        unreachable = tmp_path / "elsewhere" / "daemon.sock"
        os.ftruncate(handle.fileno(), 0)
        os.pwrite(handle.fileno(), json.dumps({"pid": os.getpid(),
                                               "socket": str(unreachable)}).encode(), 0)
        for args in (("daemon", "start"), ("daemon", "watch", str(tmp_path)),
                     ("web", "--no-open"), ("daemon", "status")):
            out = _cli(service_env, *args)
            assert out.returncode != 0, (args, out.stdout)
            assert "already running for this user" in out.stderr, (args, out.stderr)
            assert "cannot reach its socket" in out.stderr, (args, out.stderr)
        assert _daemons(state_home) == []
        # the MCP surface goes through the same check (with a registered repository, so
        # the call gets past its argument checks, which come before any daemon is asked)
        docs_repo = make_repo(tmp_path / "docs-repo", commits=1)
        registered = _cli(service_env, "repo-docs", "register", "--repo", "o/docs",
                          "--repository-path", str(docs_repo))
        assert registered.returncode == 0, registered.stderr
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        async def mcp_call() -> Any:
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "gitquarry", "mcp", "--project",
                                              str(tmp_path)], env=service_env)
            with open(tmp_path / "mcp.err", "w", encoding="utf-8") as errlog:
                async with (stdio_client(params, errlog=errlog) as (read, write),
                            ClientSession(read, write) as s):
                    await s.initialize()
                    return await s.call_tool("repository_docs_index", {})

        got = asyncio.run(asyncio.wait_for(mcp_call(), 120))
        text = "".join(getattr(c, "text", "") for c in got.content)
        assert got.is_error and "daemon_unreachable: " in text, text
        assert _daemons(state_home) == []
        from gitquarry.errors import DaemonUnreachableError
        from gitquarry.service.client import start_daemon

        try:
            start_daemon(timeout_s=5)
        except DaemonUnreachableError as exc:
            assert exc.code == "daemon_unreachable" and exc.pid == os.getpid()
        else:
            raise AssertionError("start_daemon did not refuse")
        assert _daemons(state_home) == []
