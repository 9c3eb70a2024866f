"""``gitquarry mcp``: run the MCP server over stdio.

Its ``--help`` lists the tools the server registers (``mcp.server.tool_catalogue``), computed
only when the help is shown.
"""

from __future__ import annotations

import logging
import re
import shutil
from typing import Any

import typer

from gitquarry.cli.common import Command, ProjectOption
from gitquarry.errors import GitquarryError


def _summary(description: str, room: int) -> str:
    """The first sentence (or clause before ``:``) of ``description``, cut at a word to at
    most ``room`` characters."""
    flat = " ".join(description.split())
    first = re.split(r"(?<=[.;])\s+(?=[A-Z])|:\s", flat, maxsplit=1)[0].rstrip(".;")
    if first.count("(") > first.count(")"):  # cut inside a parenthesis: drop its start
        first = first[: first.rindex("(")].rstrip()
    if len(first) <= room:
        return first
    cut = first[: room - 1].rsplit(" ", 1)[0].rstrip(",;(")
    return cut + "…"


def tools_help() -> str:
    """The help paragraph listing the registered tools (``\\b``: kept line by line)."""
    from gitquarry.mcp.server import tool_catalogue

    try:
        tools = tool_catalogue()
    except GitquarryError as exc:
        return f"(The tool list is unavailable: {exc})"
    width = max(len(name) for name, _ in tools)
    # the help's text column is the terminal's width less rich's margins
    room = max(24, shutil.get_terminal_size((80, 24)).columns - width - 6)
    lines = [f"  {name.ljust(width)}  {_summary(text, room)}" for name, text in tools]
    return "\b\n" + f"Tools ({len(tools)}):\n" + "\n".join(lines)


class McpCommand(Command):
    """``gitquarry mcp``: its help ends with the registered tools."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        base = self.help or ""
        self.help = base + "\n\n" + tools_help()
        try:
            super().format_help(ctx, formatter)
        finally:
            self.help = base


def register(app: typer.Typer) -> None:
    """Add the ``mcp`` command to ``app``."""

    @app.command("mcp", cls=McpCommand)
    def mcp_cmd(project: ProjectOption = None) -> None:
        """Serve gitquarry's tools (commit history, architecture graph, repository docs,
        daemon jobs) to an MCP client over stdio.

        One process serves the workspace at --project; add it to a client's mcpServers.
        """
        from gitquarry.mcp.server import serve_stdio

        logging.getLogger().setLevel(logging.WARNING)  # the server's stderr is a log
        serve_stdio(project)
