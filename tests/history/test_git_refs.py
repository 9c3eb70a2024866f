"""Issue 7 §2 and §8 (first bullet): every commit `git rev-list --branches --remotes --tags`
lists is indexed, whatever the refs look like; broken refs cost only themselves.

The reference is always git itself, run with ``--no-replace-objects`` (gitquarry's rule:
replace refs and grafts are ignored, commits are indexed as stored).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.history.search.engine import search_git_history

from .conftest import BASE_TIME, FastCommit, GitRepo, Indexer

CLI = Callable[..., tuple[int, str, str]]


def git_reference(repo: GitRepo) -> set[str]:
    """What must be indexed: ``git rev-list --branches --remotes --tags`` as stored."""
    out = repo.git("--no-replace-objects", "rev-list", "--branches", "--remotes", "--tags")
    return set(out.split())


def _odd_repository(repo: GitRepo) -> None:
    """Refs of every shape git allows, each reaching commits no other ref reaches."""
    base = repo.commit({"a.txt": "a\n"}, "base", BASE_TIME)
    # annotated tag, nested tag (tag of a tag), tag on a tree, tag on a blob
    repo.branch("t1")
    repo.commit({"t1.txt": "t\n"}, "only under an annotated tag")
    repo.git("tag", "-a", "ann", "-m", "annotated")
    repo.git("tag", "-a", "nested", "-m", "tag of a tag", "ann")
    repo.git("tag", "-a", "nested2", "-m", "tag of a tag of a tag", "nested")
    repo.checkout("main")
    repo.git("branch", "-D", "t1")
    repo.branch("t2")
    repo.commit({"t2.txt": "t\n"}, "only under a nested tag")
    repo.git("tag", "-a", "inner", "-m", "inner")
    repo.git("tag", "-a", "outer", "-m", "outer", "inner")
    repo.git("tag", "-d", "inner")
    repo.checkout("main")
    repo.git("branch", "-D", "t2")
    repo.git("tag", "treetag", f"{base}^{{tree}}")
    blob = repo.git("hash-object", "-w", "--stdin", input_bytes=b"a blob\n")
    repo.git("tag", "-a", "blobtag", "-m", "a blob", blob)
    # symbolic refs: to a branch, and dangling
    repo.git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
    repo.git("symbolic-ref", "refs/heads/dangling", "refs/heads/nothing-here")
    # refs differing only in case
    for name in ("Feature", "feature", "FEATURE"):
        repo.branch(name, base)
        repo.commit({f"{name}.txt": "x\n"}, f"case {name}")
    repo.checkout("main")
    # a very long name (over a filesystem name component: packed)
    long_name = "refs/heads/" + "/".join(["deep" * 50] * 8)
    c = repo.commit({"long.txt": "l\n"}, "under a very long ref name")
    repo.git("update-ref", "--no-deref", long_name, c)
    repo.git("reset", "-q", "--hard", base)
    # remote-tracking refs, remote HEAD symref, notes and stash (not indexed by git either)
    r = repo.commit({"r.txt": "r\n"}, "only on a remote-tracking ref")
    repo.git("update-ref", "refs/remotes/origin/topic", r)
    repo.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/topic")
    repo.git("reset", "-q", "--hard", base)
    n = repo.commit({"n.txt": "n\n"}, "only under refs/notes")
    repo.git("update-ref", "refs/notes/commits", n)
    repo.git("reset", "-q", "--hard", base)
    # non-UTF-8 and non-ASCII names
    u = repo.commit({"u.txt": "u\n"}, "under a non-UTF-8 ref name")
    repo.git("update-ref", os.fsdecode(b"refs/heads/caf\xe9"), u)
    repo.git("update-ref", "refs/tags/v1.0-κ", u)
    repo.git("reset", "-q", "--hard", base)
    # 10,000 refs: tags on 100 distinct commits (packed)
    commits = [FastCommit({"bulk.txt": f"{i}\n"}, f"bulk {i}") for i in range(100)]
    repo.fast_import(commits, ref="refs/heads/bulk")
    bulk = repo.git("rev-list", "refs/heads/bulk").split()
    lines = "".join(
        f"create refs/tags/bulk/{i:05d} {bulk[i % len(bulk)]}\n" for i in range(10_000)
    )
    repo.git("update-ref", "--stdin", input_bytes=lines.encode())
    repo.git("branch", "-D", "bulk")
    repo.git("pack-refs", "--all")


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_odd_refs_index_exactly_what_git_lists(
    make_repo: Callable[..., GitRepo], indexer: Indexer
) -> None:
    repo = make_repo()
    _odd_repository(repo)
    expected = git_reference(repo)
    report = indexer.run()
    assert not report.failed, report.failed[0].error
    assert set(indexer.hashes()) == expected
    (rep,) = report.repositories
    assert rep.problems == []
    # a second run is a no-op, and the stored refs round-trip exactly (bytes)
    again = indexer.run()
    assert again.up_to_date, again.repositories[0]
    with indexer.open() as store:
        refs = {bytes(r[0]) for r in store.conn.execute("SELECT ref FROM repo_refs")}
    assert b"refs/heads/caf\xe9" in refs
    assert "refs/tags/v1.0-κ".encode() in refs
    assert {b"refs/heads/Feature", b"refs/heads/feature", b"refs/heads/FEATURE"} <= refs
    assert b"refs/notes/commits" not in refs
    assert len([r for r in refs if r.startswith(b"refs/tags/bulk/")]) == 10_000


def test_non_utf8_ref_in_one_of_three_repositories(
    make_repo: Callable[..., GitRepo], workspace: Path, cli: CLI
) -> None:
    repos = [make_repo(name) for name in ("a", "b", "c")]
    for n, repo in enumerate(repos):
        repo.commit({"f.txt": f"{n}\n"}, f"commit in {n}")
    repos[1].git("update-ref", os.fsdecode(b"refs/heads/caf\xe9"), "HEAD")
    repos[1].commit({"g.txt": "g\n"}, "second")
    for _ in range(2):  # and every rerun
        code, out, err = cli("index", str(workspace), "--no-embed", "--json")
        assert code == 0, err
        data = json.loads(out)
        assert "internal error" not in err
        assert [r["error"] for r in data["repositories"]] == [None, None, None]
    assert data["total_commits"] == 4
    code, out, _ = cli("status", "--project", str(workspace), "--json")
    assert [r["refs"] for r in json.loads(out)["repositories"]] == [1, 2, 1]


def test_replace_refs_are_ignored_in_both_orders(
    make_repo: Callable[..., GitRepo], tmp_path: Path
) -> None:
    """`git replace HEAD <fixed>`: the stored text is the commit as stored, whether the
    replace ref existed before the first index or appeared between two runs."""
    def build(name: str) -> tuple[GitRepo, str, str]:
        repo = make_repo(name)
        repo.commit({"a.txt": "a\n"}, "first", BASE_TIME)
        head = repo.commit({"a.txt": "b\n"}, "typo in mesage", BASE_TIME + 60)
        repo.git("commit", "-q", "--amend", "-m", "corrected message", env=repo.env(BASE_TIME))
        fixed = repo.head()
        repo.git("reset", "-q", "--hard", head)
        return repo, head, fixed

    ws1, ws2 = tmp_path / "one", tmp_path / "two"
    before, head1, fixed1 = build(str(ws1 / "r"))
    first = Indexer(ws1)
    first.run()
    before.git("replace", head1, fixed1)
    report = first.run()
    assert report.repositories[0].replace_refs == 1

    after, head2, fixed2 = build(str(ws2 / "r"))
    after.git("replace", head2, fixed2)
    second = Indexer(ws2)
    second.run()
    for idx, head, repo in ((first, head1, before), (second, head2, after)):
        assert idx.row(head)["title"] == "typo in mesage"
        assert set(idx.hashes()) == git_reference(repo)
    assert set(first.hashes()) == set(second.hashes())


def test_grafts_file_is_ignored(make_repo: Callable[..., GitRepo], indexer: Indexer) -> None:
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "one")
    parent = repo.commit({"a.txt": "b\n"}, "two")
    head = repo.commit({"a.txt": "c\n"}, "three")
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "grafts").write_text(head + "\n")
    indexer.run()
    assert len(indexer.hashes()) == 3
    assert indexer.row(head)["parents"] == parent


# --- broken refs (issue 7 §8) ----------------------------------------------------------------

_NO_OBJECT = "1234567890abcdef1234567890abcdef12345678"


def _delete_object(repo: GitRepo, oid: str) -> None:
    path = repo.path / ".git" / "objects" / oid[:2] / oid[2:]
    path.chmod(0o644)
    path.unlink()


def test_ref_to_missing_object_costs_only_that_ref(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI
) -> None:
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "healthy one")
    repo.commit({"a.txt": "b\n"}, "healthy two")
    (repo.path / ".git" / "refs" / "heads" / "broken").write_text(_NO_OBJECT + "\n")
    code, out, err = cli("index", str(indexer.root), "--no-embed")
    assert code == 0, err
    assert len(indexer.hashes()) == 2
    assert err.count("refs/heads/broken") == 1 and "[ref_target_missing]" in err
    assert "rev-list" not in err and "--git-dir" not in err
    code, out, _ = cli("status", "--project", str(indexer.root), "--json")
    (status,) = json.loads(out)["repositories"]
    assert status["run_in_progress"] is False and status["error"] is None
    assert [(p["ref"], p["code"], p["object"]) for p in status["problems"]] == [
        ("refs/heads/broken", "ref_target_missing", _NO_OBJECT)
    ]
    with indexer.open() as store:
        warnings = search_git_history(store, "healthy", mode="lexical").warnings
    codes = [w.code for w in warnings]
    assert "indexing_incomplete" not in codes and "refs_incomplete" in codes
    assert not any("gitquarry index" in w.message for w in warnings if w.code != "empty_index")
    # the broken ref is repaired: the next run indexes it and forgets the problem
    (repo.path / ".git" / "refs" / "heads" / "broken").write_text(repo.head() + "\n")
    repo.git("update-ref", "refs/heads/broken", repo.commit({"c.txt": "c\n"}, "fixed"))
    report = indexer.run()
    assert report.repositories[0].problems == []
    assert set(indexer.hashes()) == git_reference(repo)


def test_missing_commit_on_a_side_branch(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI
) -> None:
    repo = make_repo()
    base = repo.commit({"a.txt": "a\n"}, "base")
    main_tip = repo.commit({"a.txt": "b\n"}, "main work")
    repo.branch("side", base)
    lost = repo.commit({"s.txt": "1\n"}, "side one (lost)")
    kept = repo.commit({"s.txt": "2\n"}, "side two")
    tip = repo.commit({"s.txt": "3\n"}, "side three")
    repo.checkout("main")
    _delete_object(repo, lost)
    code, out, err = cli("index", str(indexer.root), "--no-embed", "--json")
    assert code == 0, err
    data = json.loads(out)
    (rep,) = data["repositories"]
    assert rep["error"] is None
    assert [(p["ref"], p["code"], p["object"]) for p in rep["problems"]] == [
        ("refs/heads/side", "ref_history_incomplete", lost)
    ]
    assert set(indexer.hashes()) == {base, main_tip, kept, tip}
    # the repository is not stuck: a later healthy commit on main is indexed incrementally
    repo.commit({"a.txt": "c\n"}, "main later")
    code, out, err = cli("index", str(indexer.root), "--no-embed")
    assert code == 0 and err.count("refs/heads/side") == 1
    assert len(indexer.hashes()) == 5
    # deleting the broken branch prunes what only it reached
    repo.git("update-ref", "-d", "refs/heads/side")
    indexer.run()
    assert set(indexer.hashes()) == git_reference(repo)


def test_one_repository_failing_unexpectedly_does_not_stop_the_others(
    make_repo: Callable[..., GitRepo], workspace: Path, cli: CLI
) -> None:
    good = make_repo("a_good")
    good.commit({"a.txt": "a\n"}, "good commit")
    bad = make_repo("b_bad")
    bad.commit({"a.txt": "a\n"}, "bad commit")
    later = make_repo("c_later")
    later.commit({"a.txt": "a\n"}, "later commit")
    (bad.path / ".git" / "objects" / "pack").mkdir(exist_ok=True)
    # packed-refs that git cannot parse: for-each-ref fails for this repository only
    (bad.path / ".git" / "packed-refs").write_text("# pack-refs with: peeled\nnot a line\n")
    code, out, err = cli("index", str(workspace), "--no-embed", "--json")
    data = json.loads(out)
    assert code == 1
    errors = {Path(r["path"]).name: (r["error_code"], r["error"]) for r in data["repositories"]}
    assert errors["a_good"] == (None, None) and errors["c_later"] == (None, None)
    assert errors["b_bad"][0] == "git_failed"
    assert "--git-dir" not in errors["b_bad"][1] and len(errors["b_bad"][1]) < 300
    assert data["total_commits"] == 2
    code, out, err = cli("index", str(workspace), "--no-embed")
    assert err.count("Error:") == 1 and err.count("git for-each-ref failed") == 1, err
    assert "internal error" not in err


def test_missing_objects_never_make_a_traceback(
    make_repo: Callable[..., GitRepo], indexer: Indexer
) -> None:
    """Every object of a side branch's commit deleted, including its tree: still one
    problem, never an exception."""
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "base")
    repo.branch("side")
    gone = repo.commit({"s.txt": "s\n"}, "side")
    tree = repo.tree(gone)
    repo.checkout("main")
    for oid in (gone, tree):
        _delete_object(repo, oid)
    report = indexer.run()
    (rep,) = report.repositories
    assert rep.error is None
    assert [p.code for p in rep.problems] == ["ref_target_missing"]
    with sqlite3.connect(indexer.db_path) as conn:
        assert conn.execute("SELECT run_in_progress FROM repositories").fetchone()[0] == 0


@pytest.mark.parametrize("shape", ["loose", "packed"])
def test_broken_ref_shapes(shape: str, make_repo: Callable[..., GitRepo], indexer: Indexer) -> None:
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "healthy")
    if shape == "loose":
        (repo.path / ".git" / "refs" / "tags").mkdir(parents=True, exist_ok=True)
        (repo.path / ".git" / "refs" / "tags" / "gone").write_text(_NO_OBJECT + "\n")
    else:
        repo.git("pack-refs", "--all")
        with (repo.path / ".git" / "packed-refs").open("a") as fh:
            fh.write(f"{_NO_OBJECT} refs/tags/gone\n")
    report = indexer.run()
    (rep,) = report.repositories
    assert [(p.ref, p.code) for p in rep.problems] == [("refs/tags/gone", "ref_target_missing")]
    assert len(indexer.hashes()) == 1
