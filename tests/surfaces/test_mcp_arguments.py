"""Unknown MCP arguments are tool errors naming them and the accepted ones, for every tool;
a missing or mistyped argument is a typed gitquarry error, not pydantic's text. Through a real
``gitquarry mcp`` subprocess and the official SDK client, on a real repository and index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, Repo, tool_json, user_config, with_mcp_server


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_unknown_and_missing_arguments_are_typed_tool_errors(tmp_path: Path, cli: CLI) -> None:
    project = tmp_path / "proj"
    repo = Repo(project)
    repo.commit("Deploy behind a reverse proxy",
                {"README.md": "# Widget\n", "docs/deploy.md": "# Deploy\n\nUse a reverse proxy.\n"})
    user_config('[embedding]\nprovider = "none"\n')
    code, _, err = cli("index", str(project), "-q")
    assert code == 0, err
    code, _, err = cli("repo-docs", "register", "--repo", "acme/widget",
                       "--repository-path", str(project))
    assert code == 0, err

    async def body(session: Any) -> Any:
        tools = (await session.list_tools()).tools
        bogus = {t.name: await session.call_tool(t.name, {"zz_bogus": 1}) for t in tools}
        wrong_repo = await session.call_tool("repository_docs_search",
                                             {"query": "reverse proxy", "repo": "nobody/none"})
        mode = await session.call_tool("search_git_history",
                                       {"query": "reverse proxy", "mode": "lexical"})
        missing = await session.call_tool("get_commit", {})
        mistyped = await session.call_tool("search_git_history", {"query": "proxy", "top_n": 0})
        good = await session.call_tool("search_git_history", {"query": "reverse proxy"})
        docs = await session.call_tool("repository_docs_search",
                                       {"query": "reverse proxy", "repo_id": "acme/widget",
                                        "mode": "fulltext"})
        return tools, bogus, wrong_repo, mode, missing, mistyped, good, docs

    (tools, bogus, wrong_repo, mode, missing, mistyped, good, docs), _ = \
        with_mcp_server(project, body, tmp_path)
    assert len(tools) >= 14
    for tool in tools:
        result = bogus[tool.name]
        text = result.content[0].text
        assert result.is_error, (tool.name, text)
        assert text.startswith(f"Error executing tool {tool.name}: unknown_argument: "), text
        assert "'zz_bogus'" in text, text
        for name in tool.input_schema.get("properties", {}):
            assert name in text, (tool.name, name, text)

    text = wrong_repo.content[0].text
    assert wrong_repo.is_error and "'repo'" in text and "repo_id" in text, text
    text = mode.content[0].text
    assert mode.is_error and "'mode'" in text and "query (required)" in text, text

    text = missing.content[0].text
    assert missing.is_error, text
    assert "tool get_commit: invalid_argument: commit: required argument missing" in text, text
    text = mistyped.content[0].text
    assert mistyped.is_error and "history: invalid_argument: top_n: " in text, text
    for text in (missing.content[0].text, mistyped.content[0].text):
        assert "pydantic" not in text and "validation error" not in text, text

    assert tool_json(good)["results"][0]["title"] == "Deploy behind a reverse proxy"
    assert json.loads(docs.content[0].text)["hits"], docs.content[0].text


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_mcp_help_lists_every_tool_the_server_serves(tmp_path: Path, cli: CLI,
                                                     monkeypatch: Any) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    code, out, err = cli("mcp", "--help")
    assert code == 0, err
    empty = tmp_path / "empty"
    empty.mkdir()

    async def body(session: Any) -> Any:
        return [tool.name for tool in (await session.list_tools()).tools]

    names, _ = with_mcp_server(empty, body, tmp_path)
    assert len(names) >= 14
    listed = [line.split()[0] for line in out.splitlines()
              if line.startswith("   ") and line.split() and line.split()[0] in names]
    assert listed == names, out
    assert f"Tools ({len(names)}):" in out
    assert "search_git_history and search to" not in out  # the old two-tool wording
