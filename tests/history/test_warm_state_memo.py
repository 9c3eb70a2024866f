"""Issue 21 target 3 (s5-warm-pipeline): the merge fold's per-index-state memo
(``candidate_stream._StateMemo``: generations current, brought-in answers, changed lines)
changes cost, never answers. One long-lived connection (as the MCP server keeps it) answers
the same with the memo on and off, before and after git moves a ref and adds commits outside
gitquarry and an index run records them, and a state change made by another connection is
seen on the next query."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest

from gitquarry.history.index import generations
from gitquarry.history.search import candidate_stream
from gitquarry.history.search.candidate_stream import MergeFolder
from gitquarry.history.search.engine import search_git_history
from gitquarry.store import open_store

from .conftest import GitRepo, Indexer
from .test_merge_generations import _random_history

QUERIES = ("change", "fork", "merge change", "root change", "main moves")


def _answers(store: Any) -> dict[str, Any]:
    out = {}
    for q in QUERIES:
        response = search_git_history(store, q, mode="lexical", top_n=100, ranking_depth=120)
        out[q] = ([asdict(r) for r in response.results],
                  [asdict(m) for m in response.more], response.pipeline)
    return out


def _both(store: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(candidate_stream, "STATE_MEMO", False)
    off = _answers(store)
    monkeypatch.setattr(candidate_stream, "STATE_MEMO", True)
    on = _answers(store)
    again = _answers(store)  # answered from the memo filled by ``on``
    assert on == off and again == off
    return off


def test_answers_equal_with_the_memo_on_and_off_across_index_states(
        make_repo, indexer: Indexer, monkeypatch: pytest.MonkeyPatch) -> None:
    repo: GitRepo = make_repo()
    _random_history(repo, 7, 120)
    indexer.run()
    live = open_store(indexer.db_path)  # one connection for every query below
    try:
        first = _both(live, monkeypatch)
        assert any(r["copies"] for results, _, _ in first.values() for r in results)
        # git moves a ref and adds commits and a merge outside gitquarry; an index run (its
        # own connection) records them
        repo.git("branch", "-f", "moved", "main~3")
        repo.git("checkout", "-q", "-f", "-b", "side", "main~2")
        repo.commit({"s1.txt": "1\n"}, "side change one")
        repo.commit({"s2.txt": "2\n"}, "side change two")
        repo.git("checkout", "-q", "-f", "main")
        repo.git("merge", "-q", "--no-ff", "-m", "merge change side", "side")
        indexer.run()
        second = _both(live, monkeypatch)
        assert second != first  # the new state is seen by the long-lived connection
        fresh = open_store(indexer.db_path)
        try:
            monkeypatch.setattr(candidate_stream, "STATE_MEMO", False)
            assert _answers(fresh) == second
        finally:
            fresh.close()
    finally:
        live.close()


def test_a_state_change_by_another_connection_is_seen_on_the_next_query(
        make_repo, indexer: Indexer, monkeypatch: pytest.MonkeyPatch) -> None:
    repo: GitRepo = make_repo()
    _random_history(repo, 6, 50, skew=False)
    indexer.run()
    walks = []
    real = generations.brought_in
    monkeypatch.setattr(generations, "brought_in",
                        lambda *a, **k: walks.append(1) or real(*a, **k))
    live = open_store(indexer.db_path)
    try:
        conn = live.conn
        merges = {int(i): str(p).split() for i, p in conn.execute(
            "SELECT id, parents FROM git_commits WHERE is_merge = 1")}
        position = {cid: n for n, (cid,) in enumerate(conn.execute(
            "SELECT id FROM git_commits"))}

        def fold() -> tuple[list[int | None], MergeFolder]:
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT count(*) FROM git_commits").fetchone()
                folder = MergeFolder(conn)
                return [folder.host(m, merges[m], position) for m in merges], folder
            finally:
                conn.execute("ROLLBACK")

        hosts, folder = fold()
        assert folder.index_answers == len(merges) and len(walks) == len(merges)
        again, folder = fold()  # same state: every answer from the memo, no walk
        assert again == hosts and folder.index_answers == len(merges)
        assert len(walks) == len(merges)
        other = open_store(indexer.db_path)
        try:  # another connection makes the persisted generations stale
            with other.atomic() as c:
                c.execute("UPDATE commit_generations_meta SET digest = 'stale'")
        finally:
            other.close()
        later, folder = fold()
        assert later == hosts
        assert folder.git_answers == len(merges) and folder.index_answers == 0
    finally:
        live.close()


def test_a_walk_that_gives_up_is_not_walked_again_in_the_same_state(
        make_repo, indexer: Indexer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Clock skew makes the index's walk give up (``ASK_GIT``) on some merges: the memo
    keeps that verdict for the state, so a second query asks git (whose answer ``_merged``
    keeps) without walking again; the hosts equal a fresh folder's with the memo off."""
    repo: GitRepo = make_repo()
    _random_history(repo, 11, 140, skew=True)
    indexer.run()
    walks: list[Any] = []
    real = generations.brought_in

    def counted(*a: Any, **k: Any) -> Any:
        found = real(*a, **k)
        walks.append(found)
        return found

    monkeypatch.setattr(generations, "brought_in", counted)
    live = open_store(indexer.db_path)
    try:
        conn = live.conn
        merges = {int(i): str(p).split() for i, p in conn.execute(
            "SELECT id, parents FROM git_commits WHERE is_merge = 1")}
        position = {cid: n for n, (cid,) in enumerate(conn.execute(
            "SELECT id FROM git_commits"))}

        def fold() -> tuple[list[int | None], MergeFolder]:
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT count(*) FROM git_commits").fetchone()
                folder = MergeFolder(conn)
                return [folder.host(m, merges[m], position) for m in merges], folder
            finally:
                conn.execute("ROLLBACK")

        hosts, first = fold()
        gave_up = sum(1 for w in walks if w == generations.ASK_GIT)
        assert gave_up > 0 and first.git_answers == gave_up  # the history has such merges
        assert len(walks) == len(merges)
        again, second = fold()
        assert again == hosts
        assert len(walks) == len(merges)  # no walk at all: every verdict from the memo
        assert second.git_answers == gave_up
        assert second.index_answers == len(merges) - gave_up
        monkeypatch.setattr(candidate_stream, "STATE_MEMO", False)
        off, _ = fold()
        assert off == hosts
    finally:
        live.close()


