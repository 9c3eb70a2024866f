"""The MCP ``search`` tool, driven in-process through the SDK's client."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from gitquarry.graph import search_graph
from gitquarry.mcp.graph_tools import register
from gitquarry.workspace import resolve_workspace


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITQUARRY_CONFIG", os.devnull)  # no user configuration


def call(project: Path, arguments: dict[str, Any]) -> Any:
    async def go() -> Any:
        server = MCPServer("gitquarry-test")
        register(server, project)
        async with Client(server) as client:
            return await client.call_tool("search", arguments)

    return anyio.run(go)


def list_tools(project: Path) -> Any:
    async def go() -> Any:
        server = MCPServer("gitquarry-test")
        register(server, project)
        async with Client(server) as client:
            return await client.list_tools()

    return anyio.run(go)


def test_tool_is_listed_with_schema(project: Path) -> None:
    (tool,) = [t for t in list_tools(project).tools if t.name == "search"]
    props = tool.input_schema["properties"]
    # the seed's fields plus the result pipeline's optional switches (issue 14)
    assert set(props) == {"query", "kind", "limit", "diverse", "min_score"}
    assert tool.input_schema["required"] == ["query"]
    assert props["limit"]["minimum"] == 1 and props["limit"]["maximum"] == 100
    assert props["kind"]["enum"][:5] == ["domain", "feature", "service", "entity", "adr"]


def test_kind_enum_includes_kinds_in_index(make_project) -> None:
    project = make_project("nodes:\n  - {ref_id: q, kind: queue, summary: Job queue}\n", {})
    search_graph(resolve_workspace(project), "job")  # builds the index
    (tool,) = list_tools(project).tools
    assert "queue" in tool.input_schema["properties"]["kind"]["enum"]


def test_search_returns_same_structure_as_cli(project: Path) -> None:
    result = call(project, {"query": "zeppelin"})
    assert result.is_error is False
    (content,) = result.content
    data = json.loads(content.text)
    expected = [r.to_dict() for r in search_graph(resolve_workspace(project), "zeppelin").results]
    assert data == expected
    assert data[0]["ref_id"] == "mcp-server" and "<b>" in data[0]["snippet"]
    assert result.structured_content is None  # the payload is sent once, as text


def test_kind_and_limit(project: Path) -> None:
    data = json.loads(call(project, {"query": "search", "kind": "service"}).content[0].text)
    assert data and all(item["kind"] == "service" for item in data)
    data = json.loads(call(project, {"query": "search", "limit": 1}).content[0].text)
    assert len(data) == 1


def test_unknown_kind_is_a_tool_error(project: Path) -> None:
    result = call(project, {"query": "search", "kind": "servise"})
    assert result.is_error is True
    text = result.content[0].text
    assert "search: invalid_argument: kind: unknown kind 'servise'" in text, text
    assert "did you mean 'service'?" in text


@pytest.mark.parametrize("limit", [0, 101])
def test_invalid_limit_is_tool_error(project: Path, limit: int) -> None:
    result = call(project, {"query": "search", "limit": limit})
    assert result.is_error is True
    assert "limit" in result.content[0].text


def test_no_graph_is_tool_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = call(empty, {"query": "anything"})
    assert result.is_error is True
    assert "has no architecture graph" in result.content[0].text
    assert "search_git_history" in result.content[0].text  # where an agent looks instead


def test_quote_in_query(project: Path) -> None:
    result = call(project, {"query": 'say "hi"'})
    assert result.is_error is False and json.loads(result.content[0].text) == []


@pytest.mark.parametrize(
    ("arguments", "bad"),
    [
        ({"query": "search", "limit": "5"}, "limit"),
        ({"query": "search", "limit": True}, "limit"),
        ({"query": "search", "limit": 5.0}, "limit"),
        ({"query": 5}, "query"),
        ({"query": "search", "kind": 3}, "kind"),
    ],
    ids=["limit-str", "limit-bool", "limit-float", "query-int", "kind-int"],
)
def test_arguments_are_strictly_typed(project: Path, arguments: dict[str, Any], bad: str) -> None:
    # as search_git_history: no lax coercion ("5" -> 5, true -> 1)
    result = call(project, arguments)
    assert result.is_error is True
    assert bad in result.content[0].text


def test_strict_types_still_accept_valid_arguments(project: Path) -> None:
    result = call(project, {"query": "search", "kind": None, "limit": 2})
    assert result.is_error is False and len(json.loads(result.content[0].text)) == 2
