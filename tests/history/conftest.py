"""Fixtures for the commit-history tests: real git repositories, real SQLite files.

Repositories come from the shared builder (``tests/testkit``: ``GitRepo``, fixed identities
and dates, ``check=True`` on every git call) under an isolated ``HOME`` /
``GIT_CONFIG_GLOBAL``, so commit hashes are stable from run to run. Nothing here mocks git or
SQLite: tests index real repositories into a real ``index.db`` under ``tmp_path`` and reopen it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitquarry.config import Config, load_config
from gitquarry.history.index.indexer import IndexReport, index_workspace
from gitquarry.store import Store, open_store
from gitquarry.store.compression import inflate_text
from testkit import AUTHOR, BASE_TIME, COMMITTER, FastCommit, FileContent, GitRepo, isolate_user

__all__ = ["AUTHOR", "BASE_TIME", "COMMITTER", "FastCommit", "FileContent", "GitRepo"]


@pytest.fixture(scope="package", autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test here runs git (and gitquarry) with a private HOME and global config."""
    with pytest.MonkeyPatch.context() as mp:
        yield isolate_user(tmp_path_factory.mktemp("home"), mp)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., GitRepo]:
    """``make_repo("name", object_format=None, bare=False)`` → a fresh ``GitRepo`` under
    ``tmp_path/ws`` (the default workspace) or at an absolute path."""

    def make(name: str = "repo", **kwargs: object) -> GitRepo:
        path = Path(name) if Path(name).is_absolute() else tmp_path / "ws" / name
        return GitRepo(path, **kwargs)  # type: ignore[arg-type]

    return make


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return ws


@dataclass
class Indexer:
    """Indexes a workspace into ``<ws>/.gitquarry/index.db`` with a real store."""

    root: Path

    @property
    def db_path(self) -> Path:
        return self.root / ".gitquarry" / "index.db"

    def config(self, **git_indexing: object) -> Config:
        return load_config(self.root).replaced(git_indexing=dict(git_indexing))

    def run(self, **git_indexing: object) -> IndexReport:
        store = open_store(self.db_path)
        try:
            return index_workspace(self.root, store, self.config(**git_indexing))
        finally:
            store.close()

    def open(self) -> Store:
        """A fresh connection to the index file: what it holds was committed."""
        return open_store(self.db_path)

    def hashes(self) -> list[str]:
        with self.open() as store:
            return [r[0] for r in store.conn.execute("SELECT hash FROM git_commits ORDER BY hash")]

    def row(self, commit: str) -> dict[str, object]:
        with self.open() as store:
            row = store.conn.execute(
                "SELECT * FROM git_commits WHERE hash = ?", (commit,)
            ).fetchone()
            assert row is not None, f"commit {commit} is not indexed"
            return {**dict(row), "delta_truncated": inflate_text(row["delta_truncated"])}


@pytest.fixture
def indexer(workspace: Path) -> Indexer:
    return Indexer(workspace)


def gitquarry_executable() -> str:
    """The console script installed next to the running interpreter."""
    return str(Path(sys.executable).parent / "gitquarry")


@pytest.fixture
def fresh_store(tmp_path: Path) -> Iterator[Store]:
    store = open_store(tmp_path / "db" / "index.db")
    try:
        yield store
    finally:
        store.close()
