"""Issue 24 §4: the MCP server as the best servers are — every tool has a title and the four
behaviour hints, every tool's text is one compact JSON style, the graph tool (seed name
``search``) says it searches the architecture graph, and the README's client snippet works
as written, started the way clients start servers (a reduced environment).

Real MCP client sessions (the official SDK's stdio client) against ``gitquarry mcp``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from gitquarry.mcp.annotations import TOOL_ANNOTATIONS, json_text

from .conftest import CLI, Repo, tool_json, user_config, with_mcp_server

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
#: the tools that change state (submit or cancel a daemon job); every other one only reads
CHANGES_STATE = {"repository_docs_index", "service_job_cancel"}


@pytest.fixture
def workspace(tmp_path: Path, cli: CLI) -> Path:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "repo")
    repo.commit("Retry uploads three times", {"net.py": "retries = 3\n"})
    repo.commit("Document the uploader", {"docs/upload.md": "# Upload\n\nRetries.\n"})
    graph = ws / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text("nodes:\n  - {ref_id: uploader, kind: service, summary: "
                                 "Uploads files with retries}\n", encoding="utf-8")
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    return ws


def _compact(text: str) -> bool:
    return text == json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_every_tool_has_a_title_and_all_four_hints(workspace: Path, tmp_path: Path) -> None:
    async def body(session: Any) -> Any:
        return (await session.list_tools()).tools

    tools, _ = with_mcp_server(workspace, body, tmp_path)
    names = {tool.name for tool in tools}
    assert names == set(TOOL_ANNOTATIONS), names ^ set(TOOL_ANNOTATIONS)
    for tool in tools:
        hints = tool.annotations
        assert tool.title and hints is not None and hints.title == tool.title, tool
        flags = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint,
                 hints.open_world_hint)
        assert None not in flags, (tool.name, flags)
        assert hints.read_only_hint is (tool.name not in CHANGES_STATE), tool.name
        assert hints.open_world_hint is False, tool.name
    by_name = {tool.name: tool for tool in tools}
    assert by_name["service_job_cancel"].annotations.destructive_hint is True
    assert by_name["repository_docs_index"].annotations.destructive_hint is False
    graph = by_name["search"]  # the seed's name, kept
    assert graph.description.startswith("Searches the architecture graph"), graph.description
    assert "architecture graph" in graph.title.lower()


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_every_tool_answers_in_one_compact_json_style(workspace: Path, tmp_path: Path) -> None:
    async def body(session: Any) -> Any:
        history = await session.call_tool("search_git_history",
                                          {"query": "retry", "top_n": 2})
        graph = await session.call_tool("search", {"query": "uploads"})
        sha = tool_json(history)["results"][0]["hash"]
        commit = await session.call_tool("get_commit", {"commit": sha})
        blame = await session.call_tool("blame_search", {"path": "net.py"})
        sources = await session.call_tool("repository_docs_sources", {})
        return [history, graph, commit, blame, sources]

    results, _ = with_mcp_server(workspace, body, tmp_path)
    for result in results:
        text = result.content[0].text
        assert not result.is_error, text
        assert "\n" not in text and _compact(text), text[:300]
    # the job tools (they need a running daemon) write through the same function
    from gitquarry.mcp.job_tools import _result

    text = _result({"job": {"id": "job-000001", "progress": {"done": 1}}}).content[0].text
    assert text == json_text({"job": {"id": "job-000001", "progress": {"done": 1}}})
    assert _compact(text)


def _readme_snippet() -> dict[str, Any]:
    section = README.split("## MCP client configuration", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```json\n(.*?)```", section, re.S)
    assert block, "README's MCP section has no JSON block"
    data: dict[str, Any] = json.loads(block.group(1))
    return data


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_the_readme_snippet_starts_a_working_server_with_a_reduced_environment(
        workspace: Path, tmp_path: Path) -> None:
    """As Claude Desktop or Cursor do: the command and args from the README's block (its two
    placeholders filled in), an environment of HOME, PATH (the system's, not the venv's) and
    the like only, started from another directory."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = _readme_snippet()["mcpServers"]["gitquarry"]
    assert set(server) == {"command", "args"}, server
    exe = Path(sys.executable).parent / "gitquarry"
    assert exe.exists()
    text = json.dumps(server).replace("/path/to/.venv/bin/gitquarry", str(exe)) \
        .replace("/path/to/workspace", str(workspace))
    assert "/path/to" not in text, text
    filled = json.loads(text)
    system_path = os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin")
                                  if Path(p).is_dir())
    assert shutil.which("git", path=system_path), "git must be on the system PATH"
    # the SDK adds only HOME, LOGNAME, PATH, SHELL, TERM, USER of this process (as clients do)
    params = StdioServerParameters(command=filled["command"], args=filled["args"],
                                   env={"PATH": system_path}, cwd=str(tmp_path))
    errlog = tmp_path / "server-stderr.txt"

    async def main() -> Any:
        with open(errlog, "w", encoding="utf-8") as log:
            async with (stdio_client(params, errlog=log) as (read, write),
                        ClientSession(read, write) as session):
                init = await session.initialize()
                result = await session.call_tool(
                    "search_git_history", {"query": "retry uploads", "top_n": 1})
                return init, result

    init, result = asyncio.run(asyncio.wait_for(main(), 120))
    assert init.server_info.name == "gitquarry"
    data = tool_json(result)
    assert data["results"][0]["title"] == "Retry uploads three times", data
