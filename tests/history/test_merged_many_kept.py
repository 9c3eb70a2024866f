"""The merge fold keeps, per process, git's answer for a merge that brought in more than
``MAX_MERGED`` commits ("many", fixed by the hashes) as it keeps the lists: a warm process
asked git for those merges on every query (2.8 git processes per MCP hybrid call on
pallets/click). The answer is the same kept or asked; a merge git cannot answer (a parent
missing) is still asked again."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitquarry.gitio import ancestry
from gitquarry.history.search import candidate_stream
from gitquarry.history.search.candidate_stream import MAX_MERGED, _merged

from .conftest import GitRepo


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The real ``git rev-list`` calls the fold makes (git runs; each call is recorded)."""
    calls: list[tuple[str, ...]] = []
    real = ancestry.run_git

    def run_git(git_dir, args, **kw):  # type: ignore[no-untyped-def]
        calls.append(tuple(args))
        return real(git_dir, args, **kw)

    monkeypatch.setattr(ancestry, "run_git", run_git)
    monkeypatch.setattr(candidate_stream, "_BROUGHT", candidate_stream.OrderedDict())
    return calls


def _repo(tmp_path: Path, side: int) -> tuple[GitRepo, list[str]]:
    repo = GitRepo(tmp_path / f"r{side}")
    repo.commit({"a": "0"}, message="root")
    repo.branch("side")
    repo.checkout("side")
    for i in range(side):
        repo.commit({f"s{i}": str(i)}, message=f"side {i}")
    repo.checkout("main")
    repo.commit({"m": "1"}, message="main moves on")
    repo.merge("side", message="merge side")
    return repo, repo.git("rev-parse", "HEAD^1", "HEAD^2").split()


def test_many_is_kept_and_equals_git(tmp_path: Path, counted: list[tuple[str, ...]]) -> None:
    repo, parents = _repo(tmp_path, MAX_MERGED + 3)
    git_dir = repo.path / ".git"
    assert ancestry.merged_commits(git_dir, parents, limit=MAX_MERGED) is None  # git: many
    assert ancestry.merged_or_many(git_dir, parents, limit=MAX_MERGED) == ancestry.MANY
    counted.clear()
    assert _merged(git_dir, tuple(parents)) is None
    assert len(counted) == 1
    for _ in range(3):
        assert _merged(git_dir, tuple(parents)) is None
    assert len(counted) == 1  # kept: no more git processes


def test_lists_are_kept_and_equal_git(tmp_path: Path, counted: list[tuple[str, ...]]) -> None:
    repo, parents = _repo(tmp_path, 3)
    git_dir = repo.path / ".git"
    want = repo.git("rev-list", parents[1], f"^{parents[0]}").split()
    assert _merged(git_dir, tuple(parents)) == want
    assert _merged(git_dir, tuple(parents)) == want
    assert len(counted) == 1


def test_a_merge_git_cannot_answer_is_asked_again(tmp_path: Path,
                                                  counted: list[tuple[str, ...]]) -> None:
    repo, parents = _repo(tmp_path, 2)
    missing = (parents[0], "0" * 40)  # a parent this repository does not have
    assert _merged(repo.path / ".git", missing) is None
    assert _merged(repo.path / ".git", missing) is None
    assert len(counted) == 2
