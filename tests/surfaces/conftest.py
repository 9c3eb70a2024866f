"""Fixtures for the surface tests (CLI, MCP, configuration trust, output bounds, faults).

Real git repositories (fixed identities and dates, isolated HOME and git config), real SQLite
files, the real CLI entry point in-process or as a subprocess, a real MCP client session over
stdio, and a real HTTP server on 127.0.0.1 that records every connection it accepts.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

BASE_TIME = 1_704_067_200  # 2024-01-01T00:00:00Z


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private HOME and git config; ``GITQUARRY_CONFIG`` names an empty user config file."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada Author\n\temail = ada@example.com\n"
        "[commit]\n\tgpgsign = false\n[core]\n\tautocrlf = false\n",
        encoding="utf-8",
    )
    (home / "gitquarry.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GITQUARRY_CONFIG", str(home / "gitquarry.toml"))
    monkeypatch.setenv("COLUMNS", "200")
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GITQUARRY_DEBUG", "GITQUARRY_LOG"):
        monkeypatch.delenv(key, raising=False)
    return home


def user_config(text: str) -> Path:
    """Write the user's own configuration file (the one ``GITQUARRY_CONFIG`` names)."""
    path = Path(os.environ["GITQUARRY_CONFIG"])
    path.write_text(text, encoding="utf-8")
    return path


class Repo:
    """A real repository; ``commit`` writes ``files`` (bytes or str), stages all, commits at a
    fixed time (one minute after the previous commit unless ``when`` is given)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = BASE_TIME
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, when: int | None = None) -> str:
        stamp = f"@{self.clock if when is None else when} +0000"
        env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
               "GIT_COMMITTER_NAME": "Cy Committer", "GIT_COMMITTER_EMAIL": "cy@example.com"}
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, check=True,
                              env=env)
        return proc.stdout.decode("utf-8", "replace").strip()

    def commit(self, message: str, files: dict[str, str | bytes] | None = None,
               when: int | None = None) -> str:
        for name, content in (files or {}).items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        self.git("add", "-A")
        self.clock = when if when is not None else self.clock + 60
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def fast_import(repo: Path, commits: list[tuple[str, dict[str, str]]]) -> None:
    """Create (if needed) the repository ``repo`` and write ``commits`` — (message,
    {path: content}) each, one minute apart from 2024-01-01 — on ``main`` with
    ``git fast-import`` (thousands of commits per second)."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    lines: list[bytes] = []
    for n, (message, files) in enumerate(commits, start=1):
        msg = message.encode()
        lines.append(b"commit refs/heads/main\n")
        lines.append(f"committer Ada <ada@example.com> {BASE_TIME + n * 60} +0000\n".encode())
        lines.append(b"data %d\n%s\n" % (len(msg), msg))
        for path, content in files.items():
            data = content.encode()
            lines.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(lines),
                   check=True, capture_output=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=repo, check=True)


CLI = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> CLI:
    """Run ``gitquarry.cli.app.main(argv)`` in-process → (exit code, stdout, stderr)."""
    from gitquarry.cli.app import main

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        else:  # pragma: no cover - main always exits
            code = 0
        out, err = capsys.readouterr()
        return code, out, err

    return run


def run_gitquarry(*argv: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                  timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """``python -m gitquarry argv`` in a real subprocess; output kept as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "gitquarry", *argv], cwd=cwd, capture_output=True,
        timeout=timeout, check=False, env=env if env is not None else dict(os.environ),
    )


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
