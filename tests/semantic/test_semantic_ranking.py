"""Hybrid/semantic ranking with the fake embedder (through the real registry): RRF fusion,
scores, filters before top-k, and graceful degradation when vectors are missing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.errors import InvalidArgumentError
from gitquarry.history.models import GitSearchResponse
from gitquarry.retrieval.fusion import normalise_rrf, rrf_fuse, rrf_max_score

from .conftest import GitRepo, Harness

# -- RRF fusion, pure ----------------------------------------------------------------------


def test_rrf_fuse_sums_weighted_reciprocal_ranks() -> None:
    fused = dict(rrf_fuse([["a", "b", "c"], ["c", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    weighted = dict(rrf_fuse([["a", "b"], ["b"]], [2.0, 0.5], k=10))
    assert weighted["a"] == pytest.approx(2 / 11)
    assert weighted["b"] == pytest.approx(2 / 12 + 0.5 / 11)


def test_rrf_fuse_orders_by_score_then_first_appearance() -> None:
    assert [key for key, _ in rrf_fuse([["a", "b", "c"], ["c", "a"]])] == ["a", "c", "b"]
    # a and b tie exactly: the one seen first (list 0 first) wins, every time
    assert [key for key, _ in rrf_fuse([["a", "b"], ["b", "a"]])] == ["a", "b"]
    assert [key for key, _ in rrf_fuse([["b", "a"], ["a", "b"]])] == ["b", "a"]
    assert [key for key, _ in rrf_fuse([["x"], ["y"]])] == ["x", "y"]
    assert rrf_fuse([["a", "b"], ["b", "a"]]) == rrf_fuse([["a", "b"], ["b", "a"]])


def test_rrf_fuse_rejects_mismatched_weights() -> None:
    with pytest.raises(ValueError):
        rrf_fuse([["a"], ["b"]], [1.0])


def test_normalised_rrf_is_in_unit_interval() -> None:
    weights = [1.0, 1.0]
    assert rrf_max_score(weights) == pytest.approx(2 / 61)
    assert normalise_rrf(2 / 61, weights) == pytest.approx(1.0)
    assert normalise_rrf(1 / 61, weights) == pytest.approx(0.5)
    assert normalise_rrf(0.0, weights) == 0.0
    assert normalise_rrf(1.0, weights) == 1.0  # clamped
    assert normalise_rrf(0.5, [0.0]) == 0.0


# -- end to end through the index ----------------------------------------------------------

TOPIC_COMMITS = [
    ("Fix cookie SameSite default for session cookie", {"web/cookies.py": 'samesite = "Lax"\n'}),
    ("Add login form validation", {"web/login.py": "def validate(form): return bool(form)\n"}),
    ("Speed up database connection pool", {"db/pool.py": "POOL_SIZE = 20\n"}),
    ("Document cookie settings in README", {"README.md": "Cookies use SameSite=Lax.\n"}),
    ("Refactor parser tokens", {"src/parser.py": "TOKENS = ['a', 'b']\n"}),
    ("Bump version to 1.2.0", {"VERSION": "1.2.0\n"}),
]


def build_topic_repo(make_repo: Callable[[str], GitRepo]) -> tuple[GitRepo, list[str]]:
    repo = make_repo("app")
    hashes = [repo.commit(title, files) for title, files in TOPIC_COMMITS]
    return repo, hashes


def check_scores(response: GitSearchResponse) -> None:
    scores = [r.score for r in response.results]
    assert all(0.0 <= s <= 1.0 for s in scores), scores
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_scores_in_unit_interval_sorted_and_deterministic(
    harness: Harness, make_repo: Callable[[str], GitRepo], mode: str
) -> None:
    build_topic_repo(make_repo)
    harness.index()
    first = harness.query("cookie samesite session", mode=mode, top_n=10)
    again = harness.query("cookie samesite session", mode=mode, top_n=10)
    assert first.results, mode
    assert first.effective_mode == mode
    assert first.warnings == []
    assert first.embedded_fraction == (0.0 if mode == "lexical" else 1.0)
    check_scores(first)
    assert [(r.hash, r.score) for r in first.results] == [(r.hash, r.score) for r in again.results]
    assert first.results[0].title == "Fix cookie SameSite default for session cookie"
    if mode == "semantic":  # every embedded commit is a semantic candidate
        assert len(first.results) == len(TOPIC_COMMITS)


def test_hybrid_score_is_normalised_weighted_rrf_of_both_ranks(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    build_topic_repo(make_repo)
    harness.search = {"lexical_weight": 2.0, "semantic_weight": 0.5, "rrf_k": 10}
    harness.index()
    response = harness.query("cookie samesite settings", mode="hybrid", top_n=10)
    assert response.effective_mode == "hybrid"
    assert len(response.results) == len(TOPIC_COMMITS)
    best = 2.0 / 11 + 0.5 / 11
    for r in response.results:
        assert r.semantic_rank is not None  # every commit is embedded
        raw = 0.5 / (10 + r.semantic_rank)
        if r.lexical_rank is not None:
            raw += 2.0 / (10 + r.lexical_rank)
        assert r.score == pytest.approx(raw / best, abs=1e-6)
    check_scores(response)
    # the explain fields are consistent with the ranks
    lexical = sorted((r for r in response.results if r.lexical_rank), key=lambda r: r.lexical_rank)
    assert [r.lexical_rank for r in lexical] == list(range(1, len(lexical) + 1))
    bm25 = [r.bm25 for r in lexical]
    assert bm25 == sorted(bm25)  # lower bm25 is better
    semantic = sorted(response.results, key=lambda r: r.semantic_rank)
    sims = [r.similarity for r in semantic]
    assert sims == sorted(sims, reverse=True)
    assert all(-1.0 - 1e-6 <= s <= 1.0 + 1e-6 for s in sims)


def test_equal_documents_tie_deterministically(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    """Commits with identical text get identical vectors and bm25; the order is still fixed."""
    # identical texts are near-duplicates the result pipeline would fold: off for this test
    harness.search = {"ngram_dedup_enabled": False, "collapse_copies": False}
    repo = make_repo("app")
    for n in range(4):
        repo.commit("Tweak widget colour", date=1_704_067_200 + 60 * n)
    harness.index()
    orders = {
        tuple(r.hash for r in harness.query("widget colour", mode=mode, top_n=4).results)
        for mode in ("semantic",) for _ in range(3)
    }
    assert len(orders) == 1
    (order,) = orders
    assert len(order) == 4
    # semantic ties fall back to the commit id (insertion order), the same every run
    hybrid = harness.query("widget colour", mode="hybrid", top_n=4)
    assert [r.hash for r in hybrid.results] == [
        r.hash for r in harness.query("widget colour", mode="hybrid", top_n=4).results
    ]
    check_scores(hybrid)


def test_unknown_mode_is_rejected(harness: Harness, make_repo: Callable[[str], GitRepo]) -> None:
    build_topic_repo(make_repo)
    harness.index()
    with pytest.raises(InvalidArgumentError):
        harness.query("cookie", mode="vector")


# -- filters are applied before the semantic top-k -------------------------------------------

N_DECOYS = 56  # more than the candidate pool (max(top_n * 4, 50)) of each ranker


def build_filter_repo(make_repo: Callable[[str], GitRepo]) -> tuple[list[str], list[str]]:
    """Six old ``src/`` commits, then 56 newer ``docs/`` commits that match the query far
    better. Returns (src hashes, docs hashes)."""
    repo = make_repo("big")
    src = [
        repo.commit(f"Refactor parser module {n}", {f"src/parser_{n}.py": f"X = {n}\n"})
        for n in range(6)
    ]
    docs = [
        repo.commit(
            f"Cookie samesite session browser note {n}",
            {f"docs/cookie_{n}.md": "cookie samesite session browser\n"},
        )
        for n in range(N_DECOYS)
    ]
    return src, docs


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_files_glob_filters_before_semantic_top_k(
    harness: Harness, make_repo: Callable[[str], GitRepo], mode: str
) -> None:
    src, _docs = build_filter_repo(make_repo)
    harness.index()
    unfiltered = harness.query("cookie samesite session browser", mode=mode, top_n=5)
    assert not set(r.hash for r in unfiltered.results) & set(src)
    response = harness.query(
        "cookie samesite session browser", mode=mode, top_n=5, files_glob="src/**/*.py"
    )
    assert response.effective_mode == mode
    assert len(response.results) == 5  # top_n filled: enough commits match the glob
    assert {r.hash for r in response.results} <= set(src)
    assert all(r.files_changed[0].startswith("src/") for r in response.results)
    check_scores(response)


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_time_filter_applies_before_semantic_top_k(
    harness: Harness, make_repo: Callable[[str], GitRepo], mode: str
) -> None:
    src, docs = build_filter_repo(make_repo)
    harness.index()
    stamps = dict(harness.rows("SELECT hash, timestamp FROM git_commits"))
    before = max(stamps[h] for h in src)
    response = harness.query("cookie samesite session browser", mode=mode, top_n=5, before=before)
    assert len(response.results) == 5
    assert {r.hash for r in response.results} <= set(src)
    # an inclusive window in the middle of the docs commits
    after, until = stamps[docs[10]], stamps[docs[12]]
    window = harness.query(
        "cookie samesite session browser", mode=mode, top_n=10, after=after, before=until
    )
    assert {r.hash for r in window.results} == set(docs[10:13])
    assert all(after <= r.timestamp <= until for r in window.results)


# -- missing and partial vectors -------------------------------------------------------------


def test_partial_embeddings_warn_and_semantic_returns_only_embedded(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    repo, hashes = build_topic_repo(make_repo)
    harness.index()
    late = [
        repo.commit("Add zeppelin docking schedule", {"ops/zeppelin.txt": "dock at 9\n"}),
        repo.commit("Cookie banner copy edit", {"web/banner.html": "<p>cookies</p>\n"}),
    ]
    harness.index(embed=False)
    total = len(hashes) + len(late)
    assert harness.scalar("SELECT count(*) FROM commit_vectors") == len(hashes)

    semantic = harness.query("cookie banner zeppelin", mode="semantic", top_n=20)
    assert semantic.effective_mode == "semantic"
    assert semantic.embedded_fraction == pytest.approx(round(len(hashes) / total, 4))
    assert {r.hash for r in semantic.results} == set(hashes)  # never an unembedded commit
    assert all(r.semantic_rank is not None for r in semantic.results)
    codes = [w.code for w in semantic.warnings]
    assert codes == ["partial_embeddings"]
    assert f"{len(hashes)} of {total}" in semantic.warnings[0].message
    # semantic mode does not rank the rest by keywords: the warning says what it searched
    assert "semantic mode searches only those" in semantic.warnings[0].message
    assert "ranked by keywords" not in semantic.warnings[0].message

    hybrid = harness.query("zeppelin", mode="hybrid", top_n=20)
    assert hybrid.effective_mode == "hybrid"
    assert [w.code for w in hybrid.warnings] == ["partial_embeddings"]
    assert hybrid.warnings[0].message.endswith("the rest are ranked by keywords only")
    found = {r.hash: r for r in hybrid.results}
    assert late[0] in found  # the unembedded commit is still found by keywords
    assert found[late[0]].lexical_rank == 1
    assert found[late[0]].semantic_rank is None
    data = hybrid.to_dict()
    assert data["effective_mode"] == "hybrid"
    assert data["warning_details"][0]["code"] == "partial_embeddings"
    assert data["embedded_fraction"] == hybrid.embedded_fraction


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_no_vectors_degrades_to_lexical(
    harness: Harness, make_repo: Callable[[str], GitRepo], mode: str
) -> None:
    build_topic_repo(make_repo)
    harness.index(embed=False)
    searcher = harness.searcher()
    try:
        response = searcher.search("cookie samesite", mode=mode, top_n=3)
        assert response.requested_mode == mode
        assert response.effective_mode == "lexical"
        assert response.embedded_fraction == 0.0
        assert [w.code for w in response.warnings] == ["no_embeddings"]
        assert "gitquarry index" in response.warnings[0].message
        assert response.results and response.results[0].title.startswith("Fix cookie SameSite")
        assert all(r.semantic_rank is None for r in response.results)
        check_scores(response)
        # nothing to compare with: the query was never embedded
        ranker = searcher.semantic()
        assert ranker is not None
        assert ranker.embedder().calls == 0  # type: ignore[attr-defined]
    finally:
        searcher.close()


def test_provider_none_is_semantic_unavailable(
    workspace_dir: Path, make_repo: Callable[[str], GitRepo]
) -> None:
    build_topic_repo(make_repo)
    harness = Harness(workspace_dir, provider="none")
    _, extras = harness.index()
    assert extras.embeddings is None
    for mode in ("hybrid", "semantic"):
        response = harness.query("cookie", mode=mode)
        assert response.effective_mode == "lexical"
        assert [w.code for w in response.warnings] == ["semantic_unavailable"]
        assert response.results
    lexical = harness.query("cookie", mode="lexical")
    assert lexical.warnings == []


def test_long_lived_searcher_sees_vectors_indexed_after_it_started(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    """The MCP server keeps one searcher for its whole life; vectors computed by a later
    `gitquarry index` must be used without restarting it."""
    repo, _ = build_topic_repo(make_repo)
    harness.index(embed=False)
    searcher = harness.searcher()
    try:
        before = searcher.search("cookie samesite", mode="hybrid")
        assert before.effective_mode == "lexical"
        harness.index(embed=True)
        after = searcher.search("cookie samesite", mode="hybrid")
        assert after.effective_mode == "hybrid"
        assert after.embedded_fraction == 1.0
        assert after.warnings == []
        # a later commit and its vector: the cached matrix is refreshed, not reused stale
        fresh = repo.commit("Add zeppelin mooring", {"ops/zeppelin.txt": "mast 3\n"})
        harness.index(embed=True)
        latest = searcher.search("zeppelin mooring", mode="semantic", top_n=1)
        assert latest.embedded_fraction == 1.0 and latest.warnings == []
        assert latest.results[0].hash == fresh
    finally:
        searcher.close()
