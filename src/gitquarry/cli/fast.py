"""The command-line fast path: ``gitquarry history QUERY … --json`` answered without importing
Typer, Click, Rich or pydantic (issue 21 §1).

Importing ``gitquarry.cli.app`` (Typer, its vendored Click, Rich, pydantic and every command
module) and Typer's per-parameter pydantic adapters cost about 0.65 CPU-seconds of a cold
search that otherwise takes ~0.3. :func:`try_fast` recognises the command lines it fully
understands and answers them with the same library calls the Typer command makes; anything
else returns ``False`` and ``cli.entry`` hands the command line to the Typer app unchanged.

What it takes (:func:`parse_history`): ``history`` first (no root option before it), exactly
one QUERY, ``--json``, and only ``history``'s own options, spelled as Click reads them
(``--opt VALUE``, ``--opt=VALUE``, ``-n VALUE``; the last of a repeated option wins); a
value starting with ``-``, a glued short option (``-n5``), ``--help``, an unknown option, a
malformed number, a ``--project`` that is not a readable directory, a completion request
(``_GITQUARRY_COMPLETE``) or ``GITQUARRY_LOG`` set: not taken. Human (non-JSON) output is
Rich's and is never taken here.

How it answers: when a daemon runs for this user, it is asked first
(``cli.daemon_search``: the same answer computed in the daemon's warm process); otherwise,
or when the daemon cannot or will not answer, locally (:func:`history_answer`). Any error
of the search itself (a bad value, no index, a storage fault) makes :func:`try_fast` return
``False`` before anything was written, so the Typer path runs the command again and prints
its own message and exit code: help, errors and exit codes stay exactly the Typer app's.
Warnings (refused repository-owned settings, a read-only index) are printed by
``cli.common.warn``, imported only when there is one. ``GITQUARRY_FAST=0`` turns this path
off; ``GITQUARRY_FAST=local`` keeps it but never asks the daemon.

The bytes printed are the Typer path's for the same arguments:
``tests/surfaces/test_fast_cli.py`` runs both over many command lines and compares stdout,
stderr and exit code.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs the thin client
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

#: ``history``'s options that take a value: every spelling → the parameter it sets
VALUE_OPTIONS: dict[str, str] = {
    "--files-glob": "files_glob", "-g": "files_glob",
    "--after": "after", "--since": "after",
    "--before": "before", "--until": "before",
    "--author": "author",
    "--committer": "committer",
    "--path": "path",
    "--pickaxe": "pickaxe", "-S": "pickaxe",
    "--top-n": "top_n", "-n": "top_n",
    "--mode": "mode", "-m": "mode",
    "--detail": "detail",
    "--max-tokens": "max_tokens",
    "--cursor": "cursor",
    "--sort": "sort",
    "--min-score": "min_score",
    "--project": "project", "-p": "project",
}
#: ``history``'s flags: every spelling → (parameter, value it sets)
FLAG_OPTIONS: dict[str, tuple[str, bool]] = {
    "--merges": ("merges", True), "--no-merges": ("merges", False),
    "--explain": ("explain", True),
    "--no-collapse": ("no_collapse", True),
    "--diverse": ("diverse", True),
    "--json": ("as_json", True),
}


def _plain_int(text: str) -> bool:
    """ASCII digits only (what every int parser reads the same way)."""
    return text.isascii() and text.isdigit()


def _plain_float(text: str) -> bool:
    """``12``, ``1.5``, ``1.`` or ``.5`` in ASCII digits (no sign, exponent, nan or inf)."""
    whole, _dot, fraction = text.partition(".")
    return ((whole == "" or _plain_int(whole)) and (fraction == "" or _plain_int(fraction))
            and (whole != "" or fraction != ""))
_INT_PARAMS = ("top_n", "max_tokens")


#: every parameter of ``history`` with its default (QUERY has none)
_DEFAULTS: dict[str, Any] = {
    "query": None, "files_glob": None, "after": None, "before": None, "author": None,
    "committer": None, "path": None, "pickaxe": None, "top_n": None, "mode": None,
    "detail": "full", "max_tokens": None, "cursor": None, "merges": None,
    "sort": "relevance", "explain": False, "no_collapse": False, "diverse": False,
    "min_score": None, "as_json": False, "project": None,
}


class HistoryArgs:
    """One ``history`` command line, as the Typer command's parameters receive it (a plain
    class, not a dataclass: ``dataclasses`` imports ``inspect``, a cost on the thin-client
    path). Keyword arguments only; QUERY is required."""

    __slots__ = tuple(_DEFAULTS)
    query: str
    files_glob: str | None
    after: str | None
    before: str | None
    author: str | None
    committer: str | None
    path: str | None
    pickaxe: str | None
    top_n: int | None
    mode: str | None
    detail: str
    max_tokens: int | None
    cursor: str | None
    merges: bool | None
    sort: str
    explain: bool
    no_collapse: bool
    diverse: bool
    min_score: float | None
    as_json: bool
    project: str | None

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(_DEFAULTS)
        if unknown or not isinstance(values.get("query"), str):
            raise TypeError(f"HistoryArgs: unknown {sorted(unknown)} or no query")
        for name, default in _DEFAULTS.items():
            object.__setattr__(self, name, values.get(name, default))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HistoryArgs) and self.to_wire() == other.to_wire()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HistoryArgs({self.to_wire()!r})"

    def replace(self, **changes: Any) -> HistoryArgs:
        """A copy with ``changes``."""
        return HistoryArgs(**{**self.to_wire(), **changes})

    def to_wire(self) -> dict[str, Any]:
        """The arguments as a JSON object (for the daemon; ``project`` as given)."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_wire(cls, data: Any) -> HistoryArgs:
        """The inverse of :meth:`to_wire`.

        :raises ValueError: not an object, a key unknown or missing, or a value of the wrong
            type."""
        if not isinstance(data, dict) or set(data) != set(_FIELDS):
            raise ValueError("not a history request")
        for name, value in data.items():
            types = _FIELDS[name]
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise ValueError(f"{name}: wrong type")
        return cls(**data)


