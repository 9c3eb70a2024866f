"""The MCP tool ``search_git_history`` (the seed's contract), on the shared gitquarry server.

Input schema: the seed's (``query`` required; ``top_n`` 1..100 default 5; ``files_glob``;
``after_timestamp``; ``before_timestamp``) plus optional fields beyond it: the filter
``merges`` (include/exclude/only) and the order ``sort`` (relevance/newest/oldest), issue 8
§4, and the result-pipeline switches ``collapse``, ``diverse`` and ``min_score``. Output: one
text block holding the JSON response, sent once (no structured-content copy) — ``results``
(hash, title, author, committer (after .mailmap), ``author_raw``/``committer_raw`` (as
committed; full detail only), timestamp, message, files_changed, delta_truncated, score,
repo_path, ``copies`` and ``copies_omitted`` (issue 14), and ``cut`` when a field was
shortened), ``query``, ``total_commits_indexed``, ``effective_mode``, ``results_omitted``,
``warnings`` — bounded by ``gitquarry.bounded.HISTORY_LIMITS`` (every field capped, at most
1,000,000 bytes in all). Invalid arguments and gitquarry errors come back as tool errors
(``is_error``) with the error's message; the server never crashes on them.
"""

# No ``from __future__ import annotations``: the SDK evaluates the tool's annotations.
import threading
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from gitquarry.embedding.process_kind import settle_heap
from gitquarry.errors import GitquarryError, InvalidArgumentError
from gitquarry.history.answers.answers import MCP_DEFAULT_MAX_TOKENS, HistoryAnswers
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.mcp.annotations import json_text
from gitquarry.mcp.arguments import own_arguments
from gitquarry.mcp.errors import as_tool_error
from gitquarry.query.history import HistoryRequest, history_request
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

#: What issue 12 added to the seed's schema (the seed's properties are unchanged).
AGENT_PROPERTIES: dict[str, Any] = {
    "max_tokens": {
        "type": "integer", "default": 8000, "minimum": 500, "maximum": 1000000,
        "description": "Token budget for the whole response (estimated conservatively). "
        "Diffs are cut to their best-matching hunks first, then the lowest-ranked results "
        "are dropped; 'truncated' says what, 'next_cursor' continues.",
    },
    "detail": {
        "type": "string", "enum": ["full", "compact", "ids"], "default": "full",
        "description": "full: every field; compact: hash, date, author, title, files, score, "
        "refs and a ±3-line diff excerpt around the best match (about 5x fewer tokens); "
        "ids: hash and score. Open a commit in full with get_commit.",
    },
    "cursor": {
        "type": "string",
        "description": "next_cursor from a previous response: the next results of the same "
        "ranking (pass the same query and filters).",
    },
    "author": {"type": "string", "description": "Author name or email substring "
               "(case-insensitive, .mailmap-aware)."},
    "committer": {"type": "string", "description": "Committer name or email substring."},
    "path": {"type": "string", "description": "Only commits changing a path under this "
             "prefix (a directory such as 'src/auth' or one file)."},
    "pickaxe": {"type": "string", "description": "Only commits whose diff adds or removes "
                "this exact string (git log -S)."},
    "after": {"type": "string", "description": "Committed at or after: ISO date/time or a "
              "relative date as git reads it ('2.weeks.ago', 'yesterday', '3 months ago')."},
    "before": {"type": "string", "description": "Committed at or before: ISO date/time or a "
               "relative date."},
}

_DESCRIPTION = (
    "Search the Git commit history of every repository in the workspace, by meaning and by "
    "keyword (hybrid BM25 + embedding search fused with RRF). Filter by changed-file glob "
    "(gitignore-style, e.g. 'src/**/*.py'), path prefix, author/committer, committer time "
    "(Unix seconds, ISO dates or '2.weeks.ago') and pickaxe (diff adds/removes a string). "
    "Returns commits with hash, title, message, author, committer (as .mailmap maps them; "
    "author_raw/committer_raw as committed), timestamp, files_changed, "
    "a truncated diff, a score in [0, 1], the repository path and the refs (branches, tags) "
    "that contain each commit, plus index_state (how fresh the index is). The response fits "
    "max_tokens (default 8000); use detail='compact' to scan many commits cheaply, "
    "next_cursor to page, and get_commit to open one commit in full."
)


