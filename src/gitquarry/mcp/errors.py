"""How the MCP tools report failures: one translation for every tool.

A ``GitquarryError`` becomes a tool error ``"<code>: <message>"`` (:func:`tool_error`, the
one mapping of an error's kind for MCP: a tool error carries no status, so every kind
reads the same); a storage failure (a corrupt, full,
unreadable or read-only index) becomes its typed error the same way
(``store.connection.translate_storage_error``); anything else is a bug, an
:class:`~gitquarry.errors.InternalError` reported as ``internal_error`` with its traceback
on the server's stderr (the client's log).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from gitquarry.errors import GitquarryError, InternalError
from gitquarry.store.connection import translate_storage_error

log = logging.getLogger("gitquarry.mcp")


def tool_error(
    err: GitquarryError, message: Callable[[GitquarryError], str] = str, *, prefix: str = ""
) -> ToolError:
    """The ``ToolError`` of a typed error, whatever its kind: ``"<prefix><code>: <message>"``.
    ``message`` renders it for the tool (argument names as the tool spells them)."""
    return ToolError(f"{prefix}{err.code}: {message(err)}")


def as_tool_error(
    exc: BaseException,
    index_path: Path | None = None,
    message: Callable[[GitquarryError], str] = str,
) -> ToolError:
    """The ``ToolError`` to raise for ``exc`` (see the module docstring). ``message`` renders
    a gitquarry error for this tool (argument names as the tool spells them)."""
    typed = translate_storage_error(exc, index_path)
    if typed is None:
        log.error("internal error in an MCP tool", exc_info=exc)
        typed = InternalError(exc, f"{type(exc).__name__}: {exc} (a gitquarry bug; the "
                              "server log has the traceback)")
    return tool_error(typed, message)


#: CLI flags of the repository-docs commands → the MCP parameters of the docs tools
_DOCS_FLAGS = {
    "--source-registration-generation": "source_registration_generation",
    "--source-registration-id": "source_registration_id",
    "--registration-id": "registration_id",
    "--include-worktree": "include_worktree",
    "--revision": "revision",
    "--repo": "repo_id",
    "--limit": "limit",
    "--mode": "mode",
}
_DOCS_FLAG_RE = re.compile("|".join(re.escape(f) for f in _DOCS_FLAGS) + r"(?![\w-])")
#: CLI commands a docs error suggests → the MCP tool that does the same
_DOCS_COMMANDS = {
    "gitquarry repo-docs sources": "repository_docs_sources",
    "gitquarry repo-docs index": "repository_docs_index",
    "gitquarry repo-docs search": "repository_docs_search",
    "gitquarry repo-docs status": "repository_docs_status",
}


def docs_tool_message(exc: GitquarryError) -> str:
    """A repository-docs error as the MCP docs tools say it: CLI flags named as the tools'
    parameters (``--revision`` → ``revision``, ``--repo`` → ``repo_id``) and suggested
    commands as the tool that does the same (``gitquarry repo-docs sources`` →
    ``repository_docs_sources``). A command with no tool (``repo-docs register``/``rebind``,
    run from a terminal) is left as it is, flags included."""
    parts = str(exc).split("`")
    for n, part in enumerate(parts):
        if n % 2:  # inside backticks: a command
            tool = next((t for c, t in _DOCS_COMMANDS.items() if part.startswith(c)), None)
            parts[n] = tool if tool is not None else part
        else:
            parts[n] = _DOCS_FLAG_RE.sub(lambda m: _DOCS_FLAGS[m.group(0)], part)
    return "`".join(parts)
