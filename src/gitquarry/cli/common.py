"""Helpers shared by CLI commands: consoles, JSON output, the --project option."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from gitquarry.cli.console import (  # typer-free: cli.index_run prints with them
    COLOR_MODES,
    STYLE_HASH,  # noqa: F401  (re-exported)
    STYLE_MARK,  # noqa: F401  (re-exported)
    STYLE_TITLE,  # noqa: F401  (re-exported)
    apply_color,
    error,  # noqa: F401  (re-exported)
    hint,  # noqa: F401  (re-exported)
    note,  # noqa: F401  (re-exported)
    open_workspace,  # noqa: F401  (re-exported)
    out,  # noqa: F401  (re-exported)
    stderr,  # noqa: F401  (re-exported)
    stdout,
    warn,  # noqa: F401  (re-exported)
)
from gitquarry.cli.plain import (  # typer-free: cli.fast prints with them too
    BIDI_CONTROLS,  # noqa: F401  (re-exported)
    print_json,  # noqa: F401  (re-exported)
    printable,
)
from gitquarry.cli.plain import JSON_CONTROL as _JSON_CONTROL


def set_color(mode: str) -> None:
    """Apply ``--color=auto|always|never`` to both consoles (in place: modules hold them).

    :raises typer.BadParameter: ``mode`` is none of :data:`COLOR_MODES`."""
    if mode not in COLOR_MODES:
        raise typer.BadParameter(f"{mode!r} is not one of {', '.join(COLOR_MODES)}",
                                 param_hint="--color")
    apply_color(mode)


def styled(*pieces: str | tuple[str, str]) -> Text:
    """A line from escaped pieces: a ``str`` is shown as is (after :func:`printable`), a
    ``(text, style)`` pair in that style when colour is on."""
    text = Text()
    for piece in pieces:
        if isinstance(piece, tuple):
            text.append(printable(piece[0]), style=piece[1])
        else:
            text.append(printable(piece))
    return text


#: the pager when neither ``GITQUARRY_PAGER``, ``GIT_PAGER`` nor ``PAGER`` names one
DEFAULT_PAGER = "less"


def pager_command(environ: dict[str, str] | None = None) -> str | None:
    """The pager command line for long output, as git chooses one: ``GITQUARRY_PAGER``,
    then ``GIT_PAGER``, then ``PAGER``, then ``less``; ``None`` when the chosen value is
    empty or ``cat`` (no pager)."""
    env = os.environ if environ is None else environ
    for name in ("GITQUARRY_PAGER", "GIT_PAGER", "PAGER"):
        if name in env:
            value = env[name].strip()
            return None if value in ("", "cat") else value
    return DEFAULT_PAGER


@contextlib.contextmanager
def paged(enabled: bool) -> Iterator[None]:
    """Send what the block writes to :data:`stdout` through the pager when ``enabled`` and
    stdout is a terminal (``--no-pager`` turns it off; ``less`` gets ``LESS=FRX`` unless
    ``LESS`` is set, so output shorter than a screen is printed and kept, as git does). If
    the pager cannot be started the output is printed as is."""
    command = pager_command() if enabled and stdout.is_terminal else None
    if command is None:
        yield
        return
    with stdout.capture() as capture:
        yield
    text = capture.get()
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # the reader quit the pager early
        proc.stdin.write(text.encode("utf-8", "replace"))
        proc.stdin.close()
    with contextlib.suppress(KeyboardInterrupt):
        proc.wait()

def _plain_flags(params: list[Any]) -> list[Any]:
    """Flags take no value: show none (not ``<bool>``) in help."""
    for param in params:
        if getattr(param, "is_flag", False) and getattr(param, "metavar", None) is None:
            param.metavar = ""
    return params


def _plain_usage(pieces: list[str]) -> list[str]:
    """``QUERY`` for a required argument in the usage line (not ``{QUERY}``)."""
    return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


def reflow_help(text: str | None) -> str | None:
    """``text`` (a docstring) with the line breaks inside each paragraph turned into spaces,
    so the help and the command listings wrap at the terminal's width instead of where the
    source line ended. Paragraphs (blank-line separated) stay; a paragraph starting with
    ``\\b`` keeps its lines (click's "do not rewrap" mark), as do lines starting ``- ``."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    kept = []
    for paragraph in paragraphs:
        if paragraph.startswith("\b"):
            kept.append(paragraph)
            continue
        lines = paragraph.split("\n")
        joined = lines[0]
        for line in lines[1:]:
            joined += ("\n" if line.startswith(("- ", "* ")) else " ") + line
        kept.append(joined)
    return "\n\n".join(kept)


#: the narrowest help-text column (characters) worth keeping option names whole for
_HELP_TEXT_MIN_COLUMNS = 24


def _keep_option_names_whole() -> None:
    """Make typer's help tables keep option names whole where the terminal allows: rich's
    own layout narrows the widest columns first, so at ``COLUMNS=80`` it cut
    ``--source-registration-generation`` to ``--source-registration-generat…``. The table
    below lays every column but the last (the help text, which wraps) out unwrapped when
    that leaves the help text at least :data:`_HELP_TEXT_MIN_COLUMNS` characters, and keeps
    rich's layout otherwise (a very narrow terminal). Installed once, on the first help
    rendered; a rich without the layout hook keeps its own layout."""
    from rich.table import Table
    from typer import rich_utils

    if getattr(rich_utils.Table, "_gitquarry_whole_names", False):
        return
    if not hasattr(Table, "_calculate_column_widths"):
        return

    class _HelpTable(Table):
        _gitquarry_whole_names = True

        def _calculate_column_widths(self, console: Any, options: Any) -> list[int]:
            default = super()._calculate_column_widths(console, options)
            if len(self.columns) < 2:
                return default
            saved = [column.no_wrap for column in self.columns]
            for column in self.columns[:-1]:
                column.no_wrap = True
            try:
                whole = super()._calculate_column_widths(console, options)
            finally:
                for column, no_wrap in zip(self.columns, saved, strict=True):
                    column.no_wrap = no_wrap
            if whole[-1] >= min(_HELP_TEXT_MIN_COLUMNS, default[-1]):
                return whole
            return default

    rich_utils.Table = _HelpTable  # type: ignore[misc]


class Command(TyperCommand):
    """Every gitquarry command: help lists flags without a value type and the usage line
    shows arguments the usual way (``QUERY``, ``[PATH]``); its help text is reflowed
    (``reflow_help``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflow_help(self.help)

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_flags(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _plain_usage(super().collect_usage_pieces(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _keep_option_names_whole()
        super().format_help(ctx, formatter)


#: other names of commands (a seed's name beside ours): alias → the command it runs. Not
#: listed as commands of their own; the command's help names its alias.
COMMAND_ALIASES: dict[str, str] = {"rebuild-commit-index": "rebuild-index"}


class Group(TyperGroup):
    """A command group with the same help conventions as :class:`Command`; a name in
    ``COMMAND_ALIASES`` runs the command it names."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflow_help(self.help)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in COMMAND_ALIASES:
            return super().get_command(ctx, COMMAND_ALIASES[cmd_name])
        return found

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain_flags(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _plain_usage(super().collect_usage_pieces(ctx))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _keep_option_names_whole()
        super().format_help(ctx, formatter)


ProjectOption = Annotated[
    Path | None,
    typer.Option(
        "--project",
        "-p",
        help="Workspace directory, or any directory inside it: its nearest indexed ancestor "
        "is used, as git finds a repository (default: the current directory).",
        metavar="DIR",
        file_okay=False,
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
NoPagerOption = Annotated[bool, typer.Option(
    "--no-pager", help="Print straight to the terminal (long output goes through "
    "$GITQUARRY_PAGER, $GIT_PAGER, $PAGER or less otherwise).")]


#: options with more than one long spelling: the library's name → every spelling, the
#: first the one named when the command line shows none of them
CLI_ARGUMENT_SPELLINGS = {
    "after": ("--after", "--since"),
    "before": ("--before", "--until"),
}

#: the arguments of the command line ``cli.app.main`` runs (None: ``sys.argv[1:]``)
_command_line: list[str] | None = None


def set_command_line(args: list[str] | None) -> None:
    """Record the arguments ``cli.app.main`` runs (None: ``sys.argv[1:]``), so output can
    name an option as the user typed it (:func:`typed_spelling`)."""
    global _command_line
    _command_line = None if args is None else list(args)


def typed_spelling(argument: str, args: list[str] | None = None) -> str:
    """How the command line ``args`` (None: the one :func:`set_command_line` recorded, else
    ``sys.argv[1:]``) spells ``argument`` (a key of :data:`CLI_ARGUMENT_SPELLINGS`): the
    spelling typed last before any ``--`` (the one Click kept; ``--since=x`` counts), else
    the first spelling."""
    if args is None:
        args = _command_line if _command_line is not None else sys.argv[1:]
    spellings = CLI_ARGUMENT_SPELLINGS[argument]
    used = spellings[0]
    for arg in args:
        if arg == "--":
            break
        name = arg.partition("=")[0]
        if name in spellings:
            used = name
    return used


def print_json_error(code: str, message: str, exit_code: int) -> None:
    """An error under ``--json``: ``{"error": {"code", "message", "exit_code"}}`` on stdout
    (compact, one line), so a program parsing stdout sees the failure as well as the
    ``Error: …`` line on stderr."""
    text = json.dumps({"error": {"code": code, "message": message, "exit_code": exit_code}},
                      ensure_ascii=False, separators=(",", ":")).translate(_JSON_CONTROL)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def count(n: int, one: str, many: str | None = None) -> str:
    """``1 node``, ``2 nodes``, ``2,000 commits`` (``many`` defaults to ``one + "s"``)."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


