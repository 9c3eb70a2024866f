"""The thin client of ``search.history`` (``cli/daemon_search.py``): the running daemon asked
for a ``history --json`` answer with nothing but the standard library's ``os``, ``sys``,
``stat``, ``fcntl`` and the C modules ``_socket`` and ``_json`` imported (issue 21 §1:
≤ 60 ms client CPU): not ``socket``, whose IntEnums cost ~15 ms CPU at import, nor ``json``,
which imports ``re`` (~9 ms); :func:`json_loads`/:func:`json_dumps` call the same C code.

Not ``service.paths``/``service.ipc``: those import ``pathlib``, ``platformdirs``, ``typing``
and ``logging``, which cost more than the rest of the client together. The two things this
module does in their place, finding the daemon's socket (:func:`state_dir`,
:func:`running_socket`) and reading the peer's uid (:func:`peer_uid`), are checked against
them in ``tests/service/test_search_op.py``; wherever this module is unsure (not Linux,
``XDG_STATE_HOME`` and ``HOME`` both unusable) it asks them.

See ``cli/daemon_search.py`` for the request, the refusal rules and the trust checks.
"""

from __future__ import annotations

import _json  # the C halves of ``json``: ``json`` itself imports ``re`` (~9 ms CPU)
import _socket  # ``socket`` builds its IntEnums at import (~15 ms CPU); the calls are these
import os
import stat
import sys

TYPE_CHECKING = False  # not typing's: importing typing is what this module avoids
if TYPE_CHECKING:
    from typing import Any

OP = "search.history"
#: environment variables an answer may depend on: every one with these prefixes …
ENV_PREFIXES = ("GIT_", "GITQUARRY_", "XDG_", "LC_")
#: … and these; the daemon answers only when its values equal the client's
ENV_NAMES = ("HOME", "TZ", "LANG", "LANGUAGE", "PATH")
#: not compared: they only decide whether the client asks at all
ENV_IGNORED = ("GITQUARRY_FAST",)
#: the longest the client waits for an answer before answering locally (seconds)
ANSWER_TIMEOUT_S = 60.0
MAX_REPLY_BYTES = 256 << 20
#: error codes after which the command answers locally (any other: the search failed)
LOCAL_AFTER = (None, "search_refused", "peer_rejected", "bad_request")


class DaemonSearchError(Exception):
    """The daemon ran the search and it failed: the Typer path reports the error itself."""


class _DecodeContext:
    """What ``json.JSONDecoder`` hands ``_json.make_scanner``: ``json.loads``' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__


def _not_serialisable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_SCAN = _json.make_scanner(_DecodeContext())  # type: ignore[arg-type]
#: ``json.dumps(value, ensure_ascii=False)``'s encoder (same separators, same float text)
_ENCODE = _json.make_encoder(None, _not_serialisable, _json.encode_basestring, None, ": ",
                             ", ", False, False, True)
_SPACE = " \t\n\r"


def json_loads(text: str) -> Any:
    """``json.loads(text)`` for a ``str`` (the same C scanner, without importing ``json``).

    :raises ValueError: not one JSON value."""
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _SCAN(text, start)
    except StopIteration as exc:
        raise ValueError(f"not JSON at {exc.value}") from None
    if text[end:].strip(_SPACE):
        raise ValueError(f"extra data at {end}")
    return value


def json_dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)`` (the same C encoder)."""
    return "".join(_ENCODE(value, 0))


def answer_environment() -> dict[str, str]:
    """This process's values of the variables an answer may depend on."""
    return {k: v for k, v in os.environ.items()
            if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and k not in ENV_IGNORED}


def installation() -> tuple[str, str]:
    """(version, path of the ``gitquarry`` package): which code would compute an answer."""
    import gitquarry

    return gitquarry.__version__, str(gitquarry.__file__)


def state_dir() -> str:
    """``service.paths.state_dir()`` as text: on Linux ``$XDG_STATE_HOME/gitquarry`` when that
    is absolute, else ``$HOME/.local/state/gitquarry`` when ``HOME`` is absolute (what
    platformdirs answers there); elsewhere, or without either, platformdirs itself."""
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_STATE_HOME", "")
        if xdg.startswith("/"):
            return os.path.join(xdg, "gitquarry")
        home = os.environ.get("HOME", "")
        if home.startswith("/"):
            return os.path.join(home, ".local/state", "gitquarry")
    from gitquarry.service.paths import state_dir as platform_state_dir

    return str(platform_state_dir())


def running_socket() -> str | None:
    """``service.paths.running_socket()`` as text: the socket the daemon holding this user's
    lock recorded, or None (no daemon holds the lock, or no socket recorded)."""
    import fcntl

    lock = os.path.join(state_dir(), "daemon.lock")  # service.paths.LOCK_NAME
    try:
        handle = open(lock, encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held: a daemon runs
        else:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return None
        try:
            info = json_loads(handle.read() or "{}")
        except (OSError, ValueError):
            return None
    path = info.get("socket") if isinstance(info, dict) else None
    return path if isinstance(path, str) and path.startswith("/") else None


def private_socket() -> str | None:
    """The running daemon's socket when it passes the trust checks: a socket, owned by this
    user, in a directory of this user's without group or other access."""
    path = running_socket()
    if path is None:
        return None
    uid = os.geteuid()
    try:
        info = os.lstat(path)
        parent = os.lstat(os.path.dirname(path))
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != uid:
        return None
    if not stat.S_ISDIR(parent.st_mode) or parent.st_uid != uid or parent.st_mode & 0o077:
        return None
    return path


def peer_uid(sock: Any) -> int | None:
    """``service.ipc.peer_uid``: the uid of the process at the other end (``SO_PEERCRED``
    on Linux; ``ipc``'s own answer elsewhere). ``sock``: a ``socket.socket`` or the
    ``_socket.socket`` it is built on."""
    if hasattr(_socket, "SO_PEERCRED"):
        raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        return int.from_bytes(raw[4:8], sys.byteorder)  # struct ucred {pid, uid, gid}
    from gitquarry.service.ipc import peer_uid as ipc_peer_uid

    return ipc_peer_uid(sock)


def ask_daemon(args: Any) -> tuple[str, list[str]] | None:
    """The running daemon's answer to ``args``: (stdout text, warning messages), or None
    when no trusted daemon runs, it refuses, or the exchange fails (answer locally).

    :raises DaemonSearchError: the daemon ran the search and it failed."""
    if args.project is not None:
        start = os.path.expanduser(args.project)
        if not os.path.isdir(start):
            return None
    else:
        start = os.getcwd()
    start = os.path.realpath(start)  # what Path.resolve() gives for an existing directory
    path = private_socket()
    if path is None:
        return None
    version, module = installation()
    request = {"op": OP, "args": {"request": args.replace(project=start).to_wire(),
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
        if error.get("code") in LOCAL_AFTER:
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


def _exchange(path: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """One request line to the socket at ``path``, one reply line back (None: the peer is
    not of this uid, or the reply is cut). :raises OSError: connect/read failed or timed
    out. :raises ValueError: the reply is not one JSON object."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(ANSWER_TIMEOUT_S)
        sock.connect(path)
        uid = peer_uid(sock)
        if uid is not None and uid != os.geteuid():
            return None
        sock.sendall(json_dumps(request).encode("utf-8") + b"\n")
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
    finally:
        sock.close()
    raw = b"".join(chunks)
    if not raw.endswith(b"\n"):
        return None
    reply = json_loads(raw.decode("utf-8"))
    if not isinstance(reply, dict):
        raise ValueError("the reply is not an object")
    return reply
