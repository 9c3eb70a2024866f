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
    assert got.is_error and _text(got).startswith("repository_docs_provider_boundary_blocked")
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
    time.sleep(5.0)  # retry_base_s is 0.5 and reconcile polls every 1.5 s here
    again = api.job(job_id)
    assert again["status"] == "failed" and again["attempts"] == 1, again
    assert [j["id"] for j in _docs_jobs(api)] == [job_id]  # reconcile created none
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
    before = db.stat().st_ino
    out = _cli(service_env, "rebuild-commit-index", str(ws), "--no-embed", "-q")
    assert out.returncode == 0, out.stderr
    assert db.stat().st_ino != before  # deleted and built again
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT count(*) FROM git_commits").fetchone()[0] == 3
    finally:
        conn.close()
    helped = _cli(service_env, "--help")
    assert "rebuild-commit-index" in helped.stdout


def test_mcp_docs_errors_name_mcp_parameters_not_cli_flags(
    daemon: DaemonProcess, tmp_path: Path, service_env: dict[str, str]
) -> None:
    from gitquarry.repo_docs.registry import Registry

    repo = _docs_repo(tmp_path / "widget")
    Registry().register("acme/widget", repo)
    Registry().register("acme/other", _docs_repo(tmp_path / "other"))
    daemon.start()
    results = _mcp(dict(os.environ), repo, [
        ("repository_docs_index", {"repo_id": "acme/widget", "registration_id": "reg-x"}),
        ("repository_docs_search", {"repo_id": "acme/widget", "query": "proxy",
                                    "registration_id": "reg-x"}),
        ("repository_docs_index", {"repo_id": "acme/widget", "revision": "HEAD~0",
                                   "include_worktree": True}),
        ("repository_docs_search", {"query": "proxy"}),
        ("repository_docs_status", {}),
    ], tmp_path / "mcp.err")
    texts = [_text(r) for r in results]
    assert all(r.is_error for r in results), texts
    partial_index, partial_search, overlay, ambiguous, ambiguous_status = texts
    for text in (partial_index, partial_search):
        assert text.startswith("repository_docs_registration_invalid")
        assert "registration_id, source_registration_id and source_registration_generation" \
            in text, text
    assert "include_worktree" in overlay and "revision" in overlay, overlay
    for text in (ambiguous, ambiguous_status):
        assert "repository_docs_sources" in text and "repo_id" in text, text
    for text in texts:
        assert "--" not in text, text
