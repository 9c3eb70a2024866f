"""Issue 23 §1: every surface builds its corpus's request through the shared object.

For each corpus (history, repository docs, architecture graph) the CLI, the MCP server and
the web page turn their own input into one frozen request (``gitquarry.query``). Equal inputs
give equal requests, and equal bad inputs the same typed error (class, code, message),
whichever surface they came through. The CLI's and the MCP tools' defaults are read from the
real command and the real registered tool functions (a server built for an empty directory,
as ``gitquarry mcp --help`` builds one), so a default changed on one surface shows here.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gitquarry.cli.graph import cli_graph_request
from gitquarry.cli.graph import search as graph_cmd
from gitquarry.cli.history import cli_history_request, history_cmd
from gitquarry.cli.repo_docs import cli_docs_request, search_cmd
from gitquarry.errors import (
    GitquarryError,
    InvalidArgumentError,
    InvalidGlobError,
    InvalidTimeError,
)
from gitquarry.mcp.graph_tools import graph_tool_request
from gitquarry.mcp.history_tools import tool_request
from gitquarry.mcp.repo_docs_tools import docs_tool_request
from gitquarry.query.docs import DocsRequest
from gitquarry.query.graph import GraphRequest
from gitquarry.query.history import HistoryRequest
from gitquarry.repo_docs.registry import Selector
from gitquarry.web.backend import (
    selector_from,
    web_docs_request,
    web_graph_request,
    web_history_request,
)

SURFACE_ONLY = ("as_json", "json_output", "project")


def _defaults(fn: Callable[..., Any]) -> dict[str, Any]:
    """The keyword defaults of a command or tool function (its own input's defaults)."""
    return {name: p.default for name, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty and name not in SURFACE_ONLY}


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Callable[..., Any]]]:
    """The registered MCP tool functions, by name."""
    from gitquarry.mcp import repo_docs_tools
    from gitquarry.mcp.server import build_server

    empty = tmp_path_factory.mktemp("empty")
    server, searcher = build_server(empty)
    try:
        yield {tool.name: tool.fn for tool in server._tool_manager.list_tools()}
    finally:
        searcher.close()
        repo_docs_tools.close_all()


# -- history ---------------------------------------------------------------------------

def cli_history(query: str, **given: Any) -> HistoryRequest:
    return cli_history_request(query, **{**_defaults(history_cmd), **given})


def mcp_history(tools: dict[str, Callable[..., Any]], query: str, **given: Any
                ) -> HistoryRequest:
    return tool_request({**_defaults(tools["search_git_history"]), "query": query, **given})


def test_history_requests_are_equal_for_equal_inputs(tools: dict[str, Any]) -> None:
    common = {"top_n": 7, "files_glob": "src/**/*.py", "after": "2024-01-01",
              "before": "2024-06-30", "author": "ada", "committer": "bob", "path": "src/net",
              "pickaxe": "retry()", "sort": "oldest", "min_score": 0.25, "detail": "compact",
              "max_tokens": 4000}
    cli = cli_history("parser timeout", **common, merges=False, no_collapse=True,
                      diverse=True)
    mcp = mcp_history(tools, "parser timeout", **common, merges="exclude", collapse=False,
                      diverse=True)
    assert cli == mcp
    assert cli.merges == "exclude" and cli.collapse is False and cli.diverse is True
    assert cli.before is not None and cli.before.seconds == 1_719_791_999  # the whole day
    with pytest.raises(dataclasses.FrozenInstanceError):
        cli.query = "other"  # type: ignore[misc]

    # the web page's fields: its empty fields are "not given", as an option left out
    web = web_history_request("parser timeout", mode="", files_glob="src/**/*.py",
                              after="2024-01-01", before="2024-06-30", top_n=7)
    cli = cli_history("parser timeout", files_glob="src/**/*.py", after="2024-01-01",
                      before="2024-06-30", top_n=7)
    mcp = mcp_history(tools, "parser timeout", files_glob="src/**/*.py", after="2024-01-01",
                      before="2024-06-30", top_n=7)
    assert web == cli
    assert mcp.max_tokens == 8000  # the MCP tools' default budget; otherwise the same
    assert dataclasses.replace(mcp, max_tokens=None) == web
    assert web_history_request("q", mode="lexical", top_n=5) == cli_history(
        "q", mode="lexical", top_n=5)
    # the seed's integer bounds name the same seconds as the CLI's Unix-seconds text
    by_ts = mcp_history(tools, "q", after_timestamp=1_704_067_200)
    assert by_ts.after == cli_history("q", after="1704067200").after