#: How this tool names the library's arguments (``InvalidArgumentError.argument``) when the
#: seed's integer bounds were given; the string bounds ``after``/``before`` keep their names.
TOOL_ARGUMENT_NAMES = {
    "after": "after_timestamp",
    "before": "before_timestamp",
    "after/before": "after_timestamp/before_timestamp",
}


def tool_message(exc: GitquarryError, arguments: dict[str, Any] | None = None) -> str:
    """``exc``'s message with arguments under this tool's parameter names: a bound under the
    name of the argument the call gave it by (``after`` or ``after_timestamp``; ``arguments``
    is the call's, None: the seed's integer names). An ``InvalidTimeError`` already names
    the argument as the call spelled it."""
    if isinstance(exc, InvalidArgumentError) and exc.argument in TOOL_ARGUMENT_NAMES:
        given = arguments or {}

        def name(bound: str) -> str:
            return bound if given.get(bound) is not None else f"{bound}_timestamp"

        shown = ("/".join(name(b) for b in ("after", "before"))
                 if exc.argument == "after/before" else name(exc.argument))
        return f"{shown}: {exc.detail}"
    return str(exc)


def register(server: MCPServer, workspace: Workspace, searcher: HistorySearcher
             ) -> HistoryAnswers:
    """Add ``search_git_history`` to ``server``, answering from ``searcher`` (one per process,
    so the embedding model loads once). Calls are serialised on one lock. Returns the
    ``HistoryAnswers`` the commit tools share (cursors, freshness and refs caches)."""
    lock = threading.Lock()
    answers = HistoryAnswers(searcher)
    answers.lock = lock  # type: ignore[attr-defined]

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
        max_tokens: Annotated[int, Field(strict=True, ge=500, le=1_000_000)] =
            MCP_DEFAULT_MAX_TOKENS,
        detail: Annotated[Literal["full", "compact", "ids"], Field()] = "full",
        cursor: Annotated[str | None, Field(strict=True)] = None,
        author: Annotated[str | None, Field(strict=True)] = None,
        committer: Annotated[str | None, Field(strict=True)] = None,
        path: Annotated[str | None, Field(strict=True)] = None,
        pickaxe: Annotated[str | None, Field(strict=True)] = None,
        after: Annotated[str | None, Field(strict=True)] = None,
        before: Annotated[str | None, Field(strict=True)] = None,
    ) -> CallToolResult:
        arguments = own_arguments(search_git_history, locals())  # first, before any other name
        try:
            request = tool_request(arguments)
            with lock:
                # refused settings; answers.answer adds the read-only note itself
                notes = [(w.code, w.message) for w in workspace.config.warnings]
                data = answers.answer(request, extra_warnings=notes)
                settle_heap()  # after the warm-up: the kept objects leave the cyclic GC
        except Exception as exc:  # typed errors, storage failures, or a bug: see mcp.errors
            raise as_tool_error(exc, searcher.workspace.db_path,
                                lambda err: tool_message(err, arguments)) from exc
        data["filters"] = request.filters()
        # sent once: the JSON text block (structured content would repeat it)
        return CallToolResult(
            content=[TextContent(type="text", text=json_text(data))]
        )

    server.add_tool(search_git_history, name=TOOL_NAME, description=_DESCRIPTION)
    tool = server._tool_manager.get_tool(TOOL_NAME)  # the SDK has no public schema override
    if tool is not None:
        tool.parameters = {**INPUT_SCHEMA,
                           "properties": {**INPUT_SCHEMA["properties"], **AGENT_PROPERTIES}}
    return answers


def tool_request(arguments: dict[str, Any]) -> HistoryRequest:
    """The ``HistoryRequest`` of one ``search_git_history`` call's arguments (as the tool
    function receives them, defaults filled): the seed's ``after_timestamp`` /
    ``before_timestamp`` or the string ``after``/``before``, not both for one bound.

    :raises InvalidArgumentError, InvalidGlobError, InvalidTimeError: see
        ``gitquarry.query.history.history_request``.
    """
    return history_request(**arguments)
