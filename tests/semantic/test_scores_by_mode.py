"""Issue 8 §2: what ``score`` is in semantic and hybrid mode (``history.scores``), and the
per-ranker evidence hybrid results carry."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import GitRepo, Harness
from .test_semantic_ranking import build_topic_repo, check_scores


def test_semantic_score_is_the_cosine_similarity(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    build_topic_repo(make_repo)
    harness.index()
    response = harness.query("cookie samesite session", mode="semantic", top_n=10)
    assert response.effective_mode == "semantic" and response.results
    for r in response.results:
        assert r.similarity is not None
        assert r.score == pytest.approx(max(0.0, min(1.0, r.similarity)), abs=1e-6)
        assert r.lexical_score is None and r.bm25 is None
    check_scores(response)


def test_hybrid_results_carry_both_rankers_evidence(
    harness: Harness, make_repo: Callable[[str], GitRepo]
) -> None:
    build_topic_repo(make_repo)
    harness.index()
    query = "cookie samesite session"
    hybrid = harness.query(query, mode="hybrid", top_n=10)
    lexical = {r.hash: r for r in harness.query(query, mode="lexical", top_n=10).results}
    semantic = {r.hash: r for r in harness.query(query, mode="semantic", top_n=10).results}
    assert hybrid.effective_mode == "hybrid"
    for r in hybrid.results:
        assert r.semantic_rank is not None and r.similarity is not None
        assert r.similarity == pytest.approx(semantic[r.hash].similarity, abs=1e-6)
        if r.hash in lexical:  # the lexical evidence is the lexical mode's score and bm25
            assert r.lexical_rank is not None
            assert r.lexical_score == lexical[r.hash].score
            assert r.bm25 == lexical[r.hash].bm25
        else:
            assert r.lexical_rank is None and r.lexical_score is None
    check_scores(hybrid)
    assert hybrid.results[0].to_dict(explain=True)["lexical_score"] is not None
    assert "lexical_score" not in hybrid.results[0].to_dict()
