"""The MCP tool ``search_git_history`` (the seed's contract), on the shared gitquarry server.

Input schema: the seed's (``query`` required; ``top_n`` 1..100 default 5; ``files_glob``;
``after_timestamp``; ``before_timestamp``) plus optional fields beyond it: the filter
``merges`` (include/exclude/only) and the order ``sort`` (relevance/newest/oldest), issue 8
§4, and the result-pipeline switches ``collapse``, ``diverse`` and ``min_score``. Output: one
text block holding the JSON response, sent once (no structured-content copy) — ``results``
(hash, title, author, committer, timestamp, message, files_changed, delta_truncated, score,
repo_path, ``copies`` and ``copies_omitted`` (issue 14), and ``cut`` when a field was
shortened), ``query``, ``total_commits_indexed``, ``effective_mode``, ``results_omitted``,
``warnings`` — bounded by ``gitquarry.bounded.HISTORY_LIMITS`` (every field capped, at most
1,000,000 bytes in all). Invalid arguments and gitquarry errors come back as tool errors
(``is_error``) with the error's message; the server never crashes on them.
"""

# No ``from __future__ import annotations``: the SDK evaluates the tool's annotations.
import json
import threading
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from gitquarry.bounded import bound_history_response
from gitquarry.errors import GitquarryError, InvalidArgumentError
from gitquarry.history.service import HistorySearcher
from gitquarry.mcp.errors import as_tool_error
from gitquarry.retrieval.filters import interpret_time
from gitquarry.store.connection import read_only_note
from gitquarry.workspace import Workspace

TOOL_NAME = "search_git_history"

#: Optional fields beyond the seed's schema: the merge filter and the order (issue 8 §4).
ORDER_FIELDS: dict[str, Any] = {
    "merges": {
        "type": "string",
        "enum": ["include", "exclude", "only"],
        "default": "include",
        "description": "Merge commits: include (default), exclude (no merges) or only merges",
    },
    "sort": {
        "type": "string",
        "enum": ["relevance", "newest", "oldest"],
        "default": "relevance",
        "description": "relevance (default), or the most relevant matches ordered by commit "
        "time (newest or oldest first; 'oldest' finds the commit that introduced something)",
    },
}

#: Optional fields beyond the seed's schema: the result pipeline's per-request switches.
PIPELINE_FIELDS: dict[str, Any] = {
    "collapse": {
        "type": "boolean",
        "default": True,
        "description": "Show copies of one change (cherry-picks, backports, rebased copies, "
        "merges of shown commits) once, listed under 'copies'; false lists each separately",
    },
    "diverse": {
        "type": "boolean",
        "description": "Diversify results (MMR); default from the server's configuration",
    },
    "min_score": {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": "Leave out results whose score is below this (0-1)",
    },
}

#: The seed's input schema, verbatim (section 5.1), plus ``PIPELINE_FIELDS``.
INPUT_SCHEMA: dict[str, Any] = {
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
        # beyond the seed: the merge filter and the order (issue 8 §4), the result
        # pipeline's per-request switches (issue 14)
        **ORDER_FIELDS,
        **PIPELINE_FIELDS,
    },
    "required": ["query"],
}

_DESCRIPTION = (
    "Search the Git commit history of every repository in the workspace, by meaning and by "
    "keyword (hybrid BM25 + embedding search fused with RRF). Filter by changed-file glob "
    "(gitignore-style, e.g. 'src/**/*.py') and by committer time (Unix seconds, inclusive). "
    "Returns commits with hash, title, message, author, committer, timestamp, files_changed, "
    "a truncated diff, a score in [0, 1] and the repository path."
)


#: How this tool names the library's arguments (``InvalidArgumentError.argument``).
TOOL_ARGUMENT_NAMES = {
    "after": "after_timestamp",
    "before": "before_timestamp",
    "after/before": "after_timestamp/before_timestamp",
}


def tool_message(exc: GitquarryError) -> str:
    """``exc``'s message with arguments under this tool's parameter names."""
    if isinstance(exc, InvalidArgumentError) and exc.argument in TOOL_ARGUMENT_NAMES:
        return f"{TOOL_ARGUMENT_NAMES[exc.argument]}: {exc.detail}"
    return str(exc)


def register(server: MCPServer, workspace: Workspace, searcher: HistorySearcher) -> None:
    """Add ``search_git_history`` to ``server``, answering from ``searcher`` (one per process,
    so the embedding model loads once). Calls are serialised on one lock."""
    lock = threading.Lock()

    # strict: the schema says integer/string, so "5", "1700000000" and true are refused
    # rather than coerced (pydantic's lax mode would turn true into top_n=1).
    def search_git_history(
        query: Annotated[
            str, Field(strict=True, description="Natural language query describing commits")
        ],
        top_n: Annotated[int, Field(strict=True, ge=1, le=100)] = 5,
        files_glob: Annotated[str | None, Field(strict=True)] = None,
        after_timestamp: Annotated[int | None, Field(strict=True)] = None,
        before_timestamp: Annotated[int | None, Field(strict=True)] = None,
        merges: Annotated[str | None, Field(strict=True)] = None,
        sort: Annotated[str, Field(strict=True)] = "relevance",
        collapse: Annotated[bool | None, Field(strict=True)] = None,
        diverse: Annotated[bool | None, Field(strict=True)] = None,
        min_score: Annotated[float | None, Field(ge=0, le=1)] = None,
    ) -> CallToolResult:
        try:
            with lock:
                response = searcher.search(
                    query,
                    top_n=top_n,
                    files_glob=files_glob,
                    after=after_timestamp,
                    before=before_timestamp,
                    merges=merges,
                    sort=sort,
                    collapse=collapse,
                    diverse=diverse,
                    min_score=min_score,
                )
                read_only = searcher.store.read_only
        except Exception as exc:  # typed errors, storage failures, or a bug: see mcp.errors
            raise as_tool_error(exc, searcher.workspace.db_path, tool_message) from exc
        data = response.to_dict()
        notes = [(w.code, w.message) for w in workspace.config.warnings]  # refused settings
        if read_only:
            notes.append(("index_read_only", read_only_note(searcher.workspace.db_path)))
        for code, message in notes:
            data["warnings"].append(message)
            data["warning_details"].append({"code": code, "message": message})
        data = bound_history_response(data)
        data["filters"] = {
            "files_glob": files_glob,
            **{name: interpret_time(value).to_dict()
               for name, value in (("after", after_timestamp), ("before", before_timestamp))
               if value is not None},
        }
        # sent once: the JSON text block (structured content would repeat it)
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))]
        )

    server.add_tool(search_git_history, name=TOOL_NAME, description=_DESCRIPTION)
    tool = server._tool_manager.get_tool(TOOL_NAME)  # the SDK has no public schema override
    if tool is not None:
        tool.parameters = INPUT_SCHEMA
