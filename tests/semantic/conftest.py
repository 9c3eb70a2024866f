"""Fixtures for the semantic/hybrid search, embedding pipeline and MCP tests.

Real git repositories (fixed dates, isolated ``HOME``/``GIT_CONFIG_GLOBAL``, ``check=True``
on every git call), real ``index.db`` files under ``tmp_path``. The fake embedder is used
through the real provider registry (``fake_provider_registered``); nothing mocks git or
SQLite. ``GITQUARRY_CONFIG`` points at a file that does not exist, so the user's own
configuration never leaks into a test.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gitquarry.config import Config, load_config
from gitquarry.embedding.fake import fake_provider_registered
from gitquarry.embedding.registry import EmbedderProvider
from gitquarry.history.index.indexer import IndexReport, index_workspace
from gitquarry.history.models import GitSearchResponse
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.indexing import ExtrasReport, index_extras
from gitquarry.store import Store, open_store
from gitquarry.workspace import Workspace
from testkit import AUTHOR, BASE_TIME, COMMITTER, GitRepo, isolate_user
from testkit import run_gitquarry as _run_gitquarry

__all__ = ["AUTHOR", "BASE_TIME", "COMMITTER", "GitRepo", "run_gitquarry"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME and git config; ``GITQUARRY_CONFIG`` names an empty user config file
    (``write_user_config`` fills it)."""
    return isolate_user(tmp_path_factory.mktemp("home"), monkeypatch)


def SemanticRepo(path: Path) -> GitRepo:
    """The shared builder with this directory's clock: commits one hour apart, an explicit
    date resets the clock."""
    return GitRepo(path, step=3600, resume=True)


@pytest.fixture
def workspace_dir(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def make_repo(workspace_dir: Path) -> Callable[[str], GitRepo]:
    """``make_repo("name")`` → a fresh repository inside the workspace."""
    return lambda name="repo": SemanticRepo(workspace_dir / name)


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
        from gitquarry.history.index.progress import NullProgress

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


#: ``python [python_args] -m gitquarry argv`` in a real subprocess, output as text
run_gitquarry = functools.partial(_run_gitquarry, text=True)
