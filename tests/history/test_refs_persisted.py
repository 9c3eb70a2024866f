"""Issue 21 §2: the refs-containing sets persisted with the index equal a fresh build from the
commit graph and ``git branch -a --contains`` ∪ ``git tag --contains``, after ref moves, new
commits, merges and deleted branches; a fresh process reads them without rebuilding; a stale
or missing persisted state falls back to the in-memory build with the same answers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gitquarry.history.index import refs_contain
from gitquarry.history.index.refs_contain import (
    MAX_NAMES,
    RefContainment,
    build_sets,
    persist_ref_sets,
    persisted_digest,
)
from gitquarry.store import open_store

from .answers_fixture import Fixture, build


@pytest.fixture
def fx(tmp_path: Path) -> Fixture:
    return build(tmp_path / "ws")


def _git_contains(fx: Fixture, commit: str) -> set[str]:
    branches = fx.repo.git("branch", "-a", "--contains", commit, "--format=%(refname:short)")
    tags = fx.repo.git("tag", "--contains", commit)
    return set(branches.split()) | set(tags.split())


def _cold() -> RefContainment:
    """A RefContainment as a new process has it: no state left by an earlier instance."""
    refs_contain._last = None
    return RefContainment()


def _fresh_names(conn: sqlite3.Connection, cid: int, n: int, compact: bool) -> tuple[list[str],
                                                                                      int]:
    """The answer of a RefContainment built in memory from the commit graph (no tables)."""
    ref_sets = RefContainment()
    ref_sets._sets, ref_sets._names, ref_sets._tag_bits = build_sets(conn)
    return ref_sets.names(cid, n, compact=compact)


def _check_persisted(fx: Fixture) -> None:
    """A new connection (a cold process) takes the persisted sets without a build, and every
    commit's names equal a fresh build's (every cut, compact too) and git's."""
    store = open_store(fx.indexer.db_path)
    try:
        conn = store.conn
        assert persisted_digest(conn) == RefContainment.digest(RefContainment._fingerprint(conn))
        fresh = RefContainment()
        fresh._sets, fresh._names, fresh._tag_bits = build_sets(conn)
        ids = {str(h): int(i) for i, h in conn.execute("SELECT id, hash FROM git_commits")}
        for cut, compact in ((1000, False), (MAX_NAMES, False), (2, False), (MAX_NAMES, True)):
            cold = _cold()
            cold.refresh(conn)
            assert cold.persisted_loads == 1 and cold.builds == 0
            for h, cid in ids.items():
                assert cold.names(cid, cut, compact=compact) == fresh.names(
                    cid, cut, compact=compact), (h, cut, compact)
            assert cold.builds == 0
        cold = _cold()
        results = [{"hash": h} for h in ids]
        cold.annotate(conn, results, max_names=1000)
        assert cold.builds == 0
        for r in results:
            want = _git_contains(fx, r["hash"])
            assert set(r["refs"]) == want, r["hash"]
            assert r["refs_total"] == len(want)
    finally:
        store.close()


def test_persisted_sets_equal_a_fresh_build_as_the_history_changes(fx: Fixture) -> None:
    _check_persisted(fx)
    # a tag moves, a new branch with commits, a merge, more tags
    fx.repo.branch("hotfix", fx.commits["retry"])
    fx.repo.checkout("hotfix")
    fix = fx.repo.commit({"src/fix.py": "x = 1\n"}, "Hot fix", 1_700_000_000)
    fx.repo.checkout("main")
    fx.repo.git("tag", "-f", "v1.0", fix)
    for i in range(12):
        fx.repo.git("tag", f"rel-{i:02d}", fx.commits[f"n{i}"])
    fx.indexer.run()
    _check_persisted(fx)
    fx.repo.merge("hotfix", message="Merge hotfix", date=1_700_000_050)
    fx.repo.commit({"src/after.py": "z = 3\n"}, "After the merge", 1_700_000_060)
    fx.indexer.run()
    _check_persisted(fx)
    # a deleted branch (its commit pruned: reachable from no ref after the tag moves back)
    fx.repo.git("reset", "--hard", fx.commits["n11"])
    fx.repo.git("tag", "-f", "v1.0", fx.commits["retry"])
    fx.repo.git("branch", "-D", "hotfix", "old")
    fx.repo.commit({"src/new.py": "y = 2\n"}, "Newer", 1_700_000_100)
    fx.indexer.run()
    with fx.indexer.open() as store:
        indexed = {h for (h,) in store.conn.execute("SELECT hash FROM git_commits")}
    assert fix not in indexed
    _check_persisted(fx)


