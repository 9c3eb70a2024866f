"""The ``gitquarry`` command: the Typer app, its subcommand modules and the error edge.

Exit codes (:data:`EXIT_CODES`, also the ``--help`` epilog and README.md): 0 success (a
search with no results too), 1 runtime error (``Error: …`` on stderr), 2 usage error, 3 not
found, 130 interrupted. Under ``--json`` an error is also a JSON object on stdout.
Set ``GITQUARRY_DEBUG=1`` to see a traceback for an unexpected internal error.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import NoReturn

import typer
from typer.main import get_command

try:  # recent typer vendors click as typer._click; older typer uses click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import ClickException  # type: ignore[no-redef,assignment]

from gitquarry.cli.common import (
    CLI_ARGUMENT_SPELLINGS,
    COLOR_MODES,
    Command,
    Group,
    print_json_error,
    printable,
    set_color,
    set_command_line,
    typed_spelling,
)
from gitquarry.cli.plain import configure_logging as _configure_logging
from gitquarry.errors import (
    NOT_FOUND_EXIT,
    USAGE_EXIT,
    GitquarryError,
    InternalError,
    InvalidArgumentError,
    InvalidTimeError,
    RepoDocsRegistrationError,
)
from gitquarry.store.connection import translate_storage_error

#: every exit status of the command, with its meaning (the one table: ``--help`` shows it,
#: README.md repeats it, tests/test_cli_contract.py checks both)
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "success, also a search that finds nothing (as git log and gh)"),
    (1, "runtime error (no index yet, git failed, storage, daemon)"),
    (USAGE_EXIT, "usage error (a bad option or value; a malformed or ambiguous hash)"),
    (NOT_FOUND_EXIT, "not found (a commit, path, revision or job id that does not exist)"),
    (130, "interrupted (Ctrl-C)"),
)


def _epilog() -> str:
    rows = "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES)
    return ("\b\nExit codes:\n" + rows + "\n\nWith --json an error is also "
            '{"error": {"code", "message", "exit_code"}} on stdout.')


app = typer.Typer(
    name="gitquarry",
    cls=Group,
    help="Local-first search over Git history, repository docs and architecture graphs.",
    epilog=_epilog(),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class _EscapingStderr:
    """A text stream writing to stderr with control characters escaped (usage errors echo
    the user's arguments, which may hold file names)."""

    def write(self, text: str) -> int:
        # keep the newlines click itself writes; escape everything else
        sys.stderr.write("\n".join(printable(line) for line in text.split("\n")))
        return len(text)

    def flush(self) -> None:
        sys.stderr.flush()


def _version(value: bool) -> None:
    if value:
        from gitquarry import __version__

        sys.stdout.write(f"gitquarry {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version,
        is_eager=True,
    ),
    color: str = typer.Option(
        "auto", "--color", metavar="WHEN",
        help=f"Colour titles, hashes and match marks: {' | '.join(COLOR_MODES)} (auto: on a "
        "terminal, unless NO_COLOR is set or TERM=dumb).",
    ),
) -> None:
    """Local-first search over Git history, repository docs and architecture graphs."""
    set_color(color)


def _register_commands() -> None:
    from gitquarry.cli import (
        answers,
        completion,
        config,
        daemon,
        graph,
        history,
        jobs,
        mcp,
        repo_docs,
        web,
    )

    history.register(app)
    completion.register(app)
    config.register(app)
    answers.register(app)
    graph.register(app)
    repo_docs.register(app)
    mcp.register(app)
    daemon.register(app)
    jobs.register(app)
    web.register(app)
    _use_gitquarry_help(app)


def _use_gitquarry_help(typer_app: typer.Typer) -> None:
    """Every command and group, whoever registered it, gets the help conventions of
    ``cli.common.Command``/``Group`` (flags without ``<bool>``, ``QUERY`` not ``{QUERY}``);
    a class of its own that is not typer's default is left alone."""
    from typer.core import TyperCommand, TyperGroup

    def plain(cls: object, default: type) -> bool:
        return cls is None or cls is default or type(cls).__name__ == "DefaultPlaceholder"

    for command in typer_app.registered_commands:
        if plain(command.cls, TyperCommand):
            command.cls = Command
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            if plain(group.typer_instance.info.cls, TyperGroup):
                group.typer_instance.info.cls = Group
            _use_gitquarry_help(group.typer_instance)


_register_commands()


def _echo_err(message: str) -> None:
    """``message`` on stderr; repository and file-system text in it shown escaped."""
    sys.stderr.write(printable(message) + "\n")
    sys.stderr.flush()


#: How the command line names the library's arguments (``InvalidArgumentError.argument``).
CLI_ARGUMENT_NAMES = {
    "top_n": "--top-n",
    "mode": "--mode",
    "files_glob": "--files-glob",
    "after": "--after",
    "before": "--before",
    "after/before": "--after/--before",
    "limit": "--limit",
    "kind": "--kind",
    "query": "QUERY",
    "detail": "--detail",
    "max_tokens": "--max-tokens",
    "cursor": "--cursor",
    "author": "--author",
    "committer": "--committer",
    "pickaxe": "--pickaxe",
    "path": "--path",
    "diff_offset": "--offset",
    "min_score": "--min-score",
    "sort": "--sort",
    "merges": "--merges/--no-merges",
    "line": "LINE",  # blame's, named by COMMAND_ARGUMENT_NAMES
    "job_id": "JOB_ID",
    "status": "--status",
}