_NONE = type(None)
_OPT_STR = (str, _NONE)
#: every wire field → the types its value may have
_FIELDS: dict[str, tuple[type, ...]] = {
    "query": (str,), "files_glob": _OPT_STR, "after": _OPT_STR, "before": _OPT_STR,
    "author": _OPT_STR, "committer": _OPT_STR, "path": _OPT_STR, "pickaxe": _OPT_STR,
    "top_n": (int, _NONE), "mode": _OPT_STR, "detail": (str,), "max_tokens": (int, _NONE),
    "cursor": _OPT_STR, "merges": (bool, _NONE), "sort": (str,), "explain": (bool,),
    "no_collapse": (bool,), "diverse": (bool,), "min_score": (float, _NONE),
    "as_json": (bool,), "project": _OPT_STR,
}


def scan_command_line(
    tokens: list[str], flags: dict[str, tuple[str, Any]], value_options: dict[str, str]
) -> tuple[list[str], dict[str, Any]] | None:
    """``tokens`` (after the command words) as (positional arguments, {param: value}) read
    with the option tables ``flags`` (name → (param, value)) and ``value_options``
    (name → param); None when Click must read them (a flag given a value, a missing or
    dash-led value, ``-``, ``--help`` or any option not in the tables)."""
    values: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            positional.extend(tokens[i:])
            break
        if not token.startswith("-") or token == "-":
            if token == "-":
                return None
            positional.append(token)
            continue
        name, eq, glued = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in flags:
            if eq:
                return None  # a flag given a value: Click's error
            param, flag_value = flags[name]
            values[param] = flag_value
            continue
        if name not in value_options:
            return None  # --help, -h, an unknown or glued option: the Typer app's to read
        if eq:
            value = glued
        else:
            if i >= len(tokens):
                return None  # missing value: Click's error
            value = tokens[i]
            i += 1
        if value.startswith("-"):
            return None  # Click's reading of a dash-led value is its own
        values[value_options[name]] = value
    return positional, values