def _error(build: Callable[[], Any]) -> tuple[type[GitquarryError], str, str]:
    with pytest.raises(GitquarryError) as info:
        build()
    return type(info.value), info.value.code, str(info.value)


HISTORY_BAD: list[tuple[dict[str, Any], type[GitquarryError], tuple[str, ...]]] = [
    ({"after": "not a time"}, InvalidTimeError, ("cli", "mcp", "web")),
    ({"after": "2024-06-01", "before": "2024-01-01"}, InvalidArgumentError,
     ("cli", "mcp", "web")),
    ({"files_glob": "src/[a"}, InvalidGlobError, ("cli", "mcp", "web")),
    ({"top_n": 0}, InvalidArgumentError, ("cli", "mcp", "web")),
    ({"top_n": 101}, InvalidArgumentError, ("cli", "mcp", "web")),
    ({"mode": "fuzzy"}, InvalidArgumentError, ("cli", "web")),
    ({"sort": "sideways"}, InvalidArgumentError, ("cli", "mcp")),
    ({"min_score": 1.5}, InvalidArgumentError, ("cli", "mcp")),
    ({"detail": "everything"}, InvalidArgumentError, ("cli", "mcp")),
    ({"max_tokens": 10}, InvalidArgumentError, ("cli", "mcp")),
    ({"author": "a\x00b"}, InvalidArgumentError, ("cli", "mcp")),
    ({"path": "x" * 1001}, InvalidArgumentError, ("cli", "mcp")),
]


@pytest.mark.parametrize(("bad", "kind", "surfaces"), HISTORY_BAD,
                         ids=[next(iter(b)) + "-" + str(i) for i, (b, _, _) in
                              enumerate(HISTORY_BAD)])
def test_history_bad_inputs_are_the_same_typed_error(
        tools: dict[str, Any], bad: dict[str, Any], kind: type[GitquarryError],
        surfaces: tuple[str, ...]) -> None:
    builders: dict[str, Callable[[], Any]] = {
        "cli": lambda: cli_history("parser", **bad),
        "mcp": lambda: mcp_history(tools, "parser", **bad),
        "web": lambda: web_history_request("parser", **bad),
    }
    errors = {name: _error(builders[name]) for name in surfaces}
    first = errors[surfaces[0]]
    assert first[0] is kind, first
    assert all(error == first for error in errors.values()), errors


def test_the_cli_merges_flags_and_the_tool_enum_agree(tools: dict[str, Any]) -> None:
    # the CLI leaves top_n to [search] top_n, the tool defaults to the seed's 5
    assert cli_history("q").top_n is None and mcp_history(tools, "q").top_n == 5
    assert cli_history("q", merges=True, top_n=5) == mcp_history(
        tools, "q", merges="only", max_tokens=None)
    assert cli_history("q", merges=None).merges is None
    assert mcp_history(tools, "q").merges is None  # the tool's default: as configured


# -- repository docs ---------------------------------------------------------------------

def cli_docs(query: str, **given: Any) -> DocsRequest:
    options = {**_defaults(search_cmd), **given}
    selector = Selector(options.pop("repo"), options.pop("registration_id"),
                        options.pop("source_id"), options.pop("generation"))
    return cli_docs_request(query, selector=selector, **options)


def mcp_docs(tools: dict[str, Any], query: str, **given: Any) -> DocsRequest:
    return docs_tool_request({**_defaults(tools["repository_docs_search"]), "query": query,
                              **given})


def web_docs(query: str, *, repo: str | None = None, **given: Any) -> DocsRequest:
    return web_docs_request(selector_from({"repo": repo or ""}), query, **given)


def test_docs_requests_are_equal_for_equal_inputs(tools: dict[str, Any]) -> None:
    cli = cli_docs("reverse proxy", repo="acme/widget", revision="v1.0", mode="fulltext",
                   limit=7, include_worktree=True, diverse=True, min_score=0.3,
                   max_tokens=4000)
    mcp = mcp_docs(tools, "reverse proxy", repo_id="acme/widget", revision="v1.0",
                   mode="fulltext", limit=7, include_worktree=True, diverse=True,
                   min_score=0.3, max_tokens=4000)
    assert cli == mcp
    assert cli.selector == Selector("acme/widget", None, None, None)
    web = web_docs("reverse proxy", repo="acme/widget", revision="v1.0", mode="fulltext",
                   limit=7, include_worktree=True)
    cli = cli_docs("reverse proxy", repo="acme/widget", revision="v1.0", mode="fulltext",
                   limit=7, include_worktree=True)
    assert web == cli
    mcp = mcp_docs(tools, "reverse proxy", repo_id="acme/widget", revision="v1.0",
                   mode="fulltext", limit=7, include_worktree=True)
    assert dataclasses.replace(mcp, max_tokens=None) == web  # the tool's budget: 8000
    # the web page's empty fields, as options left out
    assert web_docs("q", repo="acme/widget", revision="", mode="") == cli_docs(
        "q", repo="acme/widget")


