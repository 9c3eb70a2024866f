"""Incremental indexing: reachability, pruning, reconciliation, resumption, odd repositories."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from gitquarry.store import open_store

from .conftest import BASE_TIME, FastCommit, GitRepo, gitquarry_executable


def counts(indexer) -> tuple[int, int]:
    """(rows in git_commits, rows in repo_commits) read through a fresh connection."""
    with indexer.open() as store:
        commits = store.conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]
        members = store.conn.execute("SELECT count(*) FROM repo_commits").fetchone()[0]
    return commits, members


def test_first_index_stores_every_reachable_commit(make_repo, indexer):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    repo.branch("topic")
    repo.commit({"b.txt": "b\n"}, "topic work")
    repo.checkout("main")
    repo.commit({"c.txt": "c\n"}, "main work")
    repo.git("tag", "-a", "v1", "-m", "release")
    report = indexer.run()
    assert report.new_commits == 3 and report.total_commits == 3
    assert set(indexer.hashes()) == repo.all_hashes()
    row = indexer.row(repo.head("main"))
    assert row["title"] == "main work"
    assert row["author"] == "Ada Author <ada@example.com>"
    assert row["committer"] == "Cy Committer <cy@example.com>"
    assert json.loads(row["files_changed"]) == ["c.txt"]
    assert row["delta_truncated"] == repo.show(repo.head("main"))


def test_second_index_without_new_commits_does_no_work(make_repo, indexer):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    indexer.run()
    report = indexer.run()
    assert report.up_to_date
    (rep,) = report.repositories
    assert rep.up_to_date and rep.new_commits == 0 and rep.reused_commits == 0
    assert report.total_commits == 1


def test_new_commits_are_indexed_incrementally(make_repo, indexer):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    indexer.run()
    new = repo.commit({"a.txt": "b\n"}, "second")
    report = indexer.run()
    (rep,) = report.repositories
    assert rep.new_commits == 1 and not rep.full_reconcile and not rep.up_to_date
    assert new in indexer.hashes()


def test_older_dated_commit_on_new_branch_is_found(make_repo, indexer):
    repo = make_repo()
    base = repo.commit({"a.txt": "a\n"}, "first", BASE_TIME + 10_000)
    repo.commit({"a.txt": "b\n"}, "second", BASE_TIME + 20_000)
    indexer.run()
    repo.branch("old-work", base)
    old = repo.commit({"old.txt": "o\n"}, "backdated work", BASE_TIME - 86_400 * 365)
    report = indexer.run()
    assert report.repositories[0].new_commits == 1
    assert old in indexer.hashes()
    assert indexer.row(old)["timestamp"] == BASE_TIME - 86_400 * 365


def test_deleted_branch_is_pruned(make_repo, indexer):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    repo.branch("doomed")
    doomed = repo.commit({"d.txt": "d\n"}, "doomed work")
    repo.checkout("main")
    indexer.run()
    assert doomed in indexer.hashes()
    repo.git("branch", "-D", "doomed")
    report = indexer.run()
    assert report.repositories[0].pruned_commits == 1
    assert doomed not in indexer.hashes()
    assert set(indexer.hashes()) == repo.all_hashes()


def test_force_push_prunes_rewritten_commits(make_repo, indexer):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    rewritten = repo.commit({"a.txt": "b\n"}, "to be rewritten")
    indexer.run()
    repo.git("reset", "-q", "--hard", "HEAD~1")
    replacement = repo.commit({"a.txt": "c\n"}, "replacement")
    report = indexer.run()
    (rep,) = report.repositories
    assert not rep.full_reconcile
    assert rep.pruned_commits == 1 and rep.new_commits == 1
    hashes = indexer.hashes()
    assert rewritten not in hashes and replacement in hashes
    assert set(hashes) == repo.all_hashes()


def test_force_push_after_gc_takes_full_reconcile_path(make_repo, indexer):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    repo.branch("side")
    side = repo.commit({"s.txt": "s\n"}, "side work")
    repo.checkout("main")
    rewritten = repo.commit({"a.txt": "b\n"}, "to be rewritten")
    indexer.run()
    repo.git("reset", "-q", "--hard", "HEAD~1")
    replacement = repo.commit({"a.txt": "c\n"}, "replacement")
    repo.git("branch", "-D", "side")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.run("cat-file", "-e", rewritten, check=False).returncode != 0
    report = indexer.run()
    (rep,) = report.repositories
    assert rep.full_reconcile
    assert rep.pruned_commits == 2
    hashes = indexer.hashes()
    assert rewritten not in hashes and side not in hashes and replacement in hashes
    assert set(hashes) == repo.all_hashes()
    assert indexer.run().up_to_date


def test_notes_and_stash_are_not_indexed(make_repo, indexer):
    repo = make_repo()
    first = repo.commit({"a.txt": "a\n"}, "first")
    repo.git("notes", "add", "-m", "a note about first", first)
    repo.write({"a.txt": "work in progress\n"})
    repo.git("stash", "-q")
    notes_commit = repo.head("refs/notes/commits")
    stash_commit = repo.head("refs/stash")
    stash_index = repo.head("refs/stash^2")
    indexer.run()
    hashes = indexer.hashes()
    assert hashes == [first]
    assert notes_commit not in hashes and stash_commit not in hashes and stash_index not in hashes
    assert len(hashes) == repo.count("--branches", "--tags", "--remotes")
    # a second note changes refs/notes only: nothing to do
    repo.git("notes", "add", "-f", "-m", "another note", first)
    assert indexer.run().up_to_date


def test_missing_blob_indexes_everything_else(make_repo, indexer):
    repo = make_repo()
    repo.git("config", "gc.auto", "0")
    first = repo.commit({"keep.txt": "keep\n"}, "first")
    lost = repo.commit({"lost.txt": "vanishing blob\n"}, "add lost file")
    third = repo.commit({"keep.txt": "keep more\n"}, "third")
    blob = repo.git("rev-parse", f"{lost}:lost.txt")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    report = indexer.run()
    (rep,) = report.repositories
    assert rep.error is None
    assert rep.missing_object_commits == 1
    assert report.total_commits == 3
    lost_row = indexer.row(lost)
    assert "missing" in lost_row["delta_truncated"]
    assert json.loads(lost_row["files_changed"]) == ["lost.txt"]
    assert indexer.row(third)["delta_truncated"] == repo.show(third)
    assert "+keep" in indexer.row(first)["delta_truncated"]


def test_sha256_repository(make_repo, indexer):
    repo = make_repo(object_format="sha256")
    repo.commit({"a.txt": "a\n"}, "first")
    head = repo.commit({"a.txt": "b\n"}, "second")
    report = indexer.run()
    assert report.total_commits == 2
    assert all(len(h) == 64 for h in indexer.hashes())
    assert indexer.row(head)["delta_truncated"] == repo.show(head)
    with indexer.open() as store:
        (fmt,) = store.conn.execute("SELECT object_format FROM repositories").fetchone()
    assert fmt == "sha256"
    repo.commit({"a.txt": "c\n"}, "third")
    assert indexer.run().repositories[0].new_commits == 1


def test_worktree_and_main_checkout_indexed_once(make_repo, indexer, workspace):
    main = make_repo("main")
    main.commit({"a.txt": "a\n"}, "first")
    main.git("worktree", "add", "-q", "-b", "wt", str(workspace / "wt"))
    wt = GitRepo(workspace / "wt", init=False)
    wt.commit({"w.txt": "w\n"}, "worktree work")
    report = indexer.run()
    assert len(report.repositories) == 1
    assert report.total_commits == 2
    assert counts(indexer) == (2, 2)
    with indexer.open() as store:
        rows = store.conn.execute("SELECT common_dir, path FROM repositories").fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        (str((main.path / ".git").resolve()), str(main.path.resolve()))
    ]


def test_submodule_and_bare_repository_are_indexed(make_repo, indexer, tmp_path, workspace):
    upstream = GitRepo(tmp_path / "upstream")
    upstream.commit({"lib.txt": "lib\n"}, "library commit")
    sup = make_repo("super")
    sup.commit({"a": "a\n"}, "super commit")
    sup.git("-c", "protocol.file.allow=always", "submodule", "add", "-q",
            str(upstream.path), "sub")
    sup.commit(None, "add submodule")
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.path),
                    str(workspace / "bare.git")], check=True, capture_output=True)
    report = indexer.run()
    assert [r.error for r in report.repositories] == [None, None, None]
    assert len(report.repositories) == 3
    # the library commit is held by both the bare clone and the submodule, stored once
    assert report.total_commits == 3
    assert counts(indexer) == (3, 4)
    with indexer.open() as store:
        bare = store.conn.execute(
            "SELECT is_bare FROM repositories WHERE path = ?",
            (str((workspace / "bare.git").resolve()),),
        ).fetchone()
    assert bare[0] == 1


def test_repository_removed_from_workspace_is_forgotten(make_repo, indexer, workspace):
    import shutil

    make_repo("a").commit({"a": "a\n"}, "in a")
    make_repo("b").commit({"b": "b\n"}, "in b")
    assert indexer.run().total_commits == 2
    shutil.rmtree(workspace / "b")
    report = indexer.run()
    assert report.removed_repositories == [str((workspace / "b").resolve())]
    assert report.total_commits == 1 and not report.up_to_date


def test_interrupted_run_resumes_without_duplicates_or_loss(make_repo, indexer):
    repo = make_repo()
    repo.fast_import([FastCommit({f"f{i % 5}.txt": f"{i}\n"}, f"commit {i}") for i in range(60)])
    indexer.run(batch_size=7)
    # Simulate a run killed mid-way: flag set, part of the commits lost, refs of the last run.
    with indexer.open() as store, store.atomic() as conn:
        conn.execute("UPDATE repositories SET run_in_progress = 1")
        conn.execute("DELETE FROM git_commits WHERE id IN "
                     "(SELECT id FROM git_commits ORDER BY id DESC LIMIT 25)")
    assert counts(indexer) == (35, 35)
    report = indexer.run(batch_size=7)
    (rep,) = report.repositories
    assert rep.full_reconcile and rep.new_commits == 25 and rep.reused_commits == 35
    assert counts(indexer) == (60, 60)
    assert set(indexer.hashes()) == repo.all_hashes()
    with indexer.open() as store:
        assert store.conn.execute("SELECT run_in_progress FROM repositories").fetchone()[0] == 0
    assert indexer.run().up_to_date


def test_interrupted_first_run_resumes(make_repo, indexer):
    repo = make_repo()
    repo.fast_import([FastCommit({"f.txt": f"{i}\n"}, f"commit {i}") for i in range(30)])
    indexer.run()
    with indexer.open() as store, store.atomic() as conn:
        conn.execute("UPDATE repositories SET run_in_progress = 1")
        conn.execute("DELETE FROM repo_refs")
        conn.execute("DELETE FROM git_commits WHERE id % 2 = 0")
    report = indexer.run()
    assert report.repositories[0].new_commits == 15
    assert counts(indexer) == (30, 30)
    assert set(indexer.hashes()) == repo.all_hashes()


@pytest.mark.slow
def test_sigkill_mid_run_then_reindex_loses_nothing(make_repo, workspace):
    repo = make_repo()
    payload = "".join(f"line {n} of a moderately sized file body\n" for n in range(40))
    repo.fast_import(
        [FastCommit({f"d{i % 50}/f{i}.txt": f"{i}\n{payload}"}, f"commit number {i}")
         for i in range(4000)]
    )
    Path(os.environ["GITQUARRY_CONFIG"]).write_text("[git_indexing]\nbatch_size = 100\n")
    db = workspace / ".gitquarry" / "index.db"
    proc = subprocess.Popen(
        [gitquarry_executable(), "index", "--no-embed", "--quiet", str(workspace)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy(),
    )
    stored = 0
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
                    stored = con.execute("SELECT count(*) FROM git_commits").fetchone()[0]
                    con.close()
                except sqlite3.Error:
                    stored = 0
                if stored >= 300:
                    break
            time.sleep(0.02)
        assert proc.poll() is None, "indexing finished before it could be interrupted"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    total = repo.count("--branches", "--tags", "--remotes")
    with open_store(db) as store:
        partial = store.conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]
        flag = store.conn.execute("SELECT run_in_progress FROM repositories").fetchone()[0]
    assert 0 < partial < total and flag == 1
    done = subprocess.run(
        [gitquarry_executable(), "index", "--no-embed", "--quiet", "--json", str(workspace)],
        capture_output=True, check=True,
    )
    data = json.loads(done.stdout)
    assert data["total_commits"] == total
    assert data["repositories"][0]["full_reconcile"] is True
    assert data["repositories"][0]["new_commits"] == total - partial
    with open_store(db) as store:
        conn = store.conn
        assert conn.execute("SELECT count(*) FROM git_commits").fetchone()[0] == total
        assert conn.execute("SELECT count(DISTINCT hash) FROM git_commits").fetchone()[0] == total
        assert conn.execute("SELECT count(*) FROM repo_commits").fetchone()[0] == total
        assert conn.execute("SELECT count(*) FROM commit_fts").fetchone()[0] == total
        hashes = {r[0] for r in conn.execute("SELECT hash FROM git_commits")}
    assert hashes == repo.all_hashes()


def test_commit_shared_by_two_repositories_survives_pruning_in_one(make_repo, indexer,
                                                                   workspace):
    a = make_repo("a")
    a.commit({"x.txt": "x\n"}, "shared root")
    a.branch("topic")
    shared = a.commit({"t.txt": "t\n"}, "shared topic work")
    a.checkout("main")
    subprocess.run(["git", "clone", "-q", "--mirror", str(a.path), str(workspace / "b.git")],
                   check=True, capture_output=True)
    indexer.run()
    assert counts(indexer) == (2, 4)
    a.git("branch", "-D", "topic")
    report = indexer.run()
    assert [r.pruned_commits for r in report.repositories] == [1, 0]
    assert shared in indexer.hashes()
    assert counts(indexer) == (2, 3)