def read_numbers(values: dict[str, Any], int_params: Iterable[str]) -> bool:
    """Turn ``values``' ``int_params`` and ``min_score`` into numbers in place; False when
    one is not written as this path reads numbers (Click's to judge)."""
    for param in int_params:
        if param in values:
            if not _plain_int(values[param]):
                return False
            values[param] = int(values[param])
    if "min_score" in values:
        if not _plain_float(values["min_score"]):
            return False
        values["min_score"] = float(values["min_score"])
    return True


def parse_history(argv: list[str]) -> HistoryArgs | None:
    """``argv`` (without the program name) as a ``history --json`` command line this path
    answers, or None when the Typer app must read it (see the module docstring)."""
    if len(argv) < 2 or argv[0] != "history":
        return None
    scanned = scan_command_line(argv[1:], FLAG_OPTIONS, VALUE_OPTIONS)
    if scanned is None:
        return None
    positional, values = scanned
    if len(positional) != 1 or values.get("as_json") is not True:
        return None
    if not read_numbers(values, _INT_PARAMS):
        return None
    project = values.get("project")
    if project is not None and not (os.path.isdir(project) and os.access(project, os.R_OK)):
        return None  # Click's Path check (a file, unreadable) or the library's error
    return HistoryArgs(query=positional[0], **values)


def history_answer(args: HistoryArgs) -> tuple[dict[str, Any], list[str]]:
    """The JSON answer of ``gitquarry history`` for ``args`` and the warnings the command
    prints on stderr before it, in order: the Typer command's own request and answer
    functions (``cli.history_answer``), nothing printed.

    :raises GitquarryError: whatever the search raises (the caller falls back)."""
    from pathlib import Path

    from gitquarry.cli.history_answer import answer_history, cli_history_request
    from gitquarry.store.connection import read_only_note
    from gitquarry.workspace import resolve_workspace

    workspace = resolve_workspace(None if args.project is None else Path(args.project),
                                  for_search=True)
    warnings = [w.message for w in workspace.config.warnings]
    request = cli_history_request(
        args.query, files_glob=args.files_glob, after=args.after, before=args.before,
        author=args.author, committer=args.committer, path=args.path, pickaxe=args.pickaxe,
        top_n=args.top_n, mode=args.mode, detail=args.detail, max_tokens=args.max_tokens,
        cursor=args.cursor, merges=args.merges, sort=args.sort, explain=args.explain,
        no_collapse=args.no_collapse, diverse=args.diverse, min_score=args.min_score)
    data, read_only = answer_history(workspace, request)
    if read_only:
        warnings.append(read_only_note(workspace.db_path))
    return data, warnings


def render(args: HistoryArgs) -> tuple[str, list[str]]:
    """:func:`history_answer` as the text written on stdout (newline included) and the
    warning messages. :raises GitquarryError: as :func:`history_answer`."""
    from gitquarry.cli.plain import json_text

    data, warnings = history_answer(args)
    return json_text(data) + "\n", warnings


def _enabled() -> str | None:
    """``"daemon"`` (ask the daemon, then answer locally), ``"local"`` or None (off)."""
    if "_GITQUARRY_COMPLETE" in os.environ or os.environ.get("GITQUARRY_LOG"):
        return None
    setting = os.environ.get("GITQUARRY_FAST", "")
    if setting == "0":
        return None
    return "local" if setting == "local" else "daemon"


def try_fast(argv: list[str]) -> bool:
    """Answer ``argv`` here when this path takes it (then exit); False when the Typer app
    must run it (nothing has been written then)."""
    how = _enabled()
    if how is None:
        return False
    args = parse_history(argv)
    if args is None:
        return False
    answer: tuple[str, list[str]] | None = None
    try:
        if how == "daemon":
            from gitquarry.cli.thin import ask_daemon

            answer = ask_daemon(args)
        if answer is None:  # the library runs here: its log lines as the Typer app has them
            from gitquarry.cli.plain import configure_logging

            configure_logging()
            answer = render(args)
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        sys.stderr.flush()
        sys.exit(130)
    except Exception:  # every error's message and exit code are the Typer path's
        return False
    text, warnings = answer
    if warnings:
        from gitquarry.cli.common import set_color, warn

        set_color("auto")
        for message in warnings:
            warn(message)
    sys.stdout.write(text)
    sys.stdout.flush()
    sys.exit(0)
