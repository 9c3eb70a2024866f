"""The gitquarry MCP server (stdio): ``search_git_history``, ``get_commit``, ``blame_search``,
the graph ``search`` tool, the ``repository_docs_*`` tools and the daemon's ``service_job*``
tools (``tool_catalogue`` lists them as registered).

Built with the official ``mcp`` SDK's ``MCPServer``. One process serves one workspace; the
embedding model is loaded at most once per process, on the first hybrid query.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from gitquarry import __version__
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.mcp.arguments import CheckedMCPServer
from gitquarry.workspace import resolve_workspace

INSTRUCTIONS = (
    "gitquarry searches this workspace's Git history (search_git_history; get_commit opens "
    "one commit, blame_search answers who changed some lines and why), its "
    "architecture graph (search) and registered repositories' documentation at any Git "
    "revision (repository_docs_search, with repository_docs_sources/policy/plan/status). "
    "Results are pinned to exact commit hashes."
)


def build_server(project: Path | None) -> tuple[MCPServer, HistorySearcher]:
    """The configured server and the searcher it owns (close it after ``run``).

    :raises ConfigError, InvalidArgumentError: the workspace or its configuration is invalid.
    """
    from gitquarry.mcp import answer_tools, graph_tools, history_tools, job_tools, repo_docs_tools

    workspace = resolve_workspace(project, for_search=True)
    for warning in workspace.config.warnings:  # the server's stderr is the client's log
        logging.getLogger("gitquarry.mcp").warning("%s", warning.message)
    server: MCPServer = CheckedMCPServer(
        name="gitquarry", version=__version__, instructions=INSTRUCTIONS
    )
    searcher = HistorySearcher(workspace)
    from gitquarry.history.search import phrase_cache

    phrase_cache.enable()  # a long-lived process: keyword terms kept per index state
    from gitquarry.embedding.process_kind import mark_long_lived

    mark_long_lived()  # the optimised ONNX session from the first text on
    answers = history_tools.register(server, workspace, searcher)
    answer_tools.register(server, answers)
    graph_tools.register(server, workspace.root)
    repo_docs_tools.register(server, workspace.config)
    job_tools.register(server)
    return server, searcher


def tool_catalogue() -> list[tuple[str, str]]:
    """``(name, description)`` of every tool the server registers, in registration order:
    what ``gitquarry mcp --help`` lists. Built by registering the tools on a server for an
    empty temporary directory (nothing is indexed, written or started).

    :raises GitquarryError: the user configuration is invalid.
    """
    import tempfile

    from gitquarry.mcp import repo_docs_tools

    with tempfile.TemporaryDirectory(prefix="gitquarry-tools-") as empty:
        server, searcher = build_server(Path(empty))
        try:
            return [(tool.name, tool.description or "")
                    for tool in server._tool_manager.list_tools()]
        finally:
            searcher.close()
            repo_docs_tools.close_all()


def serve_stdio(project: Path | None) -> None:
    """Run the server on stdin/stdout until the client disconnects."""
    from gitquarry.mcp import repo_docs_tools

    server, searcher = build_server(project)
    try:
        server.run("stdio")
    finally:
        searcher.close()
        repo_docs_tools.close_all()
