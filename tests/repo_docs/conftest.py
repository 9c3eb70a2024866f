"""Fixtures for the repository-docs tests: real git repositories, a private registry and
state dir, real ``repo_docs.db`` files. The fake embedder is used through the real provider
registry; the real model only in tests marked ``slow``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitquarry.config import Config
from gitquarry.embedding.fake import fake_provider_registered
from gitquarry.repo_docs.registry import Registry, Selector
from gitquarry.repo_docs.service import RepoDocsService

BASE_TIME = 1_704_067_200


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory,
                 monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada\n\temail = ada@example.com\n"
        "[commit]\n\tgpgsign = false\n[core]\n\tautocrlf = false\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".state"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GITQUARRY_CONFIG", "/dev/null")
    monkeypatch.setenv("COLUMNS", "200")
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "GITQUARRY_DEBUG"):
        monkeypatch.delenv(key, raising=False)
    return home


class Repo:
    """A real repository; ``commit`` writes files (None deletes), stages all, commits."""

    def __init__(self, path: Path, *, object_format: str | None = None,
                 bare: bool = False) -> None:
        self.path = path
        self.clock = BASE_TIME
        path.mkdir(parents=True, exist_ok=True)
        args = ["init", "-q", "-b", "main"]
        if object_format:
            args.append(f"--object-format={object_format}")
        if bare:
            args.append("--bare")
        self.git(*args)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        self.clock += 60
        env = dict(os.environ, GIT_AUTHOR_DATE=f"@{self.clock} +0000",
                   GIT_COMMITTER_DATE=f"@{self.clock} +0000")
        proc = subprocess.run(["git", *args], cwd=cwd or self.path, env=env,
                              capture_output=True, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {proc.stderr.decode()}")
        return proc.stdout.decode().strip()

    def write(self, files: dict[str, str | bytes | None]) -> None:
        for name, content in files.items():
            target = self.path / name
            if content is None:
                if target.exists() or target.is_symlink():
                    target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")

    def commit(self, files: dict[str, str | bytes | None], message: str = "docs") -> str:
        self.write(files)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


DOCS = {
    "README.md": "# Widget\n\nWidget renders dashboards for the ops team.\n",
    "docs/deploy.md": (
        "# Deployment\n\nHow we ship.\n\n## Nginx\n\nThe reverse proxy terminates TLS and "
        "forwards to the gunicorn workers.\n\n### Configuration\n\nSet worker_connections to "
        "4096 in the events block.\n\n## Rollback\n\nRun the blue-green switch script to "
        "return traffic to the previous colour.\n"
    ),
    "docs/guide.rst": (
        "=====\nGuide\n=====\n\nIntro text.\n\nInstalling\n----------\n\nUse pipx to install "
        "the command line tool.\n\n.. code-block:: bash\n\n   pipx install widget\n"
    ),
    "src/app.py": "print('not docs')\n",
}


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Repo]:
    counter = iter(range(100))

    def make(files: dict[str, str | bytes | None] | None = None, **kwargs: object) -> Repo:
        repo = Repo(tmp_path / f"repo{next(counter)}", **kwargs)  # type: ignore[arg-type]
        if files is not None and not kwargs.get("bare"):
            repo.commit(files, "initial docs")
        return repo

    return make


@pytest.fixture
def docs_repo(make_repo: Callable[..., Repo]) -> Repo:
    return make_repo(dict(DOCS))


@pytest.fixture
def fake_config() -> Iterator[Config]:
    config = Config().replaced(embedding={"provider": "fake"})
    with fake_provider_registered():
        yield config


@pytest.fixture
def service(fake_config: Config) -> Iterator[RepoDocsService]:
    svc = RepoDocsService(fake_config, Registry())
    yield svc
    svc.close()


@pytest.fixture
def registered(service: RepoDocsService, docs_repo: Repo) -> Selector:
    service.register("acme/widget", docs_repo.path)
    return Selector(repo="acme/widget")
