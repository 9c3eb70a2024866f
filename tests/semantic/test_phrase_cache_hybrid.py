"""Issue 21 target 3: hybrid (and lexical) searches answer the same with the per-phrase BM25
terms kept (``history.phrase_cache``, as the MCP server runs) as without, on a history with
merges, copies and every filter kind: hashes, scores, each ranker's evidence, copies."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from gitquarry.history.search import phrase_cache

from .conftest import GitRepo, Harness
from .test_top_n_prefix import FILTERS, _words, build_history


def _answer(response: Any) -> list[tuple[Any, ...]]:
    return [(r.hash, r.score, r.bm25, r.lexical_rank, r.semantic_rank, r.similarity,
             r.lexical_score, tuple(c["hash"] for c in r.copies)) for r in response.results]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_searches_equal_with_and_without_the_kept_terms(
    harness: Harness, make_repo: Callable[[str], GitRepo], mode: str
) -> None:
    repo = make_repo("repo")
    build_history(repo, seed=21)
    harness.index()
    rng = random.Random(2121)
    queries = [_words(rng, rng.randint(1, 3)) for _ in range(5)] + ["fish completion"]
    searcher = harness.searcher()
    phrase_cache.clear()
    try:
        for query in queries:
            for extra in [*FILTERS, {"before": 10**10, "merges": "exclude"}]:
                answers = []
                for on in (False, True, True):  # off, then the cache filling, then kept
                    phrase_cache.enable(on)
                    answers.append(_answer(searcher.search(query, top_n=10, mode=mode,
                                                           **extra)))
                    phrase_cache.wait_idle()  # the background builder keeps the phrases
                assert answers[0] == answers[1] == answers[2], (query, extra)
        assert phrase_cache.stats["answered"] > 0
    finally:
        phrase_cache.enable(False)
        phrase_cache.clear()
        searcher.close()
