"""Where repositories are and what git lets us read: refused repositories (issue 7 §1),
moved workspaces, vanished repositories and deepened shallow clones (issue 15 §2),
paths that are not UTF-8."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitquarry.history.search.engine import search_git_history

from .conftest import BASE_TIME, GitRepo, Indexer

CLI = Callable[..., tuple[int, str, str]]
DAY = 86_400


@pytest.fixture
def env_restore() -> Iterator[None]:
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _make_foreign(repo: GitRepo) -> None:
    """Make git see ``repo`` as owned by another user: really (as root) or through git's
    own test switch (otherwise)."""
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "65534", str(repo.path)], check=True)
    else:
        os.environ["GIT_TEST_ASSUME_DIFFERENT_OWNER"] = "1"


def test_dubious_ownership_is_reported_with_the_remedy(
    make_repo: Callable[..., GitRepo], workspace: Path, cli: CLI, env_restore: None
) -> None:
    theirs = make_repo("theirs")
    theirs.commit({"a.txt": "a\n"}, "their commit")
    if os.geteuid() == 0:
        mine = make_repo("mine")
        mine.commit({"a.txt": "a\n"}, "my commit")
    _make_foreign(theirs)
    code, out, err = cli("index", str(workspace), "--no-embed")
    assert code == 0, err
    assert "no Git repositories found" not in err
    assert "dubious ownership" in err and "safe.directory" in err
    assert str(theirs.path) in err and "[repository_not_trusted]" in err
    assert "git config --global --add safe.directory" in err
    code, out, _ = cli("status", "--project", str(workspace), "--json")
    skipped = json.loads(out)["skipped"]
    assert [(s["path"], s["code"]) for s in skipped] == [
        (str(theirs.path), "repository_not_trusted")
    ]
    code, out, _ = cli("status", "--project", str(workspace))
    assert "repository_not_trusted" in out and "Skipped: 1" in out


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_safe_directory_from_a_harness_is_honoured(
    make_repo: Callable[..., GitRepo], indexer: Indexer, env_restore: None
) -> None:
    theirs = make_repo("theirs")
    commit = theirs.commit({"a.txt": "a\n"}, "their commit")
    _make_foreign(theirs)
    os.environ.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="safe.directory",
                      GIT_CONFIG_VALUE_0=str(theirs.path))
    report = indexer.run()
    assert report.skipped == [] and indexer.hashes() == [commit]


def test_unreadable_repository_is_skipped_not_dropped(
    make_repo: Callable[..., GitRepo], workspace: Path, cli: CLI
) -> None:
    odd = make_repo("future")
    odd.commit({"a.txt": "a\n"}, "from the future")
    odd.git("config", "core.repositoryformatversion", "99")
    ok = make_repo("ok")
    ok.commit({"a.txt": "a\n"}, "fine")
    _, out, _ = cli("index", str(workspace), "--no-embed", "--json")
    data = json.loads(out)
    assert [s["code"] for s in data["skipped"]] == ["repository_unreadable"]
    assert data["total_commits"] == 1


def test_moved_workspace_keeps_one_repository_and_prunes_a_deleted_branch(
    tmp_path: Path, cli: CLI
) -> None:
    old_ws = tmp_path / "old" / "ws"
    repo = GitRepo(old_ws / "project")
    repo.commit({"a.txt": "a\n"}, "mainline work", BASE_TIME)
    repo.branch("topic")
    gone = repo.commit({"t.txt": "t\n"}, "topic work to be deleted", BASE_TIME + 60)
    repo.checkout("main")
    code, _, err = cli("index", str(old_ws), "--no-embed", "-q")
    assert code == 0, err
    new_ws = tmp_path / "new" / "ws"
    new_ws.parent.mkdir(parents=True)
    shutil.move(str(old_ws), str(new_ws))
    moved = GitRepo(new_ws / "project", init=False)
    moved.git("branch", "-D", "topic")
    moved.git("reflog", "expire", "--expire=now", "--all")
    moved.git("gc", "-q", "--prune=now")
    code, out, err = cli("index", str(new_ws), "--no-embed")
    assert code == 0, err
    assert f"Moved: {old_ws / 'project'} is now {new_ws / 'project'}" in out
    code, out, _ = cli("status", "--project", str(new_ws), "--json")
    repos = json.loads(out)["repositories"]
    assert [r["path"] for r in repos] == [str(new_ws / "project")]
    assert repos[0]["commits"] == 1
    code, out, _ = cli("history", "topic", "--project", str(new_ws), "--mode", "lexical",
                       "--json")
    assert gone not in [r["hash"] for r in json.loads(out)["results"]]


def test_same_repository_at_a_new_path_replaces_the_old_row(
    tmp_path: Path, indexer: Indexer, cli: CLI
) -> None:
    """`mv ws/a ws/b` inside one workspace: one repository in status, commits kept."""
    repo = GitRepo(indexer.root / "a")
    commit = repo.commit({"a.txt": "a\n"}, "work")
    indexer.run()
    shutil.move(str(indexer.root / "a"), str(indexer.root / "b"))
    code, out, err = cli("index", str(indexer.root), "--no-embed")
    assert code == 0, err
    assert f"Removed {indexer.root / 'a'}: its git directory no longer exists" in out
    code, out, _ = cli("status", "--project", str(indexer.root), "--json")
    assert [r["path"] for r in json.loads(out)["repositories"]] == [str(indexer.root / "b")]
    assert indexer.hashes() == [commit]


def test_vanished_repository_is_counted_in_the_summary(
    make_repo: Callable[..., GitRepo], workspace: Path, cli: CLI
) -> None:
    keep = make_repo("keep")
    keep.commit({"a.txt": "a\n"}, "kept")
    lost = make_repo("lost")
    for n in range(3):
        lost.commit({"a.txt": f"{n}\n"}, f"lost {n}")
    cli("index", str(workspace), "--no-embed", "-q")
    code, out, _ = cli("status", "--project", str(workspace), "--json")
    assert all(r["exists"] for r in json.loads(out)["repositories"])
    shutil.rmtree(lost.path)
    code, out, _ = cli("status", "--project", str(workspace))
    assert "its git directory no longer exists" in out
    code, out, err = cli("index", str(workspace), "--no-embed")
    assert code == 0, err
    assert "pruned 3 (3 from 1 removed repository)" in out
    assert f"Removed {lost.path}: its git directory no longer exists; 3 commits dropped." in out
    code, out, err = cli("index", str(workspace), "--no-embed", "--json")
    assert json.loads(out)["pruned_commits"] == 0


# --- shallow clones deepened (issue 15 §2) ----------------------------------------------------


def _clone(source: GitRepo, target: Path, *args: str) -> GitRepo:
    subprocess.run(["git", "clone", "-q", *args, f"file://{source.path}", str(target)],
                   check=True, capture_output=True)
    return GitRepo(target, init=False)


def _fetch(clone: GitRepo, *args: str) -> None:
    subprocess.run(["git", "fetch", "-q", *args], cwd=clone.path, check=True,
                   capture_output=True)


@pytest.mark.parametrize("how", [("--unshallow",), ("--deepen=1",),
                                 ("--shallow-since=2024-01-02",)])
def test_deepened_clone_indexes_the_newly_reachable_history(
    how: tuple[str, ...], tmp_path: Path, indexer: Indexer
) -> None:
    source = GitRepo(tmp_path / "source")
    hashes = [
        source.commit({"f.txt": f"{n}\n", f"only{n}.txt": "x\n"}, f"commit {n}",
                      BASE_TIME + n * DAY)
        for n in range(4)
    ]
    clone = _clone(source, indexer.root / "clone", "--depth", "1")
    indexer.run()
    assert indexer.hashes() == [hashes[3]]
    assert indexer.row(hashes[3])["parents"] == "" and indexer.row(hashes[3])["complete"] == 0
    _fetch(clone, *how)
    report = indexer.run()
    (rep,) = report.repositories
    assert rep.reconcile_reason == "shallow_changed"
    reachable = set(clone.git("rev-list", "--all").split())
    assert set(indexer.hashes()) == reachable and len(reachable) > 1
    row = indexer.row(hashes[3])
    assert row["parents"] == hashes[2] and row["complete"] == 1
    assert json.loads(row["files_changed"]) == ["f.txt", "only3.txt"]
    assert "only3.txt" in row["delta_truncated"] and "only2.txt" not in row["delta_truncated"]
    assert indexer.run().up_to_date


def test_unshallow_through_the_cli_says_why(
    tmp_path: Path, indexer: Indexer, cli: CLI
) -> None:
    source = GitRepo(tmp_path / "source")
    for n in range(3):
        source.commit({"f.txt": f"{n}\n"}, f"commit {n}")
    clone = _clone(source, indexer.root / "clone", "--depth", "1")
    cli("index", str(indexer.root), "--no-embed", "-q")
    _fetch(clone, "--unshallow")
    code, out, err = cli("index", str(indexer.root), "--no-embed")
    assert code == 0, err
    assert "the clone's depth changed" in err and "Indexed 2 new commits" in out
    with indexer.open() as store:
        assert len(search_git_history(store, "commit", mode="lexical", top_n=10).results) == 3


# --- paths that are not UTF-8 -----------------------------------------------------------------


def test_repository_in_a_non_utf8_directory(
    workspace: Path, cli: CLI, indexer: Indexer
) -> None:
    name = os.fsdecode(b"caf\xe9")
    repo = GitRepo(workspace / name)
    commit = repo.commit({"a.txt": "a\n"}, "latin directory")
    code, out, err = cli("index", str(workspace), "--no-embed", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["repositories"][0]["path"].endswith("caf\\xe9")
    assert indexer.hashes() == [commit]
    code, out, err = cli("status", "--project", str(workspace), "--json")
    assert code == 0 and json.loads(out)["repositories"][0]["exists"] is True
    code, out, err = cli("history", "latin", "--project", str(workspace), "--mode", "lexical",
                         "--json")
    assert json.loads(out)["results"][0]["repo_path"].endswith("caf\\xe9")
    assert indexer.run().up_to_date
