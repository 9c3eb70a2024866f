"""The web page's HTTP server: uvicorn on one thread of the daemon, 127.0.0.1 only.

:class:`WebServer` binds the socket itself (so a refused address or a taken port is a typed
error before anything runs), then serves the Starlette app (``web.app.build_app``) wrapped in
the :class:`~gitquarry.web.security.Guard` until :meth:`stop`. Starlette, uvicorn and Jinja2
are imported only here and in the app, so a daemon that never serves the page never loads
them.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from typing import Any

from gitquarry.errors import WebBindRefusedError, WebPortError
from gitquarry.web.security import Guard, Sessions

log = logging.getLogger(__name__)

#: the only address the page listens on
LOOPBACK = "127.0.0.1"
START_TIMEOUT_S = 10.0


def check_bind(host: str, port: int) -> None:
    """:raises WebBindRefusedError: ``host`` is not 127.0.0.1.
    :raises WebPortError: ``port`` is outside 0..65535 (0 = any free port)."""
    if host != LOOPBACK:
        raise WebBindRefusedError(host)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise WebPortError(port if isinstance(port, int) else -1, "it must be from 0 to 65535")


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (checked by :func:`check_bind`).

    :raises WebPortError: the port is taken or cannot be bound.
    """
    check_bind(host, port)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        why = "it is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise WebPortError(port, why) from exc
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


class WebServer:
    """Serves ``app`` (an ASGI app) on 127.0.0.1 behind the guard.

    ``port`` 0 picks a free port; :attr:`port` is the bound one after :meth:`start`.
    :raises WebBindRefusedError: ``host`` is anything but 127.0.0.1.
    """

    def __init__(self, app: Any, *, host: str = LOOPBACK, port: int = 0,
                 sessions: Sessions | None = None) -> None:
        check_bind(host, port)
        self.host = host
        self.requested_port = port
        self.port = 0
        self.sessions = sessions or Sessions()
        self.guard = Guard(app, self.sessions)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.started_at: float | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self) -> None:
        """Bind and serve on a background thread; returns once the server accepts requests.

        :raises WebPortError: the port is taken.
        """
        import uvicorn

        sock = bind_socket(self.host, self.requested_port)
        self.port = sock.getsockname()[1]
        self.guard.port = self.port
        config = uvicorn.Config(
            self.guard, log_config=None, log_level="warning", access_log=False,
            lifespan="off", server_header=False, date_header=False, ws="none",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="gitquarry-web", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started and self._thread.is_alive():
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if not self._server.started:
            self.stop()
            sock.close()
            raise WebPortError(self.port, "the server did not start")
        self.started_at = time.time()
        log.info("web page serving on %s", self.url())

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._thread = None
        self._server = None

    def status(self) -> dict[str, Any]:
        return {"running": self.running, "port": self.port, "url": self.url(),
                "sessions": self.sessions.count(),
                "started_at": round(self.started_at, 3) if self.started_at else None}
