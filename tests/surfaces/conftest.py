"""Fixtures for the surface tests (CLI, MCP, configuration trust, output bounds, faults).

Real git repositories (fixed identities and dates, isolated HOME and git config), real SQLite
files, the real CLI entry point in-process or as a subprocess, a real MCP client session over
stdio, and a real HTTP server on 127.0.0.1 that records every connection it accepts.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from testkit import BASE_TIME, GitRepo, fast_import, isolate_user, run_gitquarry
from testkit.cli import CLI

__all__ = ["BASE_TIME", "CLI", "Repo", "fast_import", "run_gitquarry"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private HOME and git config; ``GITQUARRY_CONFIG`` names an empty user config file."""
    return isolate_user(tmp_path_factory.mktemp("home"), monkeypatch)


def user_config(text: str) -> Path:
    """Write the user's own configuration file (the one ``GITQUARRY_CONFIG`` names)."""
    path = Path(os.environ["GITQUARRY_CONFIG"])
    path.write_text(text, encoding="utf-8")
    return path


class Repo(GitRepo):
    """The shared builder with this directory's clock: commits a minute apart, an explicit
    date (``when=``) resets the clock."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, resume=True)


@dataclass
class Sink:
    """A real HTTP server on 127.0.0.1. ``connections`` counts accepted TCP connections;
    ``requests`` records each request (method, path, headers, body). It answers POSTs in the
    OpenAI ``/embeddings`` shape so that a client that reaches it would carry on."""

    url: str = ""
    connections: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def received_anything(self) -> bool:
        return self.connections > 0 or bool(self.requests)


@pytest.fixture
def sink() -> Iterator[Sink]:
    state = Sink()

    class Handler(BaseHTTPRequestHandler):
        def _record(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            state.requests.append({"method": self.command, "path": self.path,
                                   "headers": dict(self.headers), "body": body})
            return body

        def do_GET(self) -> None:
            self._record()
            self._send(b"{}")

        def do_POST(self) -> None:
            body = self._record()
            try:
                inputs = json.loads(body)["input"]
            except (ValueError, KeyError, TypeError):
                inputs = []
            data = [{"object": "embedding", "index": i,
                     "embedding": [float(len(t)), 1.0, 0.5, float(i + 1)]}
                    for i, t in enumerate(inputs)]
            self._send(json.dumps({"object": "list", "data": data, "model": "m"}).encode())

        def _send(self, raw: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def verify_request(self, request: Any, client_address: Any) -> bool:
            state.connections += 1
            return True

    httpd = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


Body = Callable[[Any], Awaitable[Any]]


def with_mcp_server(project: Path, body: Body, tmp_path: Path, *, timeout: float = 120,
                    cwd: Path | None = None) -> tuple[Any, str]:
    """Start ``python -m gitquarry mcp --project <project>`` (the official SDK's stdio
    client), initialise, run ``body(session)`` → (its value, the server's stderr)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    errlog_path = tmp_path / "mcp-stderr.txt"

    async def main() -> Any:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "gitquarry", "mcp", "--project", str(project)],
            env=dict(os.environ), cwd=cwd,
        )
        with open(errlog_path, "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    try:
        value = asyncio.run(asyncio.wait_for(main(), timeout))
    except BaseException:
        sys.stderr.write(errlog_path.read_text(encoding="utf-8") if errlog_path.exists() else "")
        raise
    return value, errlog_path.read_text(encoding="utf-8")


def tool_json(result: Any) -> Any:
    """The JSON payload of a successful MCP tool call (its one text block)."""
    assert not result.is_error, result.content[0].text
    assert len(result.content) == 1
    return json.loads(result.content[0].text)
