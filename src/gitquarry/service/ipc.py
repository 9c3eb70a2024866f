"""Local IPC: newline-delimited JSON over a Unix domain socket.

A connection carries one request, ``{"op": "...", "args": {...}}``, and one or more response
lines: ``{"ok": true, "result": ...}``, ``{"ok": false, "error": {"code", "message",
"retryable", "exit_code"}}``, or for streaming requests (``jobs.attach``) several
``{"ok": true, "event": ...}`` lines ending with one that has ``"final": true``.

Authentication: the socket lives in a 0700 directory with mode 0600, and the server checks
the peer's uid with ``SO_PEERCRED`` (Linux) or ``LOCAL_PEERCRED`` (macOS) where available:
a different user is refused before the request is read.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import socket
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gitquarry.errors import (
    DaemonNotRunningError,
    DaemonUnavailableError,
    GitquarryError,
    kind_of_exit_code,
)

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1 << 20
Send = Callable[[dict[str, Any]], None]
Handler = Callable[[dict[str, Any], Send], None]


def peer_uid(conn: socket.socket) -> int | None:
    """The connecting process's uid, or None where the platform cannot tell."""
    if hasattr(socket, "SO_PEERCRED"):
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", raw)
        return int(uid)
    if sys.platform == "darwin":  # LOCAL_PEERCRED: struct xucred {u_int version; uid_t uid; …}
        with contextlib.suppress(OSError):
            raw = conn.getsockopt(0, 0x001, 76)
            return int(struct.unpack_from("Ii", raw)[1])
    return None


class IpcServer:
    """Accepts connections on ``path`` and runs ``handler(request, send)`` per connection on
    its own thread. ``check_socket`` re-creates the socket if it was removed or replaced."""

    def __init__(self, path: Path, handler: Handler) -> None:
        self.path = path
        self.handler = handler
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = os.pipe()

    def bind(self) -> None:
        from gitquarry.service.paths import check_socket_path

        check_socket_path(self.path)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(64)
        sock.setblocking(False)
        with self._lock:
            previous, self._sock = self._sock, sock
            self._inode = self.path.stat().st_ino
        if previous is not None:
            previous.close()
        os.write(self._wake_w, b"x")

    def check_socket(self) -> bool:
        """Re-bind when the socket file is gone or is not ours; True when it re-bound."""
        try:
            inode = self.path.lstat().st_ino
        except FileNotFoundError:
            inode = None
        if inode is not None and inode == self._inode:
            return False
        log.warning("the daemon socket was removed or replaced; re-creating it")
        self.bind()
        return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="gitquarry-ipc", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                sock = self._sock
            if sock is None:
                return
            sel = selectors.DefaultSelector()
            sel.register(sock, selectors.EVENT_READ)
            sel.register(self._wake_r, selectors.EVENT_READ)
            try:
                ready = sel.select(timeout=1.0)
            except (OSError, ValueError):
                ready = []
            finally:
                sel.close()
            for key, _ in ready:
                if key.fileobj == self._wake_r:
                    os.read(self._wake_r, 64)
                    continue
                try:
                    conn, _ = sock.accept()
                except (BlockingIOError, OSError):
                    continue
                threading.Thread(target=self._handle, args=(conn,), daemon=True,
                                 name="gitquarry-ipc-conn").start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.setblocking(True)
            conn.settimeout(30.0)
            uid = peer_uid(conn)
            if uid is not None and uid != os.geteuid():
                log.warning("refused a connection from uid %s", uid)
                _send(conn, {"ok": False, "error": {
                    "code": "peer_rejected", "message": "connection from another user refused",
                    "retryable": False, "exit_code": 1}, "final": True})
                return
            try:
                request = _read_line(conn)
            except (OSError, ValueError) as exc:
                _send(conn, {"ok": False, "error": {
                    "code": "bad_request", "message": f"unreadable request: {exc}",
                    "retryable": False, "exit_code": 2}, "final": True})
                return
            conn.settimeout(None)

            def send(obj: dict[str, Any]) -> None:
                _send(conn, obj)

            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.handler(request, send)

    def close(self) -> None:
        self._stop.set()
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
        try:
            if self.path.lstat().st_ino == self._inode:
                self.path.unlink()
        except FileNotFoundError:
            pass
        os.close(self._wake_r)
        os.close(self._wake_w)


def _send(conn: socket.socket, obj: dict[str, Any]) -> None:
    conn.sendall(json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n")


def _read_line(conn: socket.socket) -> dict[str, Any]:
    buf = bytearray()
    while b"\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        if len(buf) > MAX_REQUEST_BYTES:
            raise ValueError("request too large")
    line = bytes(buf).split(b"\n", 1)[0]
    data = json.loads(line.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("request is not a JSON object")
    return data


class RemoteError(GitquarryError):
    """An error the daemon reported; ``code``, ``retryable`` and ``exit_code`` are its."""

    def __init__(self, code: str, message: str, *, retryable: bool, exit_code: int) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable
        self.kind = kind_of_exit_code(exit_code)  # so ``exit_code`` is the daemon's


def _raise_for(payload: dict[str, Any]) -> None:
    err = payload.get("error") or {}
    code = str(err.get("code") or "error")
    message = str(err.get("message") or "the daemon reported an error")
    if code == "daemon_not_running":
        raise DaemonNotRunningError()
    raise RemoteError(code, message, retryable=bool(err.get("retryable")),
                      exit_code=int(err.get("exit_code") or 1))


class Client:
    """Talks to the daemon at ``path`` (default: this user's socket).

    :raises DaemonNotRunningError: nothing listens there.
    :raises DaemonUnavailableError: the platform has no Unix sockets, or the daemon hung up.
    :raises RemoteError: the daemon answered with an error (its code and message).
    """

    def __init__(self, path: Path | None = None, *, timeout_s: float = 60.0) -> None:
        self._path = path
        self.timeout_s = timeout_s

    @property
    def path(self) -> Path:
        """The socket: the one given, else the one the running daemon recorded in the state
        directory (whatever this process's ``XDG_RUNTIME_DIR``), else this environment's."""
        if self._path is not None:
            return self._path
        from gitquarry.service.paths import client_socket_path

        return client_socket_path()

    def _connect(self) -> socket.socket:
        if not hasattr(socket, "AF_UNIX"):
            raise DaemonUnavailableError("this platform has no Unix domain sockets; use "
                                         "--foreground")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout_s)
        try:
            sock.connect(str(self.path))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            sock.close()
            raise DaemonNotRunningError() from exc
        except OSError as exc:
            sock.close()
            raise DaemonUnavailableError(exc.strerror or str(exc)) from exc
        return sock

    def stream(self, op: str, **args: Any) -> Iterator[dict[str, Any]]:
        """Every response line of one request, in order, until the final one."""
        sock = self._connect()
        with sock:
            _send(sock, {"op": op, "args": args})
            reader = sock.makefile("rb")
            while True:
                try:
                    line = reader.readline()
                except TimeoutError as exc:
                    raise DaemonUnavailableError("the daemon did not answer in time") from exc
                if not line:
                    raise DaemonUnavailableError("the daemon closed the connection")
                payload = json.loads(line.decode("utf-8"))
                if not payload.get("ok"):
                    _raise_for(payload)
                yield payload
                if payload.get("final", True):
                    return

    def call(self, op: str, **args: Any) -> Any:
        """One request, one result."""
        result: Any = None
        for payload in self.stream(op, **args):
            result = payload.get("result")
        return result
