"""``gitquarry mcp``: run the MCP server over stdio."""

from __future__ import annotations

import logging

import typer

from gitquarry.cli.common import Command, ProjectOption


def register(app: typer.Typer) -> None:
    """Add the ``mcp`` command to ``app``."""

    @app.command("mcp", cls=Command)
    def mcp_cmd(project: ProjectOption = None) -> None:
        """Serve search_git_history and search to an MCP client over stdio."""
        from gitquarry.mcp.server import serve_stdio

        logging.getLogger().setLevel(logging.WARNING)  # the server's stderr is a log
        serve_stdio(project)
