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
``cli.fast_docs``; ``index`` by ``cli.fast_index`` (the same run without Typer).

A ``history`` or ``repo-docs`` command line runs NumPy's BLAS on one thread
(:func:`_one_blas_thread`, before NumPy loads, never over the user's setting), as the MCP
server and the daemon do (``embedding.process_kind``): a one-shot search makes one
matrix-vector product, after which OpenBLAS's second thread busy-waits until the process ends.
The cosines are the same values (``tests/embedding/test_blas_threads.py``).
"""

from __future__ import annotations

import os
import sys

#: ``embedding.process_kind.BLAS_THREADS_VARIABLE`` (not imported: it imports ``typing``, a
#: cost on the thin-client path; ``tests/test_cli_imports.py`` checks they are equal)
BLAS_THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"
#: the first words of the command lines that search (and may rank by cosine)
_SEARCHING = ("history", "repo-docs")


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
    if args[:1] and args[0] in _SEARCHING:
        _one_blas_thread()
    if args[:1] == ["index"]:
        from gitquarry.cli.fast_index import try_fast_index

        try_fast_index(list(args))  # exits when it ran (index without Typer)
    from gitquarry.cli.fast import try_fast

    try_fast(list(args))  # exits when it answered (history --json)
    if args[:2] == ["repo-docs", "search"]:
        from gitquarry.cli.fast_docs import try_fast_docs

        try_fast_docs(list(args))  # exits when it answered (repo-docs search --json)
    from gitquarry.cli.app import main as full_main

    full_main(argv)


def _one_blas_thread() -> None:
    """NumPy's BLAS on one thread for this process (see the module docstring): set only while
    NumPy is not imported yet and the user has not set it."""
    if "numpy" not in sys.modules:
        os.environ.setdefault(BLAS_THREADS_VARIABLE, "1")
