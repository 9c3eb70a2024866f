"""The ``gitquarry`` command: the Typer app, its subcommand modules and the error edge.

Exit codes: 0 success, 1 runtime error (``Error: …`` on stderr), 2 usage error, 130 interrupted.
Set ``GITQUARRY_DEBUG=1`` to see a traceback for an unexpected internal error.
"""

from __future__ import annotations

import os
import sys
import traceback

import click
import typer
from typer.main import get_command

from gitquarry.errors import GitquarryError

app = typer.Typer(
    name="gitquarry",
    help="Local-first search over Git history, repository docs and architecture graphs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register_commands() -> None:
    from gitquarry.cli import graph, history, mcp

    history.register(app)
    graph.register(app)
    mcp.register(app)


_register_commands()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Translates errors to messages and exit codes."""
    command = get_command(app)
    try:
        result = command.main(args=argv, prog_name="gitquarry", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except GitquarryError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug: say so plainly, traceback only on request
        if os.environ.get("GITQUARRY_DEBUG"):
            traceback.print_exc()
        click.echo(
            f"Error: internal error ({type(exc).__name__}: {exc}). "
            "Re-run with GITQUARRY_DEBUG=1 for a traceback and report it.",
            err=True,
        )
        sys.exit(1)
    sys.exit(result if isinstance(result, int) else 0)
