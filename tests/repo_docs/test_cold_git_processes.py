"""Issue 21 target 5: a cold docs query starts three git processes (the discovering
``rev-parse``, ``cat-file --batch``, ``ls-tree``), not five. The two it no longer starts are
proven against what they answered: ``rev-parse --absolute-git-dir`` (the git dir of the work
tree searched) and the ``--batch-check`` name resolver (the commit ``HEAD`` names)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.gitio.catfile import BlobReader
from gitquarry.gitio.discovery import inspect_repository
from gitquarry.gitio.worktree import own_git_dir
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Selector
from gitquarry.repo_docs.revision import git_dir_of

from .conftest import DOCS, Repo


def _rev_parse_head(path: Path) -> str | None:
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", "--end-of-options",
                           "HEAD^{commit}"], cwd=path, capture_output=True, text=True,
                          check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def test_head_is_answered_by_the_blob_process(make_repo: Callable[..., Repo]) -> None:
    """HEAD on a branch, detached, on an annotated tag, unborn, and pointing at a branch that
    does not exist: what ``rev-parse`` says, and no name resolver process for it."""
    repo = make_repo(dict(DOCS))
    first = repo.git("rev-parse", "HEAD")
    repo.commit({"docs/x.md": "# x\n"})
    repo.git("tag", "-a", "-m", "v1", "v1", first)
    states: list[Callable[[], object]] = [
        lambda: None,
        lambda: repo.git("checkout", "-q", "--detach", first),
        lambda: repo.git("checkout", "-q", "v1"),
        lambda: repo.git("symbolic-ref", "HEAD", "refs/heads/nosuch"),
    ]
    for change in states:
        change()
        with BlobReader(repo.path / ".git") as reader:
            pid = reader._proc.pid if reader._proc else None
            assert reader.commit_of("HEAD") == _rev_parse_head(repo.path)
            assert reader._proc is not None and reader._proc.pid == pid  # still alive
            if _rev_parse_head(repo.path) is not None:
                assert reader._names._proc is None  # no --batch-check process started
    empty = make_repo()  # unborn HEAD, no objects at all
    with BlobReader(empty.path / ".git") as reader:
        assert reader.commit_of("HEAD") is None
        assert _rev_parse_head(empty.path) is None


def test_git_dir_of_is_what_absolute_git_dir_says(make_repo: Callable[..., Repo],
                                                  service: RepoDocsService,
                                                  tmp_path: Path) -> None:
    """The git dir taken from the discovering ``rev-parse`` equals the old formula
    (``rev-parse --absolute-git-dir`` there, else the common dir) for a work tree, a sub
    directory of it, a path through a symlink, a linked worktree and a bare repository."""
    repo = make_repo(dict(DOCS))
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(linked))
    (tmp_path / "via-link").symlink_to(repo.path)
    bare = make_repo(bare=True)
    paths = [repo.path, repo.path / "docs", tmp_path / "via-link", linked, bare.path]
    for i, path in enumerate(paths):
        found = inspect_repository(path)
        old = own_git_dir(path) or found.git_dir
        service.register(f"acme/p{i}", path)
        binding = service.registry.resolve(Selector(repo=f"acme/p{i}"))
        new, fmt = git_dir_of(binding)
        assert new == old, path
        assert fmt == found.object_format
    assert git_dir_of(service.registry.resolve(Selector(repo="acme/p3")))[0] == \
        repo.path / ".git" / "worktrees" / "linked"


@pytest.mark.parametrize("revision", [None, "HEAD~0"])
def test_a_cold_cli_query_starts_three_git_processes(docs_repo: Repo, tmp_path: Path,
                                                     revision: str | None) -> None:
    trace = tmp_path / "trace.txt"
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"),
               GITQUARRY_CONFIG="/dev/null", GITQUARRY_FAST="local")
    cli = [sys.executable, "-m", "gitquarry", "repo-docs"]
    subprocess.run([*cli, "register", "--repo", "acme/widget", "--repository-path",
                    str(docs_repo.path)], env=env, check=True, capture_output=True)
    extra = ["--revision", revision] if revision else []
    proc = subprocess.run([*cli, "search", "gunicorn", "--repo", "acme/widget", "--mode",
                           "fulltext", "--json", *extra], env=dict(env, GIT_TRACE=str(trace)),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert '"docs/deploy.md"' in proc.stdout
    started = [line.split("built-in: ", 1)[1] for line in trace.read_text().splitlines()
               if "built-in: " in line]
    commands = [" ".join(s.split()[1:3]) for s in started]
    if revision is None:
        assert commands == ["rev-parse --path-format=absolute", "cat-file --batch",
                            "ls-tree -r"], started
    else:  # any other name still goes to the name resolver
        assert "cat-file --batch-check" in commands and len(commands) == 4, started
