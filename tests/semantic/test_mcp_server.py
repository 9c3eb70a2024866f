"""``gitquarry mcp`` driven through the official SDK's stdio client, in a real subprocess:
list tools, call ``search_git_history`` with valid and invalid arguments, check the JSON."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from gitquarry.mcp.history_tools import ORDER_FIELDS, PIPELINE_FIELDS

from .conftest import GitRepo, Harness, write_user_config
from .realistic_repo import COMMITS, SAMESITE_TITLE, build_shop_repo

#: The seed's input schema for search_git_history, verbatim.
SEED_INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Natural language query describing commits to find",
        },
        "top_n": {
            "type": "integer",
            "default": 5,
            "minimum": 1,
            "maximum": 100,
            "description": "Maximum number of commits to return",
        },
        "files_glob": {
            "type": "string",
            "description": "Optional glob pattern to filter by changed files (e.g., 'src/**/*.py')",
        },
        "after_timestamp": {
            "type": "integer",
            "description": "Optional Unix timestamp to filter commits after this date",
        },
        "before_timestamp": {
            "type": "integer",
            "description": "Optional Unix timestamp to filter commits before this date",
        },
    },
    "required": ["query"],
}

RESULT_FIELDS = {
    "hash", "title", "author", "committer", "timestamp", "message", "files_changed",
    "delta_truncated", "score", "repo_path",
}

Session = Callable[[ClientSession], Awaitable[Any]]

#: the repository-docs tools the same server also serves (tests in tests/repo_docs)
#: the daemon's job tools (tests/service covers them)
JOB_TOOLS = {"service_jobs_list", "service_job_status", "service_job_attach",
             "service_job_cancel", "repository_docs_index"}
REPO_DOCS_TOOLS = {
    "repository_docs_sources", "repository_docs_policy", "repository_docs_plan",
    "repository_docs_status", "repository_docs_search",
}


def with_server(project: Path, body: Session, tmp_path: Path, timeout: float = 120) -> Any:
    """Start ``python -m gitquarry mcp --project <project>``, initialise, run ``body``."""
    errlog_path = tmp_path / "mcp-server-stderr.txt"

    async def main() -> Any:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "gitquarry", "mcp", "--project", str(project)],
            env=dict(os.environ),  # the test's isolated HOME / GITQUARRY_CONFIG
        )
        with open(errlog_path, "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    try:
        return asyncio.run(asyncio.wait_for(main(), timeout))
    except BaseException:
        sys.stderr.write(errlog_path.read_text(encoding="utf-8") if errlog_path.exists() else "")
        raise


def payload(result: Any) -> dict[str, Any]:
    """The JSON of a successful call: one text block, sent once (no structured copy)."""
    assert not result.is_error, result.content[0].text
    assert len(result.content) == 1 and result.structured_content is None
    data = json.loads(result.content[0].text)
    return data


@pytest.fixture
def lexical_project(
    workspace_dir: Path, make_repo: Callable[[str], GitRepo]
) -> tuple[Path, dict[str, str]]:
    """The shop repository, indexed with ``[embedding] provider = "none"``."""
    write_user_config('[embedding]\nprovider = "none"\n')
    hashes = build_shop_repo(make_repo("shopfront"))
    Harness(workspace_dir, provider="none").index()
    return workspace_dir, hashes


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_lists_both_tools_with_the_seed_schema(
    lexical_project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, _ = lexical_project

    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in with_server(project, body, tmp_path)}
    assert set(tools) == ({"search_git_history", "search", "get_commit", "blame_search"}
                          | REPO_DOCS_TOOLS | JOB_TOOLS)
    schema = tools["search_git_history"].input_schema
    # the seed's schema verbatim, plus the optional merge filter and order (issue 8 §4),
    # result-pipeline switches (issue 14) and issue 12's optional properties
    extra = {**ORDER_FIELDS, **PIPELINE_FIELDS}
    seed_part = {**schema, "properties": {
        k: v for k, v in schema["properties"].items() if k in SEED_INPUT_SCHEMA["properties"]
    }}
    assert seed_part == SEED_INPUT_SCHEMA
    assert {k: schema["properties"][k] for k in extra} == extra
    assert schema["properties"]["merges"]["enum"] == ["include", "exclude", "only"]
    assert schema["properties"]["sort"]["enum"] == ["relevance", "newest", "oldest"]
    assert schema["properties"]["max_tokens"]["default"] == 8000
    assert tools["search_git_history"].description
    assert tools["search"].input_schema["required"] == ["query"]


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_valid_call_returns_the_seed_response(
    lexical_project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, hashes = lexical_project

    async def body(session: ClientSession) -> Any:
        return [
            await session.call_tool("search_git_history", {"query": "cookie samesite"}),
            await session.call_tool(
                "search_git_history", {"query": "cookie", "top_n": 1, "files_glob": "app/**/*.py"}
            ),
            await session.call_tool(
                "search_git_history",
                {"query": "cookie samesite settings", "top_n": 100, "after_timestamp": 0,
                 "before_timestamp": 4_000_000_000},
            ),
            await session.call_tool(
                "search_git_history",
                {"query": "cookie", "top_n": 5, "sort": "oldest", "merges": "exclude"},
            ),
        ]

    first, globbed, bounded, oldest = with_server(project, body, tmp_path)
    data = payload(first)
    assert data["query"] == "cookie samesite"
    assert data["total_commits_indexed"] == len(COMMITS)
    assert data["effective_mode"] == "lexical"  # provider none: hybrid degrades
    assert isinstance(data["warnings"], list) and data["warnings"]
    assert all(isinstance(w, str) for w in data["warnings"])
    assert "no embedding model" in data["warnings"][0]
    assert 1 <= len(data["results"]) <= 5
    top = data["results"][0]
    assert set(top) >= RESULT_FIELDS
    assert top["title"] == SAMESITE_TITLE and top["hash"] == hashes[SAMESITE_TITLE]
    assert top["message"].startswith("Chrome and Safari")  # the body, without the title
    assert SAMESITE_TITLE not in top["message"]
    assert top["files_changed"] == ["app/settings/cookies.py"]
    assert '+        "samesite": "Lax",' in top["delta_truncated"]
    assert top["author"].startswith("Ada Author") and top["committer"].startswith("Cy Committer")
    assert isinstance(top["timestamp"], int)
    assert Path(top["repo_path"]) == (project / "shopfront").resolve()
    scores = [r["score"] for r in data["results"]]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)

    one = payload(globbed)["results"]
    assert len(one) == 1 and all(f.startswith("app/") for f in one[0]["files_changed"])
    assert len(payload(bounded)["results"]) >= 2
    stamps = [r["timestamp"] for r in payload(oldest)["results"]]
    assert len(stamps) >= 2 and stamps == sorted(stamps)


INVALID_CALLS: list[tuple[dict[str, Any], str]] = [
    ({"query": "cookie", "top_n": 0}, "top_n"),
    ({"query": "cookie", "top_n": 101}, "top_n"),
    ({"query": "cookie", "files_glob": "app/[settings"}, "glob"),
    ({"query": "cookie", "files_glob": "{app,docs"}, "glob"),
    ({"query": "cookie", "after_timestamp": "last tuesday"}, "after_timestamp"),
    # a string is not an integer, even one made of digits (no silent coercion)
    ({"query": "cookie", "after_timestamp": "1704067200"}, "after_timestamp"),
    ({"query": "cookie", "top_n": "3"}, "top_n"),
    ({"query": "cookie", "top_n": True}, "top_n"),
    ({"query": "cookie", "before_timestamp": 1.5}, "before_timestamp"),
    ({"top_n": 3}, "query"),
    ({"query": 42}, "query"),
    ({"query": "cookie", "after_timestamp": 2_000_000_000, "before_timestamp": 1}, "after"),
    ({"query": "cookie", "merges": "sometimes"}, "merges"),
    ({"query": "cookie", "sort": "random"}, "sort"),
]


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_invalid_arguments_are_tool_errors_and_the_server_keeps_answering(
    lexical_project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, _ = lexical_project

    async def body(session: ClientSession) -> Any:
        answers = []
        for arguments, _needle in INVALID_CALLS:
            bad = await session.call_tool("search_git_history", arguments)
            good = await session.call_tool("search_git_history", {"query": "cookie", "top_n": 2})
            answers.append((bad, good))
        return answers

    answers = with_server(project, body, tmp_path)
    for (arguments, needle), (bad, good) in zip(INVALID_CALLS, answers, strict=True):
        assert bad.is_error, (arguments, bad.content)
        message = bad.content[0].text
        assert message and needle in message, (arguments, message)
        assert len(payload(good)["results"]) == 2, arguments


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_workspace_without_index_is_a_tool_error_naming_gitquarry_index(
    workspace_dir: Path, make_repo: Callable[[str], GitRepo], tmp_path: Path
) -> None:
    write_user_config('[embedding]\nprovider = "none"\n')
    make_repo("never-indexed").commit("First commit", {"a.txt": "a\n"})

    async def body(session: ClientSession) -> Any:
        tools = (await session.list_tools()).tools
        first = await session.call_tool("search_git_history", {"query": "first"})
        second = await session.call_tool("search_git_history", {"query": "first"})
        return tools, first, second

    tools, first, second = with_server(workspace_dir, body, tmp_path)
    assert {t.name for t in tools} == ({"search_git_history", "search", "get_commit",
                                        "blame_search"} | REPO_DOCS_TOOLS | JOB_TOOLS)
    for result in (first, second):
        assert result.is_error
        assert "gitquarry index" in result.content[0].text


@pytest.mark.slow
def test_default_model_hybrid_search_over_mcp(
    workspace_dir: Path, make_repo: Callable[[str], GitRepo], tmp_path: Path,
    cli: Callable[..., tuple[int, str, str]],
) -> None:
    """The real default model in the server process: hybrid, and the model serves every
    call (loaded once per process)."""
    hashes = build_shop_repo(make_repo("shopfront"))
    code, _, err = cli("index", str(workspace_dir), "--quiet")
    assert code == 0, err

    async def body(session: ClientSession) -> Any:
        return [
            await session.call_tool(
                "search_git_history",
                {"query": "cookies were rejected by browsers after an update", "top_n": 3},
            ),
            await session.call_tool("search_git_history", {"query": "x", "top_n": 0}),
            await session.call_tool(
                "search_git_history", {"query": "exporting orders to a spreadsheet", "top_n": 3}
            ),
        ]

    first, bad, second = with_server(workspace_dir, body, tmp_path)
    data = payload(first)
    assert data["effective_mode"] == "hybrid" and data["warnings"] == []
    assert data["results"][0]["hash"] == hashes[SAMESITE_TITLE]
    assert all(0.0 <= r["score"] <= 1.0 for r in data["results"])
    assert bad.is_error
    other = payload(second)
    assert other["effective_mode"] == "hybrid"
    assert other["results"][0]["title"] == "Add CSV export of orders for accounting"


@pytest.mark.slow
def test_server_loads_the_model_once_for_many_calls(
    workspace_dir: Path, make_repo: Callable[[str], GitRepo],
    cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In-process: the server's tools share one searcher, so three hybrid calls build one
    ONNX runtime (the real one, counted by a delegating subclass)."""
    from gitquarry.embedding import minilm
    from gitquarry.mcp.server import build_server

    build_shop_repo(make_repo("shopfront"))
    code, _, err = cli("index", str(workspace_dir), "--quiet")
    assert code == 0, err

    loads: list[object] = []

    class CountingRuntime(minilm.Runtime):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            loads.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(minilm, "Runtime", CountingRuntime)
    monkeypatch.setattr(minilm, "_RUNTIMES", {})  # forget the runtime `index` loaded
    server, searcher = build_server(workspace_dir)
    try:
        assert loads == []  # starting the server loads nothing

        async def calls() -> list[Any]:
            return [
                await server.call_tool("search_git_history", {"query": query})
                for query in ("cookie problems", "invoice numbering bug", "docker deployment")
            ]

        results = asyncio.run(calls())
    finally:
        searcher.close()
    for result in results:
        assert json.loads(result.content[0].text)["effective_mode"] == "hybrid"
    assert len(loads) == 1


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_agent_tools_over_a_real_session(
    lexical_project: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Issue 12: compact search within a budget, paging by cursor, get_commit, blame_search."""
    project, _ = lexical_project

    async def body(session: ClientSession) -> Any:
        first = payload(await session.call_tool("search_git_history", {
            "query": "checkout cart", "top_n": 2, "detail": "compact", "max_tokens": 1500}))
        second = payload(await session.call_tool("search_git_history", {
            "query": "checkout cart", "top_n": 2, "detail": "compact", "max_tokens": 1500,
            "cursor": first["next_cursor"]})) if first["next_cursor"] else {"results": []}
        commit = first["results"][0]["hash"]
        shown = payload(await session.call_tool("get_commit", {"commit": commit[:10],
                                                               "max_tokens": 2000}))
        path = shown["files"][0]["path"]
        blamed = payload(await session.call_tool("blame_search", {
            "path": path, "query": "checkout", "max_tokens": 3000}))
        bad = await session.call_tool("get_commit", {"commit": "xyz"})
        return first, second, shown, blamed, bad

    first, second, shown, blamed, bad = with_server(project, body, tmp_path)
    from gitquarry.token_budget import json_tokens

    assert json_tokens(first) <= 1500 and "excerpt" in first["results"][0]
    assert first["index_state"]["up_to_date"] is True
    assert "refs" in first["results"][0]
    hashes = [r["hash"] for r in first["results"] + second["results"]]
    assert len(hashes) == len(set(hashes))
    assert shown["hash"].startswith(shown["hash"][:10]) and shown["diff_source"] == "git"
    assert shown["diff"].startswith("diff --git")
    assert blamed["blame"] and blamed["history"]["results"]
    assert bad.is_error and "commit_not_found" in bad.content[0].text
