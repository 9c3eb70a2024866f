"""Helpers shared by CLI commands: consoles, JSON output, the --project option."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

#: human-readable output and results
stdout = Console(highlight=False, soft_wrap=True)
#: progress bars, warnings and errors
stderr = Console(stderr=True, highlight=False, soft_wrap=True)

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


def print_json(data: Any) -> None:
    """Write ``data`` as pretty JSON to stdout (UTF-8, no ASCII escaping)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    stderr.print(f"[yellow]Warning:[/yellow] {message}", markup=True, highlight=False)