def test_an_unchanged_index_is_not_rewritten(fx: Fixture) -> None:
    with fx.indexer.open() as store:
        digest = persisted_digest(store.conn)
        assert digest is not None
        assert persist_ref_sets(store) is False
    fx.indexer.run()  # nothing new
    with fx.indexer.open() as store:
        assert persisted_digest(store.conn) == digest


def test_stale_or_missing_persisted_sets_fall_back_to_a_build(fx: Fixture) -> None:
    store = open_store(fx.indexer.db_path)
    try:
        conn = store.conn
        # a write that does not persist (another tool, an interrupted run): digest differs
        conn.execute("DELETE FROM repo_refs WHERE ref = CAST('refs/heads/old' AS BLOB)")
        ref_sets = _cold()
        results = [{"hash": h} for h in fx.commits.values()]
        ref_sets.annotate(conn, results, max_names=1000)
        assert ref_sets.builds == 1 and ref_sets.persisted_loads == 0
        for r in results:
            assert "old" not in r["refs"]
            assert set(r["refs"]) == _git_contains(fx, r["hash"]) - {"old"}, r["hash"]
        # no persisted state at all (an index written before the tables were filled)
        conn.execute("DELETE FROM ref_sets_meta")
        ref_sets = _cold()
        again = [{"hash": h} for h in fx.commits.values()]
        ref_sets.annotate(conn, again, max_names=1000)
        assert ref_sets.builds == 1 and again == results
    finally:
        store.close()


def test_a_state_persisted_between_the_check_and_the_look_up_falls_back(fx: Fixture) -> None:
    reader = open_store(fx.indexer.db_path)
    try:
        ref_sets = _cold()
        ref_sets.refresh(reader.conn)
        assert ref_sets.persisted_loads == 1
        # another process indexes a new tag on the oldest commit and persists the new state
        fx.repo.git("tag", "v0.0", fx.commits["init"])
        fx.indexer.run()
        cid = int(reader.conn.execute("SELECT id FROM git_commits WHERE hash = ?",
                                      (fx.commits["init"],)).fetchone()[0])
        names, total = ref_sets.names(cid, 1000)  # no refresh in between
        assert ref_sets.builds == 1
        assert set(names) == _git_contains(fx, fx.commits["init"]) and "v0.0" in names
        assert total == len(names)
    finally:
        reader.close()


def test_instances_on_one_connection_share_the_state_until_a_write(fx: Fixture) -> None:
    """In-process searches without a long-lived RefContainment (``pipeline.copies`` makes one
    per call) neither read the fingerprint again nor answer stale after a write."""
    store = open_store(fx.indexer.db_path)
    try:
        conn = store.conn
        first = _cold()
        first.refresh(conn)
        assert first.fingerprints == 1
        second = RefContainment()
        second.refresh(conn)
        assert second.fingerprints == 0 and second.builds == 0
        cid = int(conn.execute("SELECT id FROM git_commits WHERE hash = ?",
                               (fx.commits["timeout"],)).fetchone()[0])
        assert "old" in second.names(cid, 1000)[0]
        conn.execute("DELETE FROM repo_refs WHERE ref = CAST('refs/heads/old' AS BLOB)")
        third = RefContainment()
        third.refresh(conn)
        assert third.fingerprints == 1 and third.builds == 1
        assert "old" not in third.names(cid, 1000)[0]
        other = open_store(fx.indexer.db_path)  # another connection: its own check
        try:
            fourth = RefContainment()
            fourth.refresh(other.conn)
            assert fourth.fingerprints == 1
        finally:
            other.close()
    finally:
        store.close()


def test_a_busy_index_at_the_end_of_a_run_keeps_the_run_and_the_answers(
        fx: Fixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """If the sets cannot be written (another writer holds the lock), the indexing run still
    succeeds and queries answer from the in-memory build."""
    from gitquarry.errors import IndexBusyError
    from gitquarry.history.index import indexer

    def busy(store: object) -> bool:
        raise IndexBusyError(fx.indexer.db_path)

    monkeypatch.setattr(indexer, "persist_ref_sets", busy)
    fx.repo.git("tag", "v9", fx.commits["n3"])
    report = fx.indexer.run()
    assert report.total_commits == len(fx.commits)
    store = open_store(fx.indexer.db_path)
    try:
        ref_sets = _cold()
        results = [{"hash": h} for h in fx.commits.values()]
        ref_sets.annotate(store.conn, results, max_names=1000)
        assert ref_sets.builds == 1
        for r in results:
            assert set(r["refs"]) == _git_contains(fx, r["hash"]), r["hash"]
    finally:
        store.close()
