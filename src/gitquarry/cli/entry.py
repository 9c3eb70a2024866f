"""The console-script entry point (``gitquarry``, ``python -m gitquarry``): ``--version``
answered before the command-line framework is imported; everything else goes to
``gitquarry.cli.app.main`` unchanged.

Importing ``gitquarry.cli.app`` costs about half a CPU-second (Typer, Click, Rich and every
command module), which ``gitquarry --version`` alone used to pay (issue 21 §1). The fast path
takes exactly ``gitquarry --version`` and prints what the Typer callback prints (``gitquarry
<version>``, exit 0); any other command line, ``--version`` with more arguments included
(whose parsing errors and order Click decides), takes the full path, so help, errors and exit
codes stay Click's. ``history … --json`` is answered by ``cli.fast`` (the same library calls,
no Typer, Rich or pydantic; through the daemon when one runs) when it understands the whole
command line; it falls back here otherwise. ``repo-docs search … --json`` likewise by
``cli.fast_docs``.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    """``gitquarry`` itself: see the module docstring. ``argv`` as for
    ``gitquarry.cli.app.main`` (None: ``sys.argv[1:]``)."""
    from gitquarry.cli.pipes import run_closing_quietly

    run_closing_quietly(lambda: _main(argv))  # a closed stdout pipe ends as git's (141)


def _main(argv: list[str] | None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from gitquarry import __version__

        sys.stdout.write(f"gitquarry {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    from gitquarry.cli.fast import try_fast

    try_fast(list(args))  # exits when it answered (history --json)
    if args[:2] == ["repo-docs", "search"]:
        from gitquarry.cli.fast_docs import try_fast_docs

        try_fast_docs(list(args))  # exits when it answered (repo-docs search --json)
    from gitquarry.cli.app import main as full_main

    full_main(argv)
