"""Fixtures for the semantic/hybrid search, embedding pipeline and MCP tests.

Real git repositories (fixed dates, isolated ``HOME``/``GIT_CONFIG_GLOBAL``, ``check=True``
on every git call), real ``index.db`` files under ``tmp_path``. The fake embedder is used
through the real provider registry (``fake_provider_registered``); nothing mocks git or
SQLite. ``GITQUARRY_CONFIG`` points at a file that does not exist, so the user's own
configuration never leaks into a test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gitquarry.config import Config, load_config
from gitquarry.embedding.fake import fake_provider_registered
from gitquarry.embedding.registry import EmbedderProvider
from gitquarry.history.indexer import IndexReport, index_workspace
from gitquarry.history.models import GitSearchResponse
from gitquarry.history.service import HistorySearcher
from gitquarry.indexing import ExtrasReport, index_extras
from gitquarry.store import Store, open_store
from gitquarry.workspace import Workspace

#: 2024-01-01T00:00:00Z; commit dates count up from here, one hour apart by default.
BASE_TIME = 1_704_067_200
AUTHOR = ("Ada Author", "ada@example.com")
COMMITTER = ("Cy Committer", "cy@example.com")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and git config; ``GITQUARRY_CONFIG`` names an empty user config file
    (``write_user_config`` fills it)."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[init]\n\tdefaultBranch = main\n"
        "[user]\n\tname = Ada Author\n\temail = ada@example.com\n"
        "[commit]\n\tgpgsign = false\n"
        "[core]\n\tautocrlf = false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    (home / "gitquarry.toml").write_text("", encoding="utf-8")
    monkeypatch.setenv("GITQUARRY_CONFIG", str(home / "gitquarry.toml"))
    monkeypatch.setenv("COLUMNS", "200")
    for key in (
        "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
        "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "GITQUARRY_DEBUG",
    ):
        monkeypatch.delenv(key, raising=False)
    return home


class GitRepo:
    """A real repository. ``commit`` writes files, stages all and commits with fixed dates."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = BASE_TIME
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def env(self, when: int) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            GIT_AUTHOR_NAME=AUTHOR[0], GIT_AUTHOR_EMAIL=AUTHOR[1],
            GIT_COMMITTER_NAME=COMMITTER[0], GIT_COMMITTER_EMAIL=COMMITTER[1],
            GIT_AUTHOR_DATE=f"@{when} +0000", GIT_COMMITTER_DATE=f"@{when} +0000",
        )
        return env

    def git(self, *args: str, when: int | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, check=True,
            env=self.env(self.clock if when is None else when),
        )
        return proc.stdout.decode("utf-8", "replace").strip()

    def commit(self, message: str, files: dict[str, str | None] | None = None,
               date: int | None = None) -> str:
        """Write ``files`` (None deletes), commit everything; return the full hash.
        ``date`` defaults to one hour after the previous commit."""
        for name, content in (files or {}).items():
            target = self.path / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        self.git("add", "-A")
        self.clock = date if date is not None else self.clock + 3600
        self.git("commit", "-q", "--allow-empty", "-m", message, when=self.clock)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def workspace_dir(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def make_repo(workspace_dir: Path) -> Callable[[str], GitRepo]:
    """``make_repo("name")`` → a fresh repository inside the workspace."""
    return lambda name="repo": GitRepo(workspace_dir / name)


def write_workspace_config(root: Path, text: str) -> None:
    """The workspace's (repository-owned) ``.gitquarry.toml``: only repository-owned keys
    take effect there (see ``gitquarry.config``)."""
    (root / ".gitquarry.toml").write_text(text, encoding="utf-8")


def write_user_config(text: str) -> None:
    """The user's own configuration (the file ``GITQUARRY_CONFIG`` names)."""
    Path(os.environ["GITQUARRY_CONFIG"]).write_text(text, encoding="utf-8")


@dataclass
class RecordingProgress:
    """A ``Progress`` that records every event."""

    events: list[tuple[str, Any]] = field(default_factory=list)

    def phase(self, name: str, total: int | None) -> None:
        self.events.append(("phase", (name, total)))

    def advance(self, units: int) -> None:
        self.events.append(("advance", units))

    def note(self, message: str) -> None:
        self.events.append(("note", message))


@dataclass
class Harness:
    """Index and search one workspace in-process, with a configurable embedding provider."""

    root: Path
    provider: str = "fake"
    model: str = ""
    batch_size: int = 100
    search: dict[str, Any] = field(default_factory=dict)

    @property
    def db_path(self) -> Path:
        return self.root / ".gitquarry" / "index.db"

    def config(self) -> Config:
        return load_config(self.root).replaced(
            embedding={"provider": self.provider, "model": self.model,
                       "batch_size": self.batch_size},
            search=dict(self.search))

    def workspace(self) -> Workspace:
        return Workspace(root=self.root.resolve(), config=self.config())

    def index(
        self, *, embed: bool = True, progress: Any = None
    ) -> tuple[IndexReport, ExtrasReport]:
        from gitquarry.history.progress import NullProgress

        ws = self.workspace()
        store = open_store(self.db_path)
        try:
            report = index_workspace(ws.root, store, ws.config)
            extras = index_extras(ws, store, progress=progress or NullProgress(), embed=embed)
        finally:
            store.close()
        return report, extras

    def searcher(self) -> HistorySearcher:
        return HistorySearcher(self.workspace())

    def query(self, query: str, **kwargs: Any) -> GitSearchResponse:
        searcher = self.searcher()
        try:
            return searcher.search(query, **kwargs)
        finally:
            searcher.close()

    def open(self) -> Store:
        return open_store(self.db_path)

    def scalar(self, sql: str, *params: Any) -> Any:
        with self.open() as store:
            return store.conn.execute(sql, params).fetchone()[0]

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with self.open() as store:
            return [tuple(r) for r in store.conn.execute(sql, params).fetchall()]


@pytest.fixture
def fake_provider() -> Iterator[EmbedderProvider]:
    """Provider ``"fake"`` registered through the real registry for the test."""
    with fake_provider_registered() as provider:
        yield provider


@pytest.fixture
def harness(workspace_dir: Path, fake_provider: EmbedderProvider) -> Harness:
    return Harness(workspace_dir)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
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


def run_gitquarry(*argv: str, cwd: Path | None = None, python_args: tuple[str, ...] = (),
                  timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python [python_args] -m gitquarry argv`` in a real subprocess (inherits the env)."""
    return subprocess.run(
        [sys.executable, *python_args, "-m", "gitquarry", *argv],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
    )
