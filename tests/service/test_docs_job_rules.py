"""Seed 002's job rules, exactly (issue 20 §6), against real daemon processes:

- a remote, unknown or undeclared embedding provider is refused before a job is created
  (CLI, IPC, MCP; reconcile creates none);
- a configuration failure (``repository_docs_policy_invalid``) is not retryable: it fails
  once and waits for its input to change, then the changed input is built;
- seed names keep working: ``GITCODE_MCP_REPO_DOC_VECTOR_BYTES``, ``rebuild-commit-index``;
- the MCP docs tools' errors name MCP parameters, not CLI flags.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitquarry.errors import GitquarryError

from .conftest import FAST_CONFIG, Api, DaemonProcess, git, make_repo

# issue 24: real daemon processes or a second uid (seconds each); CI runs the slow set
pytestmark = pytest.mark.slow

DOCS = {"README.md": "# Widget\n\nWidget renders dashboards.\n",
        "docs/deploy.md": "# Deployment\n\nThe reverse proxy forwards to gunicorn.\n"}


def _docs_repo(path: Path, extra: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in {**DOCS, **(extra or {})}.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "docs")
    return path


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=env,
                          capture_output=True, text=True, timeout=180)


def _docs_jobs(api: Api) -> list[dict[str, Any]]:
    return [j for j in api.jobs() if j["type"] == "repo_docs_index"]


def _mcp(env: dict[str, str], repo: Path, calls: list[tuple[str, dict[str, Any]]],
         errlog: Path) -> list[Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session() -> list[Any]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "gitquarry", "mcp", "--project", str(repo)],
                                       env=env)
        with open(errlog, "w", encoding="utf-8") as err:
            async with (stdio_client(params, errlog=err) as (read, write),
                        ClientSession(read, write) as s):
                await s.initialize()
                return [await s.call_tool(name, args) for name, args in calls]

    return asyncio.run(asyncio.wait_for(session(), 150))


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.parametrize("boundary", ["remote", "unknown", ""])
def test_a_blocked_provider_is_refused_before_a_job_is_created(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str],
    boundary: str
) -> None:
    from gitquarry.repo_docs.registry import Registry

    declared = f'data_boundary = "{boundary}"\n' if boundary else ""
    Path(service_env["GITQUARRY_CONFIG"]).write_text(FAST_CONFIG.replace(
        'provider = "none"', 'provider = "openai"\nurl = "http://127.0.0.1:9/v1"\n'
        f'model = "m"\nallow_remote = true\n{declared}'), encoding="utf-8")
    repo = _docs_repo(tmp_path / "widget")
    Registry().register("acme/widget", repo)
    daemon.start()
    out = _cli(service_env, "repo-docs", "index", "--detach")
    assert out.returncode == 1, out.stdout
    assert "Submitted" not in out.stdout
    assert "data_boundary" in out.stderr and "local_process" in out.stderr, out.stderr
    with pytest.raises(GitquarryError) as info:
        api.call("docs.submit", repo="acme/widget")
    assert info.value.code == "repository_docs_provider_boundary_blocked"
    mcp_env = {k: v for k, v in service_env.items() if k != "XDG_RUNTIME_DIR"}
    (got,) = _mcp(mcp_env, repo, [("repository_docs_index", {"repo_id": "acme/widget"})],
                  tmp_path / "mcp.err")
    assert got.is_error and "repository_docs_provider_boundary_blocked: " in _text(got)
    time.sleep(4.0)  # more than two reconcile polls (every 1.5 s here)
    assert _docs_jobs(api) == []  # no job row, from any surface or the reconcile poll


def test_an_invalid_policy_fails_once_and_waits_for_the_input_to_change(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    from gitquarry.repo_docs.registry import Registry

    repo = _docs_repo(tmp_path / "widget", {".gitquarry.yaml": "repository_docs:\n"
                                                               "  schema: 2\n"})
    Registry().register("acme/widget", repo)
    daemon.start()
    submitted = _cli(service_env, "repo-docs", "index", "--detach", "--json")
    assert submitted.returncode == 0, submitted.stderr
    job_id = json.loads(submitted.stdout)["job"]["id"]
    failed = api.wait_done(job_id)
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "repository_docs_policy_invalid"
    assert failed["error"]["retryable"] is False
    # the daemon's start-up reconcile may have tried the same commit once before this
    # explicit request; every try fails once and none is retried or re-created
    before = {j["id"]: j for j in _docs_jobs(api)}
    assert job_id in before and len(before) <= 2
    time.sleep(5.0)  # retry_base_s is 0.5 and reconcile polls every 1.5 s here
    after = {j["id"]: j for j in _docs_jobs(api)}
    assert set(after) == set(before), after  # reconcile created none
    for job in after.values():
        assert job["status"] == "failed" and job["attempts"] == 1, job
        assert job["error"]["code"] == "repository_docs_policy_invalid"
    # the input changes (the policy is fixed and committed): the poll builds it
    (repo / ".gitquarry.yaml").write_text("repository_docs:\n  schema: 1\n", encoding="utf-8")
    git(repo, "commit", "-qam", "fix the docs policy")
    head = git(repo, "rev-parse", "HEAD")

    def built() -> dict[str, Any] | None:
        return next((j for j in _docs_jobs(api) if j["status"] == "succeeded"
                     and j["result"]["effective_revision"] == head), None)

    assert api.wait_for(built, timeout=60, what="the set of the fixed policy")["origin"] \
        == "reconcile"


def test_seed_vector_byte_ceiling_name_is_read_when_ours_is_unset(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitquarry.service.docs_jobs import DEFAULT_VECTOR_BYTES, vector_byte_ceiling

    monkeypatch.delenv("GITQUARRY_REPO_DOC_VECTOR_BYTES", raising=False)
    monkeypatch.delenv("GITCODE_MCP_REPO_DOC_VECTOR_BYTES", raising=False)
    assert vector_byte_ceiling() == DEFAULT_VECTOR_BYTES
    monkeypatch.setenv("GITCODE_MCP_REPO_DOC_VECTOR_BYTES", "4096")
    assert vector_byte_ceiling() == 4096
    monkeypatch.setenv("GITQUARRY_REPO_DOC_VECTOR_BYTES", "8192")  # ours wins when set
    assert vector_byte_ceiling() == 8192
    monkeypatch.setenv("GITQUARRY_REPO_DOC_VECTOR_BYTES", "")
    assert vector_byte_ceiling() == 4096


def test_rebuild_commit_index_is_the_history_rebuild(
    service_env: dict[str, str], tmp_path: Path
) -> None:
    ws = make_repo(tmp_path / "proj", commits=3)
    assert _cli(service_env, "index", str(ws), "--no-embed", "-q").returncode == 0
    db = ws / ".gitquarry" / "index.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE rebuild_marker (x)")  # gone once the index is rebuilt
    conn.commit()
    conn.close()
    out = _cli(service_env, "rebuild-commit-index", str(ws), "--no-embed", "-q")
    assert out.returncode == 0, out.stderr
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "rebuild_marker" not in tables  # deleted and built again from Git
        assert conn.execute("SELECT count(*) FROM git_commits").fetchone()[0] == 3
    finally:
        conn.close()
    helped = _cli(service_env, "rebuild-commit-index", "--help")
    assert helped.returncode == 0 and "rebuild-commit-index" in helped.stdout


def test_mcp_docs_errors_name_mcp_parameters_not_cli_flags(
    daemon: DaemonProcess, tmp_path: Path, service_env: dict[str, str]
) -> None:
    from gitquarry.repo_docs.registry import Registry

    repo = _docs_repo(tmp_path / "widget")
    (repo / "README.md").write_text("# Widget\n\nNow with charts.\n", encoding="utf-8")
    git(repo, "commit", "-qam", "more docs")
    Registry().register("acme/widget", repo)
    Registry().register("acme/other", _docs_repo(tmp_path / "other"))
    daemon.start()
    results = _mcp(dict(os.environ), repo, [
        ("repository_docs_index", {"repo_id": "acme/widget", "registration_id": "reg-x"}),
        ("repository_docs_search", {"repo_id": "acme/widget", "query": "proxy",
                                    "registration_id": "reg-x"}),
        ("repository_docs_search", {"repo_id": "acme/widget", "query": "proxy",
                                    "revision": "HEAD~1", "include_worktree": True}),
        ("repository_docs_search", {"query": "proxy"}),
        ("repository_docs_status", {}),
    ], tmp_path / "mcp.err")
    texts = [_text(r) for r in results]
    assert all(r.is_error for r in results), texts
    partial_index, partial_search, overlay, ambiguous, ambiguous_status = texts
    for text in (partial_index, partial_search):
        assert "repository_docs_registration_invalid: " in text, text
        assert "registration_id, source_registration_id and source_registration_generation" \
            in text, text
    assert "include_worktree" in overlay and "revision" in overlay, overlay
    for text in (ambiguous, ambiguous_status):
        assert "repository_docs_sources" in text and "repo_id" in text, text
    for text in texts:
        assert "--" not in text, text


def test_the_rebind_command_the_web_page_offers_works_with_several_sources(
    service_env: dict[str, str], tmp_path: Path
) -> None:
    import shlex

    from gitquarry.repo_docs.registry import Registry

    from .test_small_things import _get, _sign_in, _web

    first = _docs_repo(tmp_path / "first")
    second = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(first), str(second))
    moved = tmp_path / "moved"
    git(tmp_path, "clone", "-q", str(first), str(moved))
    registry = Registry()
    registry.register("acme/multi", first)
    source = registry.register("acme/multi", second).public()
    assert len(registry.bindings("acme/multi")) == 2
    try:
        base, login = _web(service_env)
        cookie = _sign_in(base, login)

        def handoff(generation: int) -> str:
            from urllib.parse import urlencode

            query = urlencode({"repo": "acme/multi", "reg": source["registration_id"],
                               "src": source["source_registration_id"], "gen": generation})
            status, _, body = _get(base, f"/api/repos/docs?{query}", cookie)
            assert status == 200, body[:300]
            return str(json.loads(body)["snap"]["handoffs"]["rebind"])

        for generation, target in ((1, moved), (1, second)):  # current, then stale
            cmd = handoff(generation)
            assert f"--source-registration-id {source['source_registration_id']}" in cmd
            args = shlex.split(cmd.replace("/path/to/checkout", shlex.quote(str(target))))
            assert args[:3] == ["gitquarry", "repo-docs", "rebind"]
            out = _cli(service_env, *args[1:])
            assert out.returncode == 0, (cmd, out.stderr)
        current = [b for b in Registry().bindings("acme/multi")
                   if b.source.source_registration_id == source["source_registration_id"]]
        assert current[0].source.generation == 3
    finally:
        _cli(service_env, "daemon", "stop")
