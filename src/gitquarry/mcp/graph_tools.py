"""The MCP tool ``search`` over the architecture graph, on the shared gitquarry server.

The tool calls ``gitquarry.graph.search_graph`` (the function behind ``gitquarry search``)
and returns the same result structure: one text block holding a JSON array of ``{ref_id,
kind, summary, snippet, rank}`` objects (LIKE-fallback results have no snippet or rank),
sent once (no structured-content copy), each field capped by
``gitquarry.bounded.GRAPH_LIMITS`` (a cut field ends with a marker and the result says so
under ``cut``). Arguments are type-checked strictly
(no coercion: ``"5"`` or ``true`` is not a ``limit``). Invalid arguments and
gitquarry errors come back as MCP tool errors (``is_error`` results) with the error's message.
"""

# No ``from __future__ import annotations``: the tool's annotations refer to a local
# (``kind_schema``), and the SDK evaluates them to build the input schema.
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from gitquarry.bounded import GRAPH_LIMITS, bound_results
from gitquarry.errors import GitquarryError
from gitquarry.graph import workspace_kinds
from gitquarry.graph.models import MAX_LIMIT, MIN_LIMIT
from gitquarry.mcp.annotations import json_text
from gitquarry.mcp.arguments import own_arguments
from gitquarry.mcp.errors import as_tool_error
from gitquarry.query.graph import GraphRequest, graph_request, search_graph_request
from gitquarry.workspace import resolve_workspace

TOOL_NAME = "search"

_DESCRIPTION = (
    "Searches the architecture graph, not Git history or repository docs (for commits use "
    "search_git_history; for docs at a revision, repository_docs_search): full-text search "
    "over the project's architecture graph (beadloom nodes: domains, "
    "features, services, entities, ADRs) and the Markdown docs linked to them. Every word "
    "must match. Returns a JSON array of {ref_id, kind, summary, snippet, rank}, best first "
    "(rank is BM25, lower is better; snippet marks matches with <b></b>)."
)


def register(server: MCPServer, project: Path) -> None:
    """Add the ``search`` tool to ``server``, searching the workspace at ``project``.

    The ``kind`` parameter's schema lists the five beadloom kinds plus any other kind the
    index holds when the tool is registered; a kind that is none of the graph's is a tool error
    (``invalid_argument``).
    :raises ConfigError: the workspace configuration is invalid.
    """
    workspace = resolve_workspace(project, for_search=True)
    try:
        kinds: list[str | None] = [*workspace_kinds(workspace), None]
    except GitquarryError:
        kinds = []
    kind_schema: dict[str, Any] = {"enum": kinds} if kinds else {}

    # strict: the schema says string/integer, so 5 as a query, "5" or true as a limit are
    # refused rather than coerced (pydantic's lax mode would turn true into limit=1).
    def search(
        query: Annotated[str, Field(strict=True, description="Words to search for.")],
        kind: Annotated[
            str | None,
            Field(
                strict=True, description="Only nodes of this kind.", json_schema_extra=kind_schema
            ),
        ] = None,
        limit: Annotated[
            int,
            Field(
                strict=True, ge=MIN_LIMIT, le=MAX_LIMIT, description="Maximum results (1-100)."
            ),
        ] = 10,
        diverse: Annotated[
            bool | None, Field(strict=True, description="Diversify results (MMR).")
        ] = None,
        min_score: Annotated[
            float | None,
            Field(ge=0, le=1, description="Leave out results scoring below this (0-1)."),
        ] = None,
    ) -> CallToolResult:
        arguments = own_arguments(search, locals())  # first, before any other name
        try:
            current = resolve_workspace(workspace.root, for_search=True)
            request = graph_tool_request(arguments)
            response = search_graph_request(current, request)
        except Exception as exc:  # typed errors, storage failures, or a bug: see mcp.errors
            raise as_tool_error(exc, workspace.db_path) from exc
        results = bound_results([r.to_dict() for r in response.results], GRAPH_LIMITS).results
        text = json_text(results)
        return CallToolResult(content=[TextContent(type="text", text=text)])  # sent once

    server.add_tool(search, name=TOOL_NAME, description=_DESCRIPTION)


def graph_tool_request(arguments: dict[str, Any]) -> GraphRequest:
    """The ``GraphRequest`` of one ``search`` call's arguments (as the tool function
    receives them, defaults filled).

    :raises InvalidArgumentError: see ``gitquarry.query.graph.graph_request``."""
    return graph_request(**arguments)
