"""A closed stdout pipe (``gitquarry show X | head -1``) ends the command as git ends:
quietly, killed by ``SIGPIPE`` (the shell's status 141; ``-13`` for a ``subprocess`` parent),
nothing on stderr.

Python ignores ``SIGPIPE`` and raises ``BrokenPipeError`` instead; left alone, Rich's console
exits 1, Click's error handling or ours would print an error, and the interpreter's last flush
prints "Exception ignored … BrokenPipeError" and exits 120. Every writer of stdout ends up
here: Rich's ``on_broken_pipe`` (replaced in ``cli.common`` for every console, Typer's help
console included), ``cli.app.main`` (any ``BrokenPipeError`` that reaches it while stdout's
reader is gone) and the console entry's :func:`run_closing_quietly` (the fast paths, the
final flush, and Click's own EPIPE handling, which swaps ``sys.stdout`` for a wrapper and
exits 1).

``SIGPIPE`` is not restored for the whole process at start-up (``signal.SIG_DFL``): the
daemon, the MCP server and the web server write to sockets, where a peer that went away
must be an error they handle, not the end of the process. A ``BrokenPipeError`` from a
socket or a child's stdin therefore stays an error: the end is taken only when stdout itself
is a pipe (or socket) whose reader has gone (``poll`` reports ``POLLERR``/``POLLHUP`` on
it).
"""

from __future__ import annotations

import os
import sys

# Only ``os`` and ``sys`` at import (the console entry imports this module before the thin
# client and the fast paths; their import time is measured): ``select`` and ``signal`` when
# they are needed.
TYPE_CHECKING = False  # not typing's: importing typing costs the thin client
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

#: the exit status a shell shows for a process killed by SIGPIPE (128 + 13)
SIGPIPE_STATUS = 141


def stdout_reader_gone() -> bool:
    """Whether the process's stdout (file descriptor 1) is a pipe or socket whose reading
    end is closed. False for a terminal, a file, or when it cannot be told."""
    try:
        import select

        poller = select.poll()
        poller.register(1, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError, AttributeError, ImportError):  # no poll (Windows), no fd 1
        return False
    return any(fd == 1 and mask & (select.POLLERR | select.POLLHUP) for fd, mask in events)


def end_for_closed_stdout() -> NoReturn:
    """End the process as a program killed by ``SIGPIPE`` does (see the module docstring):
    what is still buffered for stdout is dropped (fd 1 pointed at ``/dev/null``, so the
    interpreter's final flush cannot fail), stderr is flushed, then the process sends itself
    ``SIGPIPE`` with the default action. Where there is no ``SIGPIPE`` it exits 141."""
    import signal

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
    try:  # noqa: SIM105  (contextlib is not imported on this path)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    sigpipe = getattr(signal, "SIGPIPE", None)
    if sigpipe is not None:
        signal.signal(sigpipe, signal.SIG_DFL)
        os.kill(os.getpid(), sigpipe)
    os._exit(SIGPIPE_STATUS)  # no SIGPIPE here, or it did not end the process


def end_if_stdout_closed(exc: BaseException) -> None:
    """:func:`end_for_closed_stdout` when ``exc`` is a ``BrokenPipeError`` and stdout's
    reader has gone; otherwise return (the caller handles ``exc`` as any error)."""
    if isinstance(exc, BrokenPipeError) and stdout_reader_gone():
        end_for_closed_stdout()


def run_closing_quietly(command: Callable[[], object]) -> None:
    """Run a whole command: a ``BrokenPipeError`` for stdout, raised by ``command`` or by
    flushing stdout when it ends (also by ``sys.exit``), ends the process as
    :func:`end_for_closed_stdout` does; any other exception passes unchanged."""
    stdout_at_start = sys.stdout
    try:
        command()
    except SystemExit as exc:
        if exc.code not in (0, None) and sys.stdout is not stdout_at_start:
            # Click met EPIPE: it replaced sys.stdout (its _PacifyFlushWrapper) and exits 1
            end_if_stdout_closed(BrokenPipeError())
        _flush_stdout()
        raise
    except BrokenPipeError as exc:
        end_if_stdout_closed(exc)
        raise
    _flush_stdout()


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError as exc:
        end_if_stdout_closed(exc)
        raise
    except (OSError, ValueError, AttributeError):
        pass  # closed or replaced stdout: the interpreter's own exit deals with it
