"""How the MCP tools report failures: one translation for every tool.

A ``GitquarryError`` becomes a tool error ``"<code>: <message>"``; a storage failure (a
corrupt, full, unreadable or read-only index) becomes its typed error the same way
(``store.connection.translate_storage_error``); anything else is a bug, reported as
``internal_error`` with its traceback on the server's stderr (the client's log).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from mcp.server.mcpserver.exceptions import ToolError

from gitquarry.errors import GitquarryError
from gitquarry.store.connection import translate_storage_error

log = logging.getLogger("gitquarry.mcp")


def as_tool_error(
    exc: BaseException,
    index_path: Path | None = None,
    message: Callable[[GitquarryError], str] = str,
) -> ToolError:
    """The ``ToolError`` to raise for ``exc`` (see the module docstring). ``message`` renders
    a gitquarry error for this tool (argument names as the tool spells them)."""
    typed = translate_storage_error(exc, index_path)
    if typed is not None:
        return ToolError(f"{typed.code}: {message(typed)}")
    log.error("internal error in an MCP tool", exc_info=exc)
    return ToolError(
        f"internal_error: {type(exc).__name__}: {exc} (a gitquarry bug; the server log has "
        "the traceback)"
    )
