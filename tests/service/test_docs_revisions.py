"""The revision asked for is the revision built (issue 20 §2).

A documentation repository whose tag, branch, an older commit and HEAD each hold different
docs. Every surface that submits a docs job (CLI, MCP, web, the daemon's reconcile poll)
asks for the tag, the branch and the hash while the docs cache's writer lease is held by
this test, so the jobs wait queued while reconcile submits HEAD: each job must carry the
commit its revision names and build exactly that set (the old runner let one queued job
absorb every request of the registration, taking the newest target, and built HEAD).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from .conftest import Api, git

# issue 24: real daemon processes or a second uid (seconds each); CI runs the slow set
pytestmark = pytest.mark.slow


def request(base: str, method: str, path: str, *, headers: dict[str, str] | None = None,
            body: str | None = None) -> tuple[int, dict[str, str], str]:
    """Raw HTTP to the daemon's web page (as tests/web/http_client.py)."""
    import http.client
    from urllib.parse import urlparse

    url = urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read().decode("utf-8", "replace")
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def sign_in(base: str, login_url: str) -> str:
    """Redeem a login URL; returns the ``Cookie`` header value of the new session."""
    from urllib.parse import urlparse

    url = urlparse(login_url)
    status, headers, _ = request(base, "GET", f"{url.path}?{url.query}")
    assert status == 303, status
    return headers["set-cookie"].split(";", 1)[0]


