"""The CLI's two Rich consoles and its line printers, without Typer or Click.

``cli.common`` re-exports all of it (the same objects: ``set_color`` re-initialises these
consoles in place), so every command prints through one pair of consoles; ``cli.index_run``
and ``cli.fast_index`` import it directly, so ``gitquarry index`` can run without importing
Typer (``cli.fast_index``).
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.text import Text

from gitquarry.cli.plain import printable
from gitquarry.workspace import Workspace, resolve_workspace


def _on_broken_pipe(self: Console) -> None:
    """Rich's ``on_broken_pipe`` for every console of the process (ours and Typer's help
    console, which Typer creates itself): a closed stdout pipe ends the process as git does
    (``cli.pipes``); Rich's own exits 1 after pointing stdout at ``/dev/null``."""
    from gitquarry.cli.pipes import end_for_closed_stdout, stdout_reader_gone

    self.quiet = True
    if stdout_reader_gone():
        end_for_closed_stdout()
    raise SystemExit(1)  # stderr's reader gone: Rich's exit


Console.on_broken_pipe = _on_broken_pipe  # type: ignore[method-assign]


#: human-readable output and results
stdout = Console(highlight=False, soft_wrap=True, markup=False)
#: progress bars, warnings and errors
stderr = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)

#: ``--color`` values: ``auto`` colours a terminal unless ``NO_COLOR`` is set or
#: ``TERM=dumb`` (Rich's own detection); ``always`` colours pipes too; ``never`` never does
COLOR_MODES = ("auto", "always", "never")

#: styles of the human output (plain text when colour is off)
STYLE_HASH = "yellow"
STYLE_TITLE = "bold"
STYLE_MARK = "bold red"


def apply_color(mode: str) -> None:
    """``--color=auto|always|never`` (one of :data:`COLOR_MODES`, not checked here: see
    ``cli.common.set_color``) applied to both consoles, in place: modules hold them."""
    if mode == "auto" and os.environ.get("NO_COLOR", ""):
        mode = "never"  # no-color.org: no colour, and here no bold or dim either
    for console, on_stderr in ((stdout, False), (stderr, True)):
        force = True if mode == "always" else None
        no_color = True if mode == "never" else None
        # re-run the constructor on the same object: every module imported it by name
        console.__init__(  # type: ignore[misc]
            stderr=on_stderr, highlight=False, soft_wrap=True, markup=False,
            force_terminal=force, no_color=no_color,
            color_system=None if mode == "never" else "auto",
        )


def hint(line: str) -> None:
    """A next-step hint on stderr (``hint: …``, dim), after a command that leaves the user
    with something to do; never on stdout, so ``--json`` output stays one document."""
    stderr.print(Text.assemble(("hint: ", "dim"), printable(line)))


def out(line: str | Text = "") -> None:
    """One line on stdout. A ``str`` is escaped with :func:`printable` (the one escaping
    step for terminal output); a ``Text`` must be built from escaped pieces."""
    stdout.print(line if isinstance(line, Text) else printable(line), markup=False,
                 highlight=False)


def note(line: str | Text) -> None:
    """One line of progress or summary on stderr, escaped like :func:`out`."""
    stderr.print(line if isinstance(line, Text) else printable(line), markup=False,
                 highlight=False)


def warn(message: str) -> None:
    """``Warning: …`` on stderr; the message is never read as Rich markup."""
    stderr.print(Text.assemble(("Warning: ", "yellow"), printable(message)))


def error(message: str) -> None:
    """``Error: …`` on stderr for a failure that does not end the command."""
    stderr.print(Text.assemble(("Error: ", "red"), printable(message)))


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
