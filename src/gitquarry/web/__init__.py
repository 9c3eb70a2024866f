"""The local web page (issue 11): history, graph, repositories/Documentation tab and status,
served by the daemon on 127.0.0.1 only.

:class:`WebService` is what the daemon holds: the backend (``web.backend``), the Starlette app
(``web.app``) and the server (``web.server``) behind the guard (``web.security``).
``gitquarry web`` asks the daemon to start it (IPC ``web.start``) and prints the sign-in URL.
The daemon does not import this package: ``gitquarry daemon run`` hands it the
``WebService`` class as its ``web`` hook (``service.daemon.WebHosting``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitquarry.service.daemon import Daemon


class WebService:
    """The daemon's web page: one backend, one app, one server."""

    def __init__(self, daemon: Daemon, *, port: int = 0) -> None:
        from gitquarry.web.app import build_app
        from gitquarry.web.backend import WebBackend
        from gitquarry.web.server import WebServer

        self.backend = WebBackend(daemon)
        self.app = build_app(self.backend)
        self.server = WebServer(self.app, port=port)

    @staticmethod
    def check_bind(host: str | None, port: int) -> None:
        """:raises WebBindRefusedError: ``host`` is not 127.0.0.1 (None: 127.0.0.1).
        :raises WebPortError: ``port`` is outside 0..65535."""
        from gitquarry.web.server import LOOPBACK, check_bind

        check_bind(LOOPBACK if host is None else host, port)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def running(self) -> bool:
        return self.server.running

    def status(self) -> dict[str, Any]:
        return self.server.status()

    def open_on(self, workspace_ref: str) -> None:
        """The page opens on this watched workspace from now on (``gitquarry web PATH``)."""
        self.backend.default_workspace = workspace_ref

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()
        self.backend.close()

    def login(self) -> dict[str, Any]:
        """A fresh single-use sign-in token and the URL carrying it."""
        token = self.server.sessions.mint_login()
        return {"port": self.server.port, "url": self.server.url(),
                "login_url": f"{self.server.url()}?token={token}"}