DOCS_BAD: list[tuple[dict[str, Any], tuple[str, ...]]] = [
    ({"mode": "semantic"}, ("cli", "mcp", "web")),
    ({"limit": 0}, ("cli", "mcp", "web")),
    ({"limit": 51}, ("cli", "mcp", "web")),
    ({"query": "   "}, ("cli", "mcp", "web")),
    ({"query": "x" * 2001}, ("cli", "mcp", "web")),
    ({"min_score": 2.0}, ("cli", "mcp")),
    ({"max_tokens": 100}, ("cli", "mcp")),
]


@pytest.mark.parametrize(("bad", "surfaces"), DOCS_BAD,
                         ids=[next(iter(b)) + "-" + str(i) for i, (b, _) in
                              enumerate(DOCS_BAD)])
def test_docs_bad_inputs_are_the_same_typed_error(
        tools: dict[str, Any], bad: dict[str, Any], surfaces: tuple[str, ...]) -> None:
    given = dict(bad)
    query = given.pop("query", "reverse proxy")
    builders: dict[str, Callable[[], Any]] = {
        "cli": lambda: cli_docs(query, repo="acme/widget", **given),
        "mcp": lambda: mcp_docs(tools, query, repo_id="acme/widget", **given),
        "web": lambda: web_docs(query, repo="acme/widget", **given),
    }
    errors = {name: _error(builders[name]) for name in surfaces}
    first = errors[surfaces[0]]
    assert first[0] is InvalidArgumentError, first
    assert all(error == first for error in errors.values()), errors


# -- architecture graph ------------------------------------------------------------------

def cli_graph(query: str, **given: Any) -> GraphRequest:
    options = {**_defaults(graph_cmd), **given}
    options.pop("explain")  # shapes the CLI's output, not the search
    return cli_graph_request(query, **options)


def mcp_graph(tools: dict[str, Any], query: str, **given: Any) -> GraphRequest:
    return graph_tool_request({**_defaults(tools["search"]), "query": query, **given})


def test_graph_requests_are_equal_for_equal_inputs(tools: dict[str, Any]) -> None:
    cli = cli_graph("auth service", kind="service", limit=7, diverse=True, min_score=0.5)
    mcp = mcp_graph(tools, "auth service", kind="service", limit=7, diverse=True,
                    min_score=0.5)
    assert cli == mcp == GraphRequest(query="auth service", kind="service", limit=7,
                                      diverse=True, min_score=0.5)
    assert web_graph_request("auth service", kind="service", limit=7) == cli_graph(
        "auth service", kind="service", limit=7) == mcp_graph(
        tools, "auth service", kind="service", limit=7)
    assert web_graph_request("q", kind="", limit=10) == cli_graph("q")  # empty kind: any


@pytest.mark.parametrize(("bad", "surfaces"), [
    ({"limit": 0}, ("cli", "mcp", "web")),
    ({"limit": 101}, ("cli", "mcp", "web")),
    ({"min_score": -0.1}, ("cli", "mcp")),
], ids=["limit-0", "limit-101", "min_score"])
def test_graph_bad_inputs_are_the_same_typed_error(
        tools: dict[str, Any], bad: dict[str, Any], surfaces: tuple[str, ...]) -> None:
    builders: dict[str, Callable[[], Any]] = {
        "cli": lambda: cli_graph("auth", **bad),
        "mcp": lambda: mcp_graph(tools, "auth", **bad),
        "web": lambda: web_graph_request("auth", **bad),
    }
    errors = {name: _error(builders[name]) for name in surfaces}
    first = errors[surfaces[0]]
    assert first[0] is InvalidArgumentError, first
    assert all(error == first for error in errors.values()), errors


def test_the_history_tool_takes_its_arguments_and_nothing_else(tools: dict[str, Any]) -> None:
    """``own_arguments``: the tool passes exactly its parameters to the builder (a nested
    function's ``locals()`` also holds the names it closes over)."""
    from gitquarry.mcp.arguments import own_arguments

    fn = tools["search_git_history"]
    scope = {**_defaults(fn), "query": "q", "lock": object(), "workspace": object()}
    assert set(own_arguments(fn, scope)) == set(inspect.signature(fn).parameters)
