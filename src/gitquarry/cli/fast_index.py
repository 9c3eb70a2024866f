"""The command-line fast path for ``gitquarry index``: the same run without importing Typer,
Click or the other command modules (issue 21 target 4: a fixed cost of every index run).

Importing ``gitquarry.cli.app`` (Typer, its Click, every command module) and building the
Click command cost about a third of a CPU-second, several percent of indexing a repository
the size of flask. :func:`try_fast_index` takes exactly the command lines whose parsing
cannot differ from Click's:

- ``index`` first (no root option such as ``--color`` before it), then only ``--no-embed``,
  ``-q``/``--quiet`` and ``--json`` (each any number of times) and at most one PATH that
  does not start with ``-`` and names an existing directory (Click's ``file_okay=False``
  check passes for it); no ``--``, ``--help``, ``--watch``, glued or unknown options;
- not when the shell asks for completions (``_GITQUARRY_COMPLETE``), ``GITQUARRY_LOG`` is
  set, or ``GITQUARRY_FAST=0``.

Anything else returns ``False`` and ``cli.entry`` runs the Typer app. Once taken, the run is
the Typer command's: the root callback's ``--color auto`` (``console.apply_color``), the
same logging set-up, ``open_workspace``, ``cli.index_run.run_index`` (the one function both
paths call, printing through the same consoles), the same ``--no-embed`` hint, the same exit
code; an exception goes to ``cli.app.fail_for``, the Typer path's own handler (it is
imported only then). ``tests/surfaces/test_fast_index_cli.py`` runs both paths over many
command lines and compares stdout, stderr, exit code and the index written.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

#: the flags taken, each spelling → the parameter it sets
FLAGS = {"--no-embed": "no_embed", "-q": "quiet", "--quiet": "quiet", "--json": "as_json"}


def parse_index(argv: list[str]) -> tuple[str | None, set[str]] | None:
    """``(PATH or None, the flags' parameters set)`` for an ``index`` command line this path
    takes (see the module docstring), else None."""
    if not argv or argv[0] != "index":
        return None
    path: str | None = None
    flags: set[str] = set()
    for arg in argv[1:]:
        if arg in FLAGS:
            flags.add(FLAGS[arg])
        elif arg.startswith("-") or not arg or path is not None:
            return None
        else:
            path = arg
    if path is not None and not os.path.isdir(path):
        return None
    return path, flags


def _enabled() -> bool:
    return not ("_GITQUARRY_COMPLETE" in os.environ or os.environ.get("GITQUARRY_LOG")
                or os.environ.get("GITQUARRY_FAST", "") == "0")


def try_fast_index(argv: list[str]) -> bool:
    """Run ``argv`` here when this path takes it (then exit with the command's code); False
    when the Typer app must run it (nothing has been done then)."""
    if not _enabled():
        return False
    parsed = parse_index(argv)
    if parsed is None:
        return False
    from pathlib import Path

    raw_path, flags = parsed
    path: Path | None = Path(raw_path) if raw_path is not None else None
    from gitquarry.cli.console import apply_color, hint, open_workspace
    from gitquarry.cli.plain import configure_logging, printable

    configure_logging()
    apply_color("auto")  # the root callback's default
    no_embed, quiet, as_json = ("no_embed" in flags, "quiet" in flags, "as_json" in flags)
    try:
        from gitquarry.cli.index_run import run_index

        workspace = open_workspace(path, label="PATH")
        code = run_index(workspace, embed=not no_embed, quiet=quiet, as_json=as_json)
        if no_embed and code == 0 and not (as_json or quiet):
            hint(f"keyword search works now; compute the vectors later with `gitquarry "
                 f"index {printable(str(path or '.'))}` (resumable), or let the daemon: "
                 "`gitquarry daemon watch DIR`")
    except (KeyboardInterrupt, Exception) as exc:
        from gitquarry.cli.app import fail_for

        fail_for(argv, exc)
    sys.exit(code)