def _commit(repo: Path, word: str, message: str) -> str:
    (repo / "docs").mkdir(exist_ok=True)
    (repo / "docs" / "guide.md").write_text(
        f"# Guide\n\n## Release\n\nThis release introduces the {word} feature.\n",
        encoding="utf-8")
    # only the docs: the test's own lease made .gitquarry/ before gitquarry could exclude it,
    # and a tracked .gitquarry/ is refused as the checkout's (issue 19 §2)
    git(repo, "add", "docs")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def _revision_repo(path: Path) -> dict[str, str]:
    """Commits: tag ``v1.0`` (aardvark), branch ``legacy`` (badger), an older main commit
    named by hash (capybara), HEAD of main (dingo). Returns revision → commit."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    tagged = _commit(path, "aardvark", "first docs")
    git(path, "tag", "v1.0")
    git(path, "checkout", "-q", "-b", "legacy")
    branch = _commit(path, "badger", "legacy docs")
    git(path, "checkout", "-q", "main")
    older = _commit(path, "capybara", "second docs")
    head = _commit(path, "dingo", "third docs")
    return {"v1.0": tagged, "legacy": branch, older: older, "HEAD": head}


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gitquarry", *args], env=env,
                          capture_output=True, text=True, timeout=180)


def _mcp_submit(env: dict[str, str], repo: Path, revisions: list[str],
                errlog: Path) -> list[dict[str, Any]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session() -> list[dict[str, Any]]:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "gitquarry", "mcp", "--project", str(repo)],
                                       env=env)
        jobs = []
        with open(errlog, "w", encoding="utf-8") as err:
            async with (stdio_client(params, errlog=err) as (read, write),
                        ClientSession(read, write) as s):
                await s.initialize()
                for revision in revisions:
                    got = await s.call_tool("repository_docs_index",
                                            {"repo_id": "acme/revs", "revision": revision})
                    assert not got.is_error, got.content
                    jobs.append(dict(got.structured_content["job"]))
        return jobs

    return asyncio.run(asyncio.wait_for(session(), 150))


def _web_submit(env: dict[str, str], selector: dict[str, Any],
                revisions: list[str]) -> list[str]:
    started = _cli(env, "web", "--no-open", "--json")
    assert started.returncode == 0, started.stderr
    login = json.loads(started.stdout)["login_url"]
    base = login.split("/", 3)
    base_url = f"{base[0]}//{base[2]}/"
    cookie = sign_in(base_url, login)
    _, _, page = request(base_url, "GET", "/status", headers={"Cookie": cookie})
    import re

    csrf = re.search(r'<meta name="csrf-token" content="([^"]+)"', page)
    assert csrf is not None
    ids = []
    for revision in revisions:
        form = urlencode({"repo": selector["repo_id"], "reg": selector["registration_id"],
                          "src": selector["source_registration_id"],
                          "gen": selector["source_registration_generation"], "rev": revision,
                          "confirm": "yes", "csrf": csrf.group(1)})
        status, headers, body = request(base_url, "POST", "/repos/docs/index", body=form,
                                        headers={"Cookie": cookie,
                                                 "Origin": base_url.rstrip("/"),
                                                 "Content-Type":
                                                 "application/x-www-form-urlencoded"})
        assert status == 303, (status, body[:300])
        ids.append(headers["location"].rsplit("/", 1)[1])
    return ids


def test_every_surface_builds_the_revision_it_asked_for(
    service_env: dict[str, str], tmp_path: Path, api: Api
) -> None:
    from gitquarry.repo_docs.indexer import writer_lock
    from gitquarry.repo_docs.registry import Registry

    repo = tmp_path / "revs"
    commits = _revision_repo(repo)
    selector = Registry().register("acme/revs", repo).public()
    revisions = [k for k in commits if k != "HEAD"]  # the tag, the branch, the hash
    expected = commits
    cache = repo / ".gitquarry"
    cache.mkdir()
    asked: list[tuple[str, str, str]] = []  # (surface, revision, job id)
    try:
        with writer_lock(cache):  # every job waits queued behind this test's lease
            for revision in revisions:
                done = _cli(service_env, "repo-docs", "index", "--revision", revision,
                            "--detach", "--json")
                assert done.returncode == 0, done.stderr
                asked.append(("cli", revision, json.loads(done.stdout)["job"]["id"]))
            for revision, job in zip(revisions, _mcp_submit(
                    {k: v for k, v in service_env.items() if k != "XDG_RUNTIME_DIR"}, repo,
                    revisions, tmp_path / "mcp.err"), strict=True):
                asked.append(("mcp", revision, job["id"]))
            for revision, job_id in zip(revisions, _web_submit(service_env, selector,
                                                               revisions), strict=True):
                asked.append(("web", revision, job_id))
            # the daemon's reconcile poll (every 1.5 s here) submits HEAD meanwhile
            def reconciled() -> dict[str, Any] | None:
                for j in api.jobs():
                    if j["type"] == "repo_docs_index" and j["origin"] == "reconcile":
                        return j
                return None

            first = api.wait_for(reconciled, timeout=30, what="the reconcile job for HEAD")
            # HEAD moves before that job ran: the next poll moves the waiting automatic job
            # to the new HEAD (no set for a HEAD nobody asked for any more)
            commits["HEAD"] = _commit(repo, "echidna", "fourth docs")
            api.wait_for(lambda: commits["HEAD"].startswith(
                api.job(first["id"])["target"].split(":", 1)[0]), timeout=30,
                what="the reconcile job following HEAD")
            time.sleep(2.0)  # more polls while the others still wait
        finals = {job_id: api.wait_job(job_id, lambda j: j["status"] == "succeeded",
                                       timeout=120) for _, _, job_id in asked}
        for surface, revision, job_id in asked:
            job = finals[job_id]
            shown = job["target"].split(":", 1)[0]  # the public target abbreviates it
            assert len(shown) >= 12 and expected[revision].startswith(shown), \
                (surface, revision)
            assert job["result"]["effective_revision"] == expected[revision], \
                (surface, revision, job["result"])
        recon = [j for j in api.jobs() if j["origin"] == "reconcile"]
        assert recon and all(commits["HEAD"].startswith(j["target"].split(":", 1)[0])
                                  for j in recon)
        assert all(api.wait_done(j["id"])["status"] == "succeeded" for j in recon)
        # each job published the set of exactly its commit, and every commit has its set
        import sqlite3

        conn = sqlite3.connect(f"file:{cache / 'repo_docs.db'}?mode=ro", uri=True)
        try:
            sets = {r[0]: (r[1], r[2]) for r in conn.execute(
                "SELECT set_id, commit_oid, state FROM revision_sets")}
        finally:
            conn.close()
        for surface, revision, job_id in asked:
            assert sets[finals[job_id]["result"]["revision_set_id"]] == \
                (expected[revision], "ready"), (surface, revision)
        assert {c for c, state in sets.values() if state == "ready"} == set(commits.values())
    finally:
        _cli(service_env, "daemon", "stop")
