"""Repository-docs revision sets as daemon jobs: `repo-docs index` through the daemon,
`--detach`, the MCP `repository_docs_index` and job tools, a new set on a new HEAD, and
retention (GC) on a real docs cache."""

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

from .conftest import Api, DaemonProcess, git

DOCS = {
    "README.md": "# Widget\n\nWidget renders dashboards for the ops team.\n",
    "docs/deploy.md": "# Deployment\n\n## Nginx\n\nThe reverse proxy forwards to gunicorn.\n",
}


def _docs_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in DOCS.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "docs")
    return path


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=env,
                          capture_output=True, text=True, timeout=180)


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_repo_docs_index_runs_as_a_daemon_job_with_mcp_tools_and_head_polling(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from gitquarry.repo_docs.registry import Registry

    repo = _docs_repo(tmp_path / "widget")
    Registry().register("acme/widget", repo)
    # `repo-docs index` starts the daemon, submits the job and follows it
    done = _cli(service_env, "repo-docs", "index", "--json")
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout)
    job = final["job"]
    assert final["finished"] and job["status"] == "succeeded" and job["type"] == "repo_docs_index"
    assert job["result"]["state"] == "ready" and job["result"]["eligible_files"] == 2
    assert job["result"]["gc"]["skipped"] is None
    events = api.call("jobs.show", id=job["id"])["events"]
    assert [e["kind"] for e in events] == ["gc"]
    assert "vector_bytes_before" in events[0]["data"]

    detached = _cli(service_env, "repo-docs", "index", "--detach", "--json")
    assert detached.returncode == 0, detached.stderr
    second = json.loads(detached.stdout)["job"]
    assert second["id"] != job["id"] and second["origin"] == "cli"
    api.wait_done(second["id"])

    async def session_calls() -> list[Any]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "gitquarry", "mcp", "--project", str(repo)],
                                       env=dict(os.environ))
        with open(tmp_path / "mcp.err", "w", encoding="utf-8") as errlog:
            async with (stdio_client(params, errlog=errlog) as (read, write),
                        ClientSession(read, write) as session):
                await session.initialize()
                submitted = await session.call_tool(
                    "repository_docs_index", {"repo_id": "acme/widget", "revision": "HEAD"})
                job_id = submitted.structured_content["job"]["id"]
                return [
                    submitted,
                    await session.call_tool("service_job_attach",
                                            {"job_id": job_id, "wait_s": 30}),
                    await session.call_tool("service_jobs_list", {"limit": 5}),
                    await session.call_tool("service_job_status", {"job_id": job_id}),
                    await session.call_tool("service_job_cancel", {"job_id": job_id}),
                    await session.call_tool("service_job_status", {"job_id": "job-999999"}),
                    await session.call_tool("repository_docs_index",
                                            {"repo_id": "acme/widget",
                                             "source_registration_generation": 1}),
                ]

    results = asyncio.run(asyncio.wait_for(session_calls(), 120))
    submitted, attached, listed, status, cancel, missing, partial = results
    assert not submitted.is_error and attached.structured_content["finished"]
    assert attached.structured_content["job"]["status"] == "succeeded"
    assert len(listed.structured_content["jobs"]) >= 3
    assert status.structured_content["job"]["type"] == "repo_docs_index"
    assert cancel.structured_content["already_finished"] is True
    assert missing.is_error and "job_not_found" in missing.content[0].text
    assert partial.is_error  # part of the three-field selector is refused
    for result in results:
        text = "".join(getattr(c, "text", "") for c in result.content)
        api.responses.append(text)
        assert str(tmp_path) not in text

    # a new HEAD: the coordinator's poll submits the new revision set by itself
    (repo / "docs" / "deploy.md").write_text("# Deployment\n\nBlue green.\n", encoding="utf-8")
    git(repo, "commit", "-qam", "new docs")
    head = git(repo, "rev-parse", "HEAD")

    def polled() -> dict[str, Any] | None:
        for j in api.jobs():
            if j["type"] == "repo_docs_index" and j["origin"] == "reconcile" and \
                    j["result"] and j["result"]["effective_revision"] == head:
                return j
        return None

    auto = api.wait_for(polled, timeout=30, what="a revision set for the new HEAD")
    assert auto["status"] == "succeeded" and auto["target"].startswith(head[:16])
    api.assert_no_absolute_paths(tmp_path)


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_retention_keeps_eight_sets_per_identity_the_newest_ready_and_referenced_vectors(
    tmp_path: Path, service_env: dict[str, str]
) -> None:
    from gitquarry.config import load_config
    from gitquarry.embedding.fake import fake_provider_registered
    from gitquarry.repo_docs.indexer import cache_dir_for, index_revision_set
    from gitquarry.repo_docs.registry import Registry
    from gitquarry.service.docs_jobs import collect_garbage

    repo = _docs_repo(tmp_path / "widget")
    binding = Registry().register("acme/widget", repo)
    config = load_config(None).replaced(embedding={"provider": "fake"})
    set_ids: list[str] = []
    with fake_provider_registered():
        for i in range(10):
            (repo / "docs" / "page.md").write_text(f"# Page\n\nRevision {i} of the text.\n")
            git(repo, "add", "-A")
            git(repo, "commit", "-qm", f"page revision {i}")
            set_ids.append(index_revision_set(binding, config).revision_set_id)
    cache_dir = cache_dir_for(binding, config)
    db = cache_dir / "repo_docs.db"
    conn = sqlite3.connect(str(db))
    for n, set_id in enumerate(set_ids):  # built one day apart, oldest first
        at = 1_800_000_000 + n * 86_400
        conn.execute("UPDATE revision_sets SET created_at = ?, updated_at = ?, completed_at = ? "
                     "WHERE set_id = ?", (at, at, at, set_id))
    conn.commit()
    now = 1_800_000_000 + 10 * 86_400

    report = collect_garbage(cache_dir, keep_set=set_ids[-1], now=now)
    assert report.skipped is None and report.deleted_sets == 2 and report.reasons == {"count": 2}
    assert report.vector_bytes_after < report.vector_bytes_before
    assert report.deleted_vectors > 0 and report.deleted_chunks > 0
    kept = {r[0] for r in conn.execute("SELECT set_id FROM revision_sets")}
    assert kept == set(set_ids[2:])
    unvectored = conn.execute(
        "SELECT count(*) FROM set_chunks sc WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE "
        "v.chunk_id = sc.chunk_id)").fetchone()[0]
    assert unvectored == 0  # nothing a kept set uses was deleted

    # 31 days later everything is too old, except the newest ready set (always kept)
    report = collect_garbage(cache_dir, now=now + 31 * 86_400)
    assert report.reasons == {"age": 7}
    assert {r[0] for r in conn.execute("SELECT set_id FROM revision_sets")} == {set_ids[-1]}
    # a byte ceiling below what the protected set needs evicts nothing protected
    report = collect_garbage(cache_dir, now=now, ceiling=1)
    assert report.deleted_sets == 0 and report.vector_bytes_after > 1
    conn.close()


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_reconcile_rebuilds_a_revision_set_only_when_its_cache_lost_it(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    """The coordinator's poll treats a HEAD as done while the set it published is in the
    docs cache: no job per reconcile cycle, and a new one when the cache was deleted."""
    from gitquarry.repo_docs.registry import Registry

    repo = _docs_repo(tmp_path / "widget")
    Registry().register("acme/widget", repo)
    daemon.start()

    def succeeded() -> list[dict[str, Any]]:
        return [j for j in api.jobs()
                if j["type"] == "repo_docs_index" and j["status"] == "succeeded"]

    first = api.wait_for(succeeded, timeout=60, what="the first revision set")
    time.sleep(4.0)  # more than two reconcile cycles (1.5 s here)
    assert [j["id"] for j in api.jobs() if j["type"] == "repo_docs_index"] == \
        [first[0]["id"]]
    for path in (repo / ".gitquarry").glob("repo_docs.db*"):
        path.unlink()
    rebuilt = api.wait_for(lambda: [j for j in succeeded() if j["id"] != first[0]["id"]],
                           timeout=60, what="the set rebuilt after the cache was deleted")
    assert rebuilt[0]["origin"] == "reconcile"
    assert rebuilt[0]["result"]["revision_set_id"] == first[0]["result"]["revision_set_id"]
    assert (repo / ".gitquarry" / "repo_docs.db").is_file()
