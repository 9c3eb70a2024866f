"""Issue 19 §3: one bad revision must not break docs search for everyone.

A revision such as ``HEAD@{upstream}`` (no upstream), ``HEAD@{100000}`` or ``:../x`` used to
reach the shared ``git cat-file --batch`` process, which dies on them; every later docs search
of that repository then failed until the process restarted. Through a real ``gitquarry mcp``
subprocess and the official SDK client: each bad revision is ``revision_not_found`` and a good
search right after it still answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, Repo, user_config, with_mcp_server

BAD_REVISIONS = ["HEAD@{upstream}", "HEAD@{100000}", ":../x", "HEAD:../../", "HEAD:docs",
                 "main@{push}", "HEAD^{tree}", "nosuchbranch", "-n", "HEAD@{-1}"]


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_bad_revisions_are_typed_and_the_reader_survives_over_mcp(tmp_path: Path,
                                                                   cli: CLI) -> None:
    project = tmp_path / "proj"
    repo = Repo(project)
    first = repo.commit("docs", {"docs/deploy.md": "# Deploy\n\nUse a reverse proxy.\n"})
    repo.commit("more docs", {"docs/deploy.md": "# Deploy\n\nUse a reverse proxy, twice.\n"})
    user_config('[embedding]\nprovider = "none"\n')
    code, _, err = cli("repo-docs", "register", "--repo", "acme/widget",
                       "--repository-path", str(project))
    assert code == 0, err
    args = {"query": "reverse proxy", "repo_id": "acme/widget", "mode": "fulltext"}

    async def body(session: Any) -> Any:
        out = [await session.call_tool("repository_docs_search", args)]
        for revision in BAD_REVISIONS:
            bad = await session.call_tool("repository_docs_search",
                                          {**args, "revision": revision})
            good = await session.call_tool("repository_docs_search", args)
            old = await session.call_tool("repository_docs_search",
                                          {**args, "revision": first})
            out.append((revision, bad, good, old))
        return out

    (baseline, *rounds), _ = with_mcp_server(project, body, tmp_path)
    assert not baseline.is_error, baseline.content[0].text
    expected = json.loads(baseline.content[0].text)["hits"]
    assert expected
    for revision, bad, good, old in rounds:
        text = bad.content[0].text
        assert bad.is_error, (revision, text)
        assert "revision_not_found" in text, (revision, text)
        assert "git_failed" not in text and "Broken pipe" not in text, (revision, text)
        assert not good.is_error, (revision, good.content[0].text)
        assert json.loads(good.content[0].text)["hits"] == expected, revision
        assert not old.is_error, (revision, old.content[0].text)
        payload = json.loads(old.content[0].text)
        assert payload["effective_revision"] == first and payload["hits"], revision
