"""Commits that git need not diff twice (``stream_batches(diff_keys=…)``) read exactly as when
git diffs every one of them, commit for commit and index row for index row.

The repository made here has several commits whose (first-parent tree, tree) pair an earlier
commit of the same run has, so their files, diff and patch-id are copied rather than
computed: ``--no-ff`` merges of one-commit branches (one with a rename, a binary file, a mode
change, a path in invalid UTF-8 and a diff longer than ``delta_max_lines``; one touching 300
files), a revert of a revert, two empty commits in a row, an orphan root commit with the
tree of the first root, and a one-commit branch whose blob is then removed from the object
store (its merge is read degraded, so the branch commit that would copy it is read by git).
The reference is the same reader without ``diff_keys`` (every commit diffed by git) and the
old reader frozen in ``reference_log``; the index is compared with ``index_rows``.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from gitquarry.gitio import log as gitlog
from gitquarry.gitio.refs import diff_keys, rev_list, rev_list_trees

from . import reference_log
from .conftest import BASE_TIME, GitRepo, Indexer
from .test_stream_reference import _reference_index

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from index_rows import digests, rows

DAY = 86_400


def _build(repo: GitRepo) -> None:
    t = BASE_TIME
    repo.git("config", "gc.auto", "0")
    repo.commit({"README": "root\n", "src/core.py": "def coreFunction():\n    return 1\n",
                 "long.txt": "".join(f"row {n} someCamelCase\n" for n in range(80))},
                "Root", t)
    # a one-commit branch merged --no-ff while main stands still: rename, binary, mode,
    # an invalid-UTF-8 path, a long diff
    repo.branch("one")
    repo.git("mv", "src/core.py", "src/core_module.py")
    (repo.path / "long.txt").chmod(0o755)
    repo.write({
        "bin/logo.png": bytes(range(256)) * 4 + b"\x00binary",
        os.fsdecode(b"caf\xe9.txt"): "latin-1 name\n",
        "long.txt": "".join(f"row {n} otherCamelCase\n" for n in range(80)),
    })
    repo.commit(None, "Rename, binary, mode, long diff", t + DAY)
    repo.checkout("main")
    repo.merge("one", message="Merge branch 'one'", date=t + 2 * DAY)
    # a big one-commit branch
    repo.branch("big")
    repo.commit({f"pkg/m{n:03}.py": f"VALUE_{n} = {n}\n" for n in range(300)},
                "Add 300 modules", t + 3 * DAY)
    repo.checkout("main")
    repo.merge("big", message="Merge branch 'big'", date=t + 4 * DAY)
    # a revert of a revert has the pair of the reverted commit
    repo.commit({"feature.txt": "feature on\n"}, "Feature", t + 5 * DAY)
    repo.git("revert", "--no-edit", "HEAD", env=repo.env(t + 6 * DAY))
    repo.git("revert", "--no-edit", "HEAD", env=repo.env(t + 7 * DAY))
    # two empty commits in a row share (T, T)
    repo.git("commit", "-q", "--allow-empty", "-m", "empty one", env=repo.env(t + 8 * DAY))
    repo.git("commit", "-q", "--allow-empty", "-m", "empty two", env=repo.env(t + 9 * DAY))
    # a main that moved: not derivable (the control)
    repo.branch("topic")
    repo.commit({"topic.txt": "topic\n"}, "Topic work", t + 10 * DAY)
    repo.checkout("main")
    repo.commit({"main.txt": "main\n"}, "Main moves", t + 11 * DAY)
    repo.merge("topic", message="Merge branch 'topic'", date=t + 12 * DAY)
    # a one-commit branch whose blob vanishes: the merge fails in git and is read degraded
    repo.branch("lost")
    lost = repo.commit({"lost.txt": "this blob will vanish\n"}, "Add lost file", t + 13 * DAY)
    repo.checkout("main")
    repo.merge("lost", message="Merge branch 'lost'", date=t + 14 * DAY)
    repo.commit({"after.txt": "after\n"}, "After", t + 15 * DAY)
    blob = repo.git("rev-parse", f"{lost}:lost.txt")
    # an orphan root with the first root's tree
    root = repo.git("rev-list", "--max-parents=0", "main").split()[0]
    orphan = repo.git("commit-tree", "-m", "Orphan root", f"{root}^{{tree}}",
                      env=repo.env(t + 16 * DAY))
    repo.git("branch", "orphan", orphan)
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, GitRepo]:
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "repo")
    _build(repo)
    return ws, repo


def _keys(repo: GitRepo) -> tuple[list[str], dict[str, tuple[str, str]]]:
    tips = repo.git("for-each-ref", "--format=%(objectname)", "refs/heads").split()
    hashes, trees = rev_list_trees(repo.path / ".git", sorted(set(tips)), [])
    return hashes, diff_keys(trees)


def _read(git_dir: Path, hashes: list[str], size: int, max_lines: int, *, patch_ids: bool,
          keys: dict[str, tuple[str, str]] | None) -> list[dict[str, object]]:
    batches = [hashes[i : i + size] for i in range(0, len(hashes), size)]
    got = list(gitlog.stream_batches(git_dir, batches, delta_max_lines=max_lines,
                                     patch_ids=patch_ids, diff_keys=keys))
    assert [len(b) for b in got] == [len(b) for b in batches]
    return [dataclasses.asdict(c) for b in got for c in b]


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize("max_lines", [5, 200])
@pytest.mark.parametrize("patch_ids", [True, False])
def test_copied_diffs_equal_what_git_prints(
    history: tuple[Path, GitRepo], size: int, max_lines: int, patch_ids: bool
) -> None:
    _, repo = history
    git_dir = repo.path / ".git"
    hashes, keys = _keys(repo)
    copied = gitlog._diff_sources(hashes, keys)
    # what the module docstring says is there: else the comparison proves less
    assert len(copied) >= 6, copied
    got = _read(git_dir, hashes, size, max_lines, patch_ids=patch_ids, keys=keys)
    want = _read(git_dir, hashes, size, max_lines, patch_ids=patch_ids, keys=None)
    assert got == want
    old = [dataclasses.asdict(c) for c in reference_log.stream_commits(
        git_dir, hashes, delta_max_lines=max_lines, patch_ids=patch_ids)]
    assert got == old
    shown = [want[n] for n in copied]
    assert any(c["delta_missing"] for c in want)
    assert any("Binary files" in str(c["delta"]) for c in shown)
    assert any("lines omitted" in str(c["delta"]) for c in shown)
    assert any("path" in c["decode_errors"] for c in shown)  # type: ignore[operator]
    assert any(c["files_total"] == 300 for c in shown)
    assert any(c["delta"] == "" for c in shown)
    if patch_ids:
        assert any(c["patch_id"] for c in shown)


def test_rev_list_trees_lists_what_rev_list_lists(history: tuple[Path, GitRepo]) -> None:
    _, repo = history
    git_dir = repo.path / ".git"
    tips = sorted(set(repo.git("for-each-ref", "--format=%(objectname)", "refs/heads").split()))
    hashes, trees = rev_list_trees(git_dir, tips, [tips[0]])
    assert hashes == rev_list(git_dir, tips, [tips[0]])
    assert set(trees) == set(hashes)
    for commit in hashes:
        parent, tree = trees[commit]
        assert tree == repo.tree(commit)
        assert parent == (repo.git("rev-parse", f"{commit}^") if repo.git(
            "rev-list", "--parents", "-1", commit).count(" ") else "")
    assert rev_list_trees(git_dir, [], []) == ([], {})


def test_a_key_that_ignores_the_parent_tree_is_caught(history: tuple[Path, GitRepo]) -> None:
    """The comparison above can fail: keys on the commit's tree alone pair the revert with
    the commit before the reverted one, and the copied diffs are wrong."""
    _, repo = history
    git_dir = repo.path / ".git"
    hashes, keys = _keys(repo)
    wrong = {h: ("", tree) for h, (_parent, tree) in keys.items()}
    assert (_read(git_dir, hashes, 1000, 200, patch_ids=True, keys=wrong)
            != _read(git_dir, hashes, 1000, 200, patch_ids=True, keys=None))


@pytest.mark.parametrize("batch_size", [1, 2000])
def test_index_rows_equal_the_reference(
    history: tuple[Path, GitRepo], batch_size: int, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws, repo = history
    indexer = Indexer(ws)
    report = indexer.run(batch_size=batch_size)
    assert report.repositories[0].missing_object_commits == 2  # the lost merge and commit
    fast = rows(sqlite3.connect(indexer.db_path))
    indexer.db_path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(indexer.db_path) + suffix).unlink(missing_ok=True)
    slow = _reference_index(ws, indexer.db_path, batch_size, monkeypatch, tmp_path)
    assert len(fast["git_commits"]) == len(repo.all_hashes())
    for table in slow:
        assert fast[table] == slow[table], table
    assert digests(fast) == digests(slow)
