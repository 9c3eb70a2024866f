"""Issue 21 §1: the commits a merge brought in, answered from the index's commit graph and
persisted generations (``history.index.generations``), equal git's own ``rev-list P2 … ^P1``
(``gitio.ancestry.merged_commits``, the per-merge process it replaces) for every merge of
seeded-random histories (criss-cross and octopus merges, equal and backwards dates, a side
branch longer than ``MAX_MERGED``); the search answer is the same with the generations and
with git asked for every merge; where the index cannot tell (stale digest, shallow boundary)
git is asked."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gitquarry.gitio.ancestry import merged_commits
from gitquarry.history.index import generations
from gitquarry.history.index.generations import (
    ASK_GIT,
    brought_in,
    build_generations,
    current_generations,
)
from gitquarry.history.index.refs_contain import RefContainment
from gitquarry.history.search.candidate_stream import MAX_MERGED
from gitquarry.history.search.engine import search_git_history
from gitquarry.store import open_store

from .conftest import BASE_TIME, GitRepo, Indexer


def _random_history(repo: GitRepo, seed: int, steps: int, *, long_branch: bool = False,
                    skew: bool = True) -> None:
    """Branches that commit, fork and merge (two or three parents) at random, written with
    one ``git fast-import``; dates mostly forward, some equal, some backwards (clock skew).
    ``long_branch``: then a branch of ``MAX_MERGED + 5`` commits merged into main (git and
    the index then say None: "more than the limit")."""
    rng = random.Random(seed)
    when = BASE_TIME
    tips: dict[str, int] = {}
    out = bytearray()

    def commit(branch: str, n: int, message: str, start: str | None = None,
               merged: tuple[str, ...] = ()) -> None:
        out.extend(f"commit refs/heads/{branch}\nmark :{n}\n".encode())
        out.extend(f"committer C <c@example.com> {when} +0000\n".encode())
        msg = message.encode()
        out.extend(f"data {len(msg)}\n".encode() + msg + b"\n")
        if start is not None:
            out.extend(f"from :{tips[start]}\n".encode())
        for other in merged:
            out.extend(f"merge :{tips[other]}\n".encode())
        out.extend(f"M 100644 inline f{n}\ndata {len(str(n))}\n{n}\n\n".encode())
        tips[branch] = n

    commit("main", 1, "root change")
    for n in range(2, steps + 2):
        roll = rng.random()
        backwards = [-3600, -86_400 * 3] if skew else []
        when = max(BASE_TIME, when + rng.choice([60] * 12 + [0, 0, 0] + backwards))
        branches = sorted(tips)
        if roll < 0.15 and len(branches) < 6:
            commit(f"b{n}", n, f"fork change {n}", start=rng.choice(branches))
        elif roll < 0.4 and len(branches) > 1:
            target = rng.choice(branches)
            others = [b for b in branches if b != target and tips[b] != tips[target]]
            if not others:
                continue
            merged = rng.sample(others, 2 if len(others) > 1 and rng.random() < 0.2 else 1)
            commit(target, n, f"merge change {n}", merged=tuple(merged))
        else:
            commit(rng.choice(branches), n, f"change {n}")
    if long_branch:
        n = steps + 10
        commit("long", n, "long change 0", start="main")
        for i in range(1, MAX_MERGED + 5):
            when += 60
            commit("long", n + i, f"long change {i}")
        when += 60
        commit("main", n + MAX_MERGED + 10, "main moves on")
        when += 60
        commit("main", n + MAX_MERGED + 11, "merge long", merged=("long",))
    out.extend(b"done\n")
    repo.git("fast-import", "--quiet", "--done", input_bytes=bytes(out))


def _merges(conn) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [str(p).split() for (p,) in conn.execute(
        "SELECT parents FROM git_commits WHERE is_merge = 1 ORDER BY id")]


def _digest(conn) -> str:  # type: ignore[no-untyped-def]
    return RefContainment.digest(RefContainment._fingerprint(conn))


@pytest.mark.parametrize("budget", ["default", "unlimited"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_index_walk_equals_git_rev_list_for_every_merge(make_repo, indexer: Indexer,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        seed: int, budget: str) -> None:
    if budget == "unlimited":  # every walk to its end (long walks and "more than the limit")
        monkeypatch.setattr(generations, "WALK_BUDGET", 10**9)
    repo: GitRepo = make_repo()
    _random_history(repo, seed, 120, long_branch=seed == 1, skew=seed == 2)
    indexer.run()
    with indexer.open() as store:
        conn = store.conn
        assert current_generations(conn, _digest(conn))
        merges = _merges(conn)
        assert len(merges) >= 8
        rows: dict[str, tuple[list[str], int, int]] = {}
        answered_none = answered = index_none = 0
        for parents in merges:
            want = merged_commits(repo.path / ".git", parents, limit=MAX_MERGED)
            for shared in (None, rows):  # alone, and with the rows of the earlier merges
                got = brought_in(conn, parents, limit=MAX_MERGED, rows=shared)
                if got == ASK_GIT:  # backwards dates on its walk, or a long walk: git decides
                    continue
                answered += shared is None
                index_none += got is None and shared is None
                assert (got is None) == (want is None), parents
                if want is not None:
                    assert got is not None and sorted(got) == sorted(want), parents
            answered_none += want is None
        assert answered_none == (1 if seed == 1 else 0)
        assert answered >= 1
        if budget == "unlimited" and seed != 2:
            # without backwards dates every merge is answered by the index, "more than
            # MAX_MERGED" included
            assert answered == len(merges)
            assert index_none == (1 if seed == 1 else 0)


def test_generations_are_topological_levels(make_repo, indexer: Indexer) -> None:
    repo: GitRepo = make_repo()
    _random_history(repo, 4, 40)
    indexer.run()
    with indexer.open() as store:
        conn = store.conn
        gen = build_generations(conn)
        ids = {str(h): int(i) for i, h in conn.execute("SELECT id, hash FROM git_commits")}
        persisted = dict(conn.execute("SELECT commit_id, generation FROM commit_generations"))
        assert persisted == gen and set(gen) == set(ids.values())
        for cid, parents in conn.execute("SELECT id, parents FROM git_commits"):
            plist = [ids[p] for p in str(parents).split()]
            assert gen[cid] == 1 + max((gen[p] for p in plist), default=0)


def _answer(indexer: Indexer, query: str):  # type: ignore[no-untyped-def]
    with indexer.open() as store:
        response = search_git_history(store, query, mode="lexical", top_n=100)
        return [(r.hash, [(c["hash"], c["via"]) for c in r.copies]) for r in response.results]


def test_search_answer_is_the_same_when_git_answers_every_merge(make_repo,
                                                                indexer: Indexer) -> None:
    repo: GitRepo = make_repo()
    _random_history(repo, 5, 120)
    indexer.run()
    with_index = {q: _answer(indexer, q) for q in ("change", "fork", "merge", "root change")}
    assert any(copies for answer in with_index.values() for _, copies in answer)
    store = open_store(indexer.db_path)
    try:  # a digest that is not the index state's: every merge is asked of git
        with store.atomic() as conn:
            conn.execute("UPDATE commit_generations_meta SET digest = 'stale'")
    finally:
        store.close()
    assert {q: _answer(indexer, q) for q in with_index} == with_index


def test_stale_generations_or_a_shallow_boundary_ask_git(make_repo, indexer: Indexer,
                                                          tmp_path: Path) -> None:
    from gitquarry.history.search.candidate_stream import MergeFolder

    repo: GitRepo = make_repo()
    _random_history(repo, 6, 50, skew=False)
    indexer.run()
    with indexer.open() as store:
        conn = store.conn
        merge_ids = [int(i) for (i,) in conn.execute(
            "SELECT id FROM git_commits WHERE is_merge = 1")]
        parents = {int(i): str(p).split() for i, p in conn.execute(
            "SELECT id, parents FROM git_commits WHERE is_merge = 1")}
        position = {cid: n for n, (cid,) in enumerate(conn.execute("SELECT id FROM git_commits"))}
        folder = MergeFolder(conn)
        fresh = [folder.host(m, parents[m], position) for m in merge_ids]
        assert folder.index_answers == len(merge_ids) and folder.git_answers == 0
    store = open_store(indexer.db_path)
    try:
        with store.atomic() as conn:
            conn.execute("DELETE FROM commit_generations_meta")
    finally:
        store.close()
    with indexer.open() as store:
        folder = MergeFolder(store.conn)
        assert [folder.host(m, parents[m], position) for m in merge_ids] == fresh
        assert folder.git_answers == len(merge_ids) and folder.index_answers == 0
    # a commit whose parents are not indexed (here: removed from the graph) stops the walk
    with indexer.open() as store:
        conn = store.conn
        first = parents[merge_ids[0]]
        conn.execute("DELETE FROM commit_generations WHERE commit_id IN "
                     "(SELECT id FROM git_commits WHERE hash = ?)", (first[0],))
        assert brought_in(conn, first, limit=MAX_MERGED) == ASK_GIT
