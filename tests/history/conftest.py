"""Fixtures for the commit-history tests: real git repositories, real SQLite files.

Repositories are built the way simonw/git-history's ``make_repo`` does, with ``check=True``
on every git call, fixed author and committer dates and an isolated ``HOME`` /
``GIT_CONFIG_GLOBAL`` so commit hashes are stable from run to run. Nothing here mocks git or
SQLite: tests index real repositories into a real ``index.db`` under ``tmp_path`` and reopen it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitquarry.config import Config, load_config
from gitquarry.history.indexer import IndexReport, index_workspace
from gitquarry.store import Store, open_store
from gitquarry.store.compression import inflate_text

#: 2024-01-01T00:00:00Z; default commit dates count up from here, one minute apart.
BASE_TIME = 1_704_067_200
AUTHOR = ("Ada Author", "ada@example.com")
COMMITTER = ("Cy Committer", "cy@example.com")

FileContent = str | bytes | None


@pytest.fixture(scope="package", autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test here runs git (and gitquarry) with a private HOME and global config."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[init]\n\tdefaultBranch = main\n"
        "[user]\n\tname = Ada Author\n\temail = ada@example.com\n"
        "[commit]\n\tgpgsign = false\n"
        "[core]\n\tautocrlf = false\n",
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        mp.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        (home / "gitquarry.toml").write_text("", encoding="utf-8")  # the user's own config
        mp.setenv("GITQUARRY_CONFIG", str(home / "gitquarry.toml"))
        mp.setenv("COLUMNS", "200")
        for key in (
            "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
            "GIT_OBJECT_DIRECTORY", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "GITQUARRY_DEBUG",
        ):
            mp.delenv(key, raising=False)
        yield home


def _git_date(when: int) -> str:
    return f"@{when} +0000"


class GitRepo:
    """A real repository under test. ``commit`` writes files, stages everything and commits
    with fixed identities and dates, returning the full commit hash."""

    def __init__(self, path: Path, *, object_format: str | None = None, bare: bool = False,
                 init: bool = True) -> None:
        self.path = path
        self._clock = BASE_TIME
        if init:
            path.mkdir(parents=True, exist_ok=True)
            args = ["init", "-q", "-b", "main"]
            if object_format:
                args.append(f"--object-format={object_format}")
            if bare:
                args.append("--bare")
            self.git(*args)

    # -- running git -----------------------------------------------------------------------

    def env(self, when: int | None = None, *, author: tuple[str, str] = AUTHOR,
            committer: tuple[str, str] = COMMITTER) -> dict[str, str]:
        env = dict(os.environ)
        if when is None:
            self._clock += 60
            when = self._clock
        env.update(
            GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1],
            GIT_COMMITTER_NAME=committer[0], GIT_COMMITTER_EMAIL=committer[1],
            GIT_AUTHOR_DATE=_git_date(when), GIT_COMMITTER_DATE=_git_date(when),
        )
        return env

    def run(self, *args: str, input_bytes: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", *args], cwd=self.path, input=input_bytes, capture_output=True,
            env=env or self.env(when=BASE_TIME), check=check,
        )

    def git(self, *args: str, input_bytes: bytes | None = None,
            env: dict[str, str] | None = None) -> str:
        """Run git in the repository (``check=True``); stdout as text, stripped."""
        try:
            proc = self.run(*args, input_bytes=input_bytes, env=env)
        except subprocess.CalledProcessError as exc:  # pragma: no cover - diagnostics
            raise AssertionError(
                f"git {' '.join(args)} failed: {exc.stderr.decode(errors='replace')}"
            ) from exc
        return proc.stdout.decode("utf-8", "replace").strip()

    # -- building history ------------------------------------------------------------------

    def write(self, files: dict[str, FileContent]) -> None:
        for name, content in files.items():
            target = self.path / name
            if content is None:
                if target.exists():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")

    def commit(self, files: dict[str, FileContent] | None = None, message: str = "change",
               date: int | None = None, *, author: tuple[str, str] = AUTHOR,
               committer: tuple[str, str] = COMMITTER, extra: Sequence[str] = ()) -> str:
        """Write ``files`` (None deletes one), ``git add -A`` and commit; return the hash.
        ``date`` is Unix seconds (default: one minute after the previous commit)."""
        if files:
            self.write(files)
        self.git("add", "-A")
        env = self.env(date, author=author, committer=committer)
        self.git("commit", "-q", "--allow-empty", "-m", message, *extra, env=env)
        return self.head()

    def head(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", ref)

    def tree(self, ref: str = "HEAD") -> str:
        return self.git("rev-parse", f"{ref}^{{tree}}")

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, ref: str) -> None:
        self.git("checkout", "-q", ref)

    def merge(self, *branches: str, message: str, date: int | None = None) -> str:
        env = self.env(date)
        self.git("merge", "-q", "--no-ff", "--no-edit", "-m", message, *branches, env=env)
        return self.head()

    def hash_commit(self, raw: bytes) -> str:
        """Write a raw commit object with ``git hash-object -t commit -w``."""
        return self.git("hash-object", "-t", "commit", "-w", "--stdin", input_bytes=raw)

    def show(self, commit: str) -> str:
        """``git show --format= <commit>`` as text (invalid UTF-8 as U+FFFD)."""
        return self.run("show", "--format=", commit).stdout.decode("utf-8", "replace")

    def count(self, *revs: str) -> int:
        return int(self.git("rev-list", "--count", *revs))

    def all_hashes(self, *revs: str) -> set[str]:
        return set(self.git("rev-list", *(revs or ("--branches", "--tags", "--remotes"))).split())

    def fast_import(self, commits: Sequence[FastCommit], ref: str = "refs/heads/main") -> None:
        """Append ``commits`` to ``ref`` with one ``git fast-import`` process."""
        out = bytearray()
        for n, c in enumerate(commits):
            msg = c.message.encode("utf-8")
            when = c.date if c.date is not None else BASE_TIME + 60 * (n + 1)
            out += f"commit {ref}\n".encode()
            name, email = c.author or AUTHOR
            out += f"author {name} <{email}> {when} +0000\n".encode()
            out += f"committer {COMMITTER[0]} <{COMMITTER[1]}> {when} +0000\n".encode()
            out += f"data {len(msg)}\n".encode() + msg + b"\n"
            for path, content in c.files.items():
                if content is None:
                    out += f"D {path}\n".encode()
                    continue
                data = content.encode("utf-8") if isinstance(content, str) else content
                out += f"M 100644 inline {path}\n".encode()
                out += f"data {len(data)}\n".encode() + data + b"\n"
            out += b"\n"
        out += b"done\n"
        self.git("fast-import", "--quiet", "--done", input_bytes=bytes(out))


@dataclass
class FastCommit:
    """One commit for ``GitRepo.fast_import``."""

    files: dict[str, FileContent]
    message: str
    date: int | None = None
    #: (name, email); default ``AUTHOR``
    author: tuple[str, str] | None = None


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