def test_the_fold_answers_the_same_from_the_memo_with_copies_ranked_instead(
        make_repo, indexer: Indexer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Merges whose brought-in commits are ranked themselves or only through a copy (same
    patch-id, ``git cherry-pick``), for every ranked subset in two orders: the hosts with
    the per-state memo (its repositories per merge, brought-in rows and patch-id holders;
    read twice, the second time from the memo) equal those with the memo off."""
    import itertools

    repo: GitRepo = make_repo()
    repo.commit({"a.txt": "a\n"}, "root")
    repo.branch("side")
    picked = [repo.commit({f"s{i}.txt": f"{i}\n"}, f"side {i}") for i in range(3)]
    repo.checkout("main")
    copies = [repo.commit({"m.txt": "m\n"}, "main work")]
    for h in picked[:2]:
        repo.git("cherry-pick", "-x", h)
        copies.append(repo.head())
    repo.merge("side", message="merge side")
    repo.branch("other")
    repo.commit({"o.txt": "o\n"}, "other work")
    repo.checkout("main")
    repo.merge("other", message="merge other")
    indexer.run()
    live = open_store(indexer.db_path)
    try:
        conn = live.conn
        ids = {str(h): int(i) for i, h in conn.execute("SELECT id, hash FROM git_commits")}
        merges = {int(i): str(p).split() for i, p in conn.execute(
            "SELECT id, parents FROM git_commits WHERE is_merge = 1")}
        ranked_pool = [ids[h] for h in (*picked, *copies)]
        positions = []
        for k in range(1, len(ranked_pool) + 1):
            for subset in itertools.combinations(ranked_pool, k):
                for order in (subset, subset[::-1]):
                    positions.append({cid: n for n, cid in enumerate(order)})

        def hosts() -> list[int | None]:
            out = []
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT count(*) FROM git_commits").fetchone()
                for position in positions:
                    folder = MergeFolder(conn)  # one per query, as a search makes
                    out += [folder.host(m, merges[m], position) for m in merges]
            finally:
                conn.execute("ROLLBACK")
            return out

        monkeypatch.setattr(candidate_stream, "STATE_MEMO", False)
        off = hosts()
        monkeypatch.setattr(candidate_stream, "STATE_MEMO", True)
        assert hosts() == off and hosts() == off
        assert any(h is not None for h in off) and any(h is None for h in off)
        # a merge folded although a commit it brought in is ranked only through its copy
        per = len(merges)
        unranked = {ids[h] for h in picked[:2]}
        assert any(h is not None and not unranked <= set(position)
                   for n, position in enumerate(positions)
                   for h in off[n * per:(n + 1) * per])
    finally:
        live.close()


def test_a_long_lived_process_walks_further_with_the_same_hosts(
        make_repo, indexer: Indexer, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a long-lived process (``process_kind.mark_long_lived``) the fold's index walk may
    pop ``LONG_LIVED_WALK_BUDGET`` commits instead of ``WALK_BUDGET``: merges of long
    branches are answered by the index instead of git, and every host is the same."""
    from gitquarry.embedding import process_kind

    repo: GitRepo = make_repo()
    _random_history(repo, 5, 40, long_branch=True, skew=False)
    indexer.run()
    live = open_store(indexer.db_path)
    try:
        conn = live.conn
        merges = {int(i): str(p).split() for i, p in conn.execute(
            "SELECT id, parents FROM git_commits WHERE is_merge = 1")}
        position = {cid: n for n, (cid,) in enumerate(conn.execute(
            "SELECT id FROM git_commits"))}

        def fold() -> tuple[list[int | None], MergeFolder]:
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT count(*) FROM git_commits").fetchone()
                folder = MergeFolder(conn)
                return [folder.host(m, merges[m], position) for m in merges], folder
            finally:
                conn.execute("ROLLBACK")

        monkeypatch.setattr(process_kind, "_long_lived", False)
        short, by_cli = fold()
        candidate_stream._memo = None  # a new process's memo
        monkeypatch.setattr(process_kind, "_long_lived", True)
        long, by_server = fold()
        assert long == short
        assert by_server.git_answers < by_cli.git_answers  # the history has long walks
        assert by_server.index_answers + by_server.git_answers == len(merges)
    finally:
        live.close()
