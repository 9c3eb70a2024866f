"""Fixtures for the repository-docs tests: real git repositories, a private registry and
state dir, real ``repo_docs.db`` files. The fake embedder is used through the real provider
registry; the real model only in tests marked ``slow``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gitquarry.config import Config
from gitquarry.embedding.fake import fake_provider_registered
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Registry, Selector
from testkit import BASE_TIME, FileContent, GitRepo, isolate_user

__all__ = ["BASE_TIME", "Repo"]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory,
                 monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_user(tmp_path_factory.mktemp("home"), monkeypatch, name="Ada",
                        user_config=None, state=True)


class Repo(GitRepo):
    """The shared builder as these tests use it: the user's own identity, ``commit(files,
    message="docs")``."""

    def __init__(self, path: Path, *, object_format: str | None = None,
                 bare: bool = False) -> None:
        super().__init__(path, object_format=object_format, bare=bare, identity=False)

    def commit(self, files: dict[str, FileContent] | str | None = None,  # type: ignore[override]
               message: str | dict[str, FileContent] | None = "docs", **kwargs: Any) -> str:
        return super().commit(files, message, **kwargs)


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
