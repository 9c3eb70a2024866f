"""The daemon's search request: ``gitquarry history … --json`` answered by the running
daemon's warm process, byte for byte what the command would print itself (issue 21 §1).

Request (one line, as every IPC request): ``{"op": "search.history", "args": {"request":
HistoryArgs.to_wire(), "version": …, "module": …, "env": {…}}}`` where ``request.project``
is the absolute directory the command starts from (``--project`` resolved, else its current
directory). The daemon answers only when it would compute exactly what the client would:
the same gitquarry version and installation (``module``: ``gitquarry.__file__``) and the
same environment for everything an answer reads (:data:`ENV_PREFIXES`, :data:`ENV_NAMES`:
configuration paths, git's variables, locale, time zone, ``PATH``); otherwise it refuses
(``search_refused``) and the client answers locally. Reply: ``{"ok": true, "final": true,
"result": {"stdout": TEXT, "warnings": [MESSAGE, …]}}``, computed by
``cli.fast.render``: the same function the client would run.

Trust: the answer is the caller's own search over a directory the caller named, sent only
to a peer whose uid the socket server checked (``ipc.IpcServer``); it is the one daemon
payload that is not redacted of absolute paths, because its bytes must equal the local
answer (a result's ``repo_path`` is absolute, commit text is repository content). The client
(``cli.thin.ask_daemon``, which imports nothing but a few standard modules) talks only to
a socket that is a socket, owned by this user, in a
directory of this user's with no group or other access, served by a process of this uid
(``SO_PEERCRED``); anything else and it answers locally.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from gitquarry.cli.thin import OP, answer_environment, installation

if TYPE_CHECKING:
    from gitquarry.cli.fast import HistoryArgs


def handle(daemon: Any, args: dict[str, Any], send: Any) -> None:
    """Answer one ``search.history`` request on ``send`` (see the module docstring).
    ``daemon`` is the ``service.daemon.Daemon`` (its ``_error`` shapes, and redacts, error
    replies)."""
    from gitquarry.cli.fast import render
    from gitquarry.errors import GitquarryError, SearchRefusedError

    request, why = _admit(args)
    if request is None or why is not None:
        send(daemon._error(SearchRefusedError(why or "no request")))
        return
    try:
        text, warnings = render(request)
    except GitquarryError as exc:
        send(daemon._error(exc))
        return
    send({"ok": True, "final": True, "result": {"stdout": text, "warnings": warnings}})


def _admit(args: dict[str, Any]) -> tuple[HistoryArgs | None, str | None]:
    """The request in ``args`` and why it is refused (None: answer it)."""
    from gitquarry.cli.fast import HistoryArgs

    try:
        request = HistoryArgs.from_wire(args.get("request"))
    except ValueError as exc:
        return None, f"unreadable request ({exc})"
    why = admission(args)
    if why is not None:
        return request, why
    if request.project is None or not os.path.isabs(request.project):
        return request, "no absolute starting directory"
    return request, None


def admission(args: dict[str, Any]) -> str | None:
    """Why the daemon may not answer a request with ``args`` (its ``version``, ``module`` and
    ``env``), or None: the same installation and environment as the daemon's."""
    if (args.get("version"), args.get("module")) != installation():
        return "another gitquarry installation"
    if args.get("env") != answer_environment():
        return "another environment"
    return None


#: the requests this module answers (``service.daemon.Daemon.handle`` dispatches them before
#: its redacting ones)
OPS = {OP: handle}
