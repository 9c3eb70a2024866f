"""Every MCP tool's title and behaviour hints (``ToolAnnotations``), in one table, and the
one JSON style of every tool's text content.

Hints, per the MCP specification: ``readOnlyHint`` (the tool changes nothing),
``destructiveHint`` (a change it makes may undo or discard something), ``idempotentHint``
(calling it again with the same arguments changes nothing more), ``openWorldHint`` (it
reaches beyond this machine's workspace, index and daemon). The searches and status tools
are read-only; ``repository_docs_index`` submits a job (coalesced with an equivalent one:
idempotent) and ``service_job_cancel`` cancels one (destructive: the job's work so far is
discarded; cancelling twice changes nothing more). None reaches an open world: the
embedding provider, when it is an HTTP endpoint, is the user's own configured choice.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import ToolAnnotations


def _hints(title: str, *, read_only: bool = True, destructive: bool = False,
           idempotent: bool = True) -> ToolAnnotations:
    return ToolAnnotations(title=title, read_only_hint=read_only,
                           destructive_hint=destructive, idempotent_hint=idempotent,
                           open_world_hint=False)


#: ``tool name -> annotations``; registering a tool missing here is an error
#: (``CheckedMCPServer.add_tool``), so a new tool cannot ship without its hints
TOOL_ANNOTATIONS: dict[str, ToolAnnotations] = {
    "search_git_history": _hints("Search Git history"),
    "get_commit": _hints("Show one commit"),
    "blame_search": _hints("Blame lines, with commit messages"),
    "search": _hints("Search the architecture graph"),
    "repository_docs_sources": _hints("List repository-docs sources"),
    "repository_docs_policy": _hints("Show a repository's docs policy"),
    "repository_docs_plan": _hints("Preview a repository-docs index run"),
    "repository_docs_status": _hints("Repository-docs index status"),
    "repository_docs_search": _hints("Search repository docs at a revision"),
    "repository_docs_index": _hints("Index repository docs (daemon job)", read_only=False),
    "service_jobs_list": _hints("List daemon jobs"),
    "service_job_status": _hints("Show a daemon job"),
    "service_job_attach": _hints("Follow a daemon job"),
    "service_job_cancel": _hints("Cancel a daemon job", read_only=False, destructive=True),
}


def json_text(data: Any) -> str:
    """``data`` as every tool's text content is written: compact JSON (no indentation, no
    spaces after separators), UTF-8 characters as they are."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
