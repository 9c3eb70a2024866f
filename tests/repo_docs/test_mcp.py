"""The repository_docs_* MCP tools, driven through the SDK's in-process client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

from gitquarry.config import Config
from gitquarry.mcp import repo_docs_tools
from gitquarry.repo_docs.registry import Registry

from .conftest import Repo


def session(config: Config, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def go() -> list[Any]:
        server = MCPServer("gitquarry-test")
        service = repo_docs_tools.register(server, config, Registry())
        try:
            async with Client(server) as client:
                out: list[Any] = [await client.list_tools()]
                for name, args in calls:
                    out.append(await client.call_tool(name, args))
                return out
        finally:
            service.close()

    return anyio.run(go)


def test_tools_listed_with_strict_schemas(fake_config: Config) -> None:
    (tools,) = session(fake_config, [])
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == {"repository_docs_sources", "repository_docs_policy",
                            "repository_docs_plan", "repository_docs_status",
                            "repository_docs_search"}
    search = by_name["repository_docs_search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["maximum"] == 50


def test_search_policy_plan_status_over_mcp(fake_config: Config, docs_repo: Repo,
                                            tmp_path: Path) -> None:
    Registry().register("acme/widget", docs_repo.path)
    results = session(fake_config, [
        ("repository_docs_sources", {}),
        ("repository_docs_policy", {"repo_id": "acme/widget"}),
        ("repository_docs_plan", {"repo_id": "acme/widget", "list_files": True}),
        ("repository_docs_search", {"query": "gunicorn", "mode": "fulltext"}),
        ("repository_docs_status", {"repo_id": "https://github.com/ACME/widget.git"}),
        ("repository_docs_search", {"query": "x", "limit": "5"}),
        ("repository_docs_search", {"query": "x", "registration_id": "reg-1"}),
        ("repository_docs_search", {"query": "x", "repo_id": "nobody/here"}),
    ])
    sources, policy, plan, search, status = (json.loads(r.content[0].text)
                                             for r in results[1:6])
    assert sources["sources"][0]["repo_id"] == "acme/widget"
    assert policy["policy_source"] == "builtin"
    assert plan["eligible_files"] == 3
    assert search["hits"][0]["citation"]["path"] == "docs/deploy.md"
    assert search["effective_mode"] == "fulltext"
    assert status["head_set"] is None
    bad_type, partial, unknown = results[6:]
    assert bad_type.is_error
    assert partial.is_error and "repository_docs_registration_invalid" in \
        partial.content[0].text
    assert unknown.is_error and "not registered" in unknown.content[0].text
    text = "".join(r.content[0].text for r in results[1:6])
    assert str(tmp_path) not in text and str(docs_repo.path) not in text