#: where one command names a library argument its own way: command → {argument: name}
COMMAND_ARGUMENT_NAMES = {
    # blame's PATH[:LINE[-LINE]] argument (not history's --path) also names the line
    "blame": {"path": "PATH", "line": "PATH"},
}


def _command_word(args: list[str]) -> str:
    """The command of a command line: its first word that is no root option nor the value
    of one (``--color WHEN``)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--color":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return ""


def _spelled(argument: str, argv: list[str] | None) -> str:
    """How the command line names ``argument``: the spelling of it the user typed last (the
    one Click kept), else the command's own name for it (:data:`COMMAND_ARGUMENT_NAMES`),
    else :data:`CLI_ARGUMENT_NAMES`'."""
    args = sys.argv[1:] if argv is None else argv
    if argument == "after/before":
        return f"{_spelled('after', argv)}/{_spelled('before', argv)}"
    if argument not in CLI_ARGUMENT_SPELLINGS:
        command = _command_word(args)
        return COMMAND_ARGUMENT_NAMES.get(command, {}).get(
            argument, CLI_ARGUMENT_NAMES[argument])
    return typed_spelling(argument, args)


def cli_message(exc: GitquarryError, argv: list[str] | None = None) -> str:
    """The message of ``exc`` as the command line says it: arguments under their option
    names (``--top-n: must be from 1 to 100``, ``--since: invalid time 'x': ...`` as
    spelled in ``argv``, None: ``sys.argv[1:]``), never the library's field names."""
    if isinstance(exc, InvalidArgumentError | InvalidTimeError) and (
            exc.argument is not None and exc.argument in CLI_ARGUMENT_NAMES):
        return f"{_spelled(exc.argument, argv)}: {exc.detail}"
    if isinstance(exc, RepoDocsRegistrationError) and exc.reason == "invalid_path":
        # the one path repo-docs register/rebind take: say which option held it
        return f"--repository-path: {exc}"
    return str(exc)


def _wants_json(argv: list[str] | None) -> bool:
    """Whether the command line asks for ``--json`` (before a ``--``)."""
    args = sys.argv[1:] if argv is None else argv
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def _fail(argv: list[str] | None, code: str, message: str, exit_code: int) -> None:
    """``Error: message`` on stderr (and under ``--json`` the JSON error on stdout); exit."""
    _echo_err(f"Error: {message}")
    if _wants_json(argv):
        print_json_error(code, message, exit_code)
    sys.exit(exit_code)


def _fail_with(argv: list[str] | None, exc: GitquarryError) -> None:
    """The CLI's one translation of a typed error: its code, message and ``exit_code`` (the
    exit status of its kind, :data:`gitquarry.errors.EXIT_CODE_OF_KIND`)."""
    _fail(argv, exc.code, cli_message(exc, argv), exc.exit_code)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Translates errors to messages and exit codes
    (:data:`EXIT_CODES`)."""
    _configure_logging()
    set_command_line(argv)  # output names options as typed (--since, not --after)
    command = get_command(app)
    if "_GITQUARRY_COMPLETE" in os.environ:  # the shell asks for completions
        from typer._completion_classes import completion_init

        completion_init()
    try:
        result = command.main(args=argv, prog_name="gitquarry", standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except ClickException as exc:  # usage errors: exit 2
        exc.show(file=_EscapingStderr())  # type: ignore[arg-type]
        if _wants_json(argv):
            print_json_error("usage_error", printable(exc.format_message()), exc.exit_code)
        sys.exit(exc.exit_code)
    except typer.Abort:
        _echo_err("Aborted.")
        sys.exit(130)
    except (KeyboardInterrupt, Exception) as exc:
        fail_for(argv, exc)
    sys.exit(result if isinstance(result, int) else 0)


def fail_for(argv: list[str] | None, exc: KeyboardInterrupt | Exception) -> NoReturn:
    """What ``main`` does with an exception a command raised (other than Click's and
    Typer's own): Ctrl-C, a typed error, a storage fault or a bug, each with its message and
    exit code. Also used by ``cli.fast_index``, so its errors are exactly this path's.
    Must be called while ``exc`` is being handled (a bug's traceback is printed from it)."""
    if isinstance(exc, KeyboardInterrupt):
        _echo_err("Interrupted.")
        sys.exit(130)
    if isinstance(exc, GitquarryError):
        _fail_with(argv, exc)
    from gitquarry.cli.pipes import end_if_stdout_closed

    end_if_stdout_closed(exc)  # `gitquarry show X | head`: ends as git does (cli.pipes)
    typed = translate_storage_error(exc)  # corruption, disk full, permissions, I/O
    if typed is None:  # a bug: say so plainly, traceback only on request
        if os.environ.get("GITQUARRY_DEBUG"):
            traceback.print_exc()
        typed = InternalError(exc, f"internal error ({type(exc).__name__}: {exc}). "
                              "Re-run with GITQUARRY_DEBUG=1 for a traceback and report it.")
    _fail_with(argv, typed)
    sys.exit(1)  # not reached: _fail_with exits
