"""Helpers shared by CLI commands: consoles, JSON output, the --project option."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from gitquarry.workspace import Workspace, resolve_workspace

#: human-readable output and results
stdout = Console(highlight=False, soft_wrap=True, markup=False)
#: progress bars, warnings and errors
stderr = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)

ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        "-p",
        help="Workspace directory (default: nearest indexed ancestor of the current directory).",
        file_okay=False,
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def open_workspace(
    project: Path | None, *, for_search: bool = False, label: str = "--project"
) -> Workspace:
    """``resolve_workspace`` for a command, printing the configuration's warnings (refused
    repository-owned settings) on stderr once. See ``gitquarry.workspace.resolve_workspace``
    for the arguments and errors."""
    workspace = resolve_workspace(project, for_search=for_search, label=label)
    for warning in workspace.config.warnings:
        warn(warning.message)
    return workspace


def print_json(data: Any) -> None:
    """Write ``data`` as pretty JSON to stdout (UTF-8, no ASCII escaping)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    """``Warning: …`` on stderr; the message is never read as Rich markup."""
    stderr.print(Text.assemble(("Warning: ", "yellow"), printable(message)))


def error(message: str) -> None:
    """``Error: …`` on stderr for a failure that does not end the command."""
    stderr.print(Text.assemble(("Error: ", "red"), printable(message)))


_CONTROL = {i: f"\\x{i:02x}" for i in (*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F)}
_CONTROL.update({0x0A: "\\n", 0x0D: "\\r"})
_CONTROL.update({i: f"\\x{i:02x}" for i in range(0x80, 0xA0)})  # C1 controls (e.g. CSI)


def printable(text: str) -> str:
    """``text`` with control characters (C0 except tab, DEL, C1) shown as ``\\xNN`` / ``\\n``
    escapes, for human output: commit text and file names may hold terminal escape
    sequences or newlines that must not reach the terminal raw. JSON output is unaffected."""
    return text.translate(_CONTROL)
