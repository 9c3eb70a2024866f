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
(:func:`ask_daemon`) talks only to a socket that is a socket, owned by this user, in a
directory of this user's with no group or other access, served by a process of this uid
(``SO_PEERCRED``); anything else and it answers locally.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitquarry.cli.fast import HistoryArgs

OP = "search.history"
#: environment variables an answer may depend on: every one with these prefixes …
ENV_PREFIXES = ("GIT_", "GITQUARRY_", "XDG_", "LC_")
#: … and these; the daemon answers only when its values equal the client's
ENV_NAMES = ("HOME", "TZ", "LANG", "LANGUAGE", "PATH")
#: not compared: only decide whether the client asks at all
ENV_IGNORED = ("GITQUARRY_FAST",)
#: the longest the client waits for an answer before answering locally (seconds)
ANSWER_TIMEOUT_S = 60.0
MAX_REPLY_BYTES = 256 << 20


class DaemonSearchError(Exception):
    """The daemon ran the search and it failed: the client lets the Typer path report it."""


def answer_environment() -> dict[str, str]:
    """This process's values of the variables an answer may depend on."""
    return {k: v for k, v in os.environ.items()
            if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and k not in ENV_IGNORED}


def _installation() -> tuple[str, str]:
    import gitquarry

    return gitquarry.__version__, str(gitquarry.__file__)


# -- the daemon's side ---------------------------------------------------------------------


def handle(daemon: Any, args: dict[str, Any], send: Any) -> None:
    """Answer one ``search.history`` request on ``send`` (see the module docstring).
    ``daemon`` is the ``service.daemon.Daemon`` (its ``_error`` shapes, and redacts, error
    replies)."""
    from gitquarry.cli.fast import render
    from gitquarry.errors import GitquarryError

    request, why = _admit(args)
    if request is None or why is not None:
        refused = GitquarryError(f"search not answered here: {why or 'no request'}")
        refused.code = "search_refused"
        send(daemon._error(refused))
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
    if (args.get("version"), args.get("module")) != _installation():
        return request, "another gitquarry installation"
    if args.get("env") != answer_environment():
        return request, "another environment"
    if request.project is None or not os.path.isabs(request.project):
        return request, "no absolute starting directory"
    return request, None


# -- the client's side ---------------------------------------------------------------------


def _private_socket() -> Path | None:
    """The running daemon's socket when this user's daemon runs and the socket passes the
    trust checks (a socket, ours, in a directory of ours without group/other access)."""
    from gitquarry.service.paths import running_socket

    path = running_socket()
    if path is None:
        return None
    uid = os.geteuid()
    try:
        info = path.lstat()
        parent = path.parent.lstat()
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != uid:
        return None
    if not stat.S_ISDIR(parent.st_mode) or parent.st_uid != uid or parent.st_mode & 0o077:
        return None
    return path


def ask_daemon(args: HistoryArgs) -> tuple[str, list[str]] | None:
    """The running daemon's answer to ``args``: (stdout text, warning messages), or None
    when no trusted daemon runs, it refuses, or the exchange fails (answer locally).

    :raises DaemonSearchError: the daemon ran the search and it failed (the Typer path
        reports the error itself)."""
    from dataclasses import replace

    if args.project is not None:
        start = Path(args.project).expanduser()
        if not start.is_dir():
            return None
        start = start.resolve()
    else:
        start = Path.cwd().resolve()
    path = _private_socket()
    if path is None:
        return None
    version, module = _installation()
    request = {"op": OP, "args": {"request": replace(args, project=str(start)).to_wire(),
                                  "version": version, "module": module,
                                  "env": answer_environment()}}
    try:
        reply = _exchange(path, request)
    except (OSError, ValueError):
        return None
    if reply is None:
        return None
    if not reply.get("ok"):
        raw_error = reply.get("error")
        error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
        if error.get("code") in (None, "search_refused", "peer_rejected", "bad_request"):
            return None
        raise DaemonSearchError(str(error.get("code")))
    result = reply.get("result")
    if not isinstance(result, dict):
        return None
    text, warnings = result.get("stdout"), result.get("warnings")
    if not isinstance(text, str) or not isinstance(warnings, list) \
            or not all(isinstance(w, str) for w in warnings):
        return None
    return text, warnings


def _exchange(path: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    """One request line to the socket at ``path``, one reply line back (None: the peer is
    not of this uid, or hung up). :raises OSError: connect/read failed or timed out.
    :raises ValueError: the reply is not one JSON object."""
    from gitquarry.service.ipc import peer_uid

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with sock:
        sock.settimeout(ANSWER_TIMEOUT_S)
        sock.connect(str(path))
        uid = peer_uid(sock)
        if uid is not None and uid != os.geteuid():
            return None
        sock.sendall(json.dumps(request, ensure_ascii=False).encode("utf-8") + b"\n")
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if chunk.endswith(b"\n") or size > MAX_REPLY_BYTES:
                break
    raw = b"".join(chunks)
    if not raw.endswith(b"\n"):
        return None
    reply = json.loads(raw.decode("utf-8"))
    if not isinstance(reply, dict):
        raise ValueError("the reply is not an object")
    return reply


#: the requests this module answers (``service.daemon.Daemon.handle`` dispatches them before
#: its redacting ones)
OPS = {OP: handle}
