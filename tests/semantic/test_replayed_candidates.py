"""Issue 21 target 3: the ranking past the results (``ranking_depth``: what a cursor pins) is
the same when its pipeline run replays the candidates the results' run read
(``engine._ReplayedStream``) as when it builds them again, and when the results' own
pipeline run reads on (``engine.RESUME``: ``retrieval.pipeline.extend_pipeline``), on a
history with merges, cherry-picked copies and every filter kind, in every mode and with
copies collapsed or not. The reference is the first way (REPLAY and RESUME off: a second
pipeline run over candidates built again)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from gitquarry.history.search import engine

from .conftest import GitRepo, Harness
from .test_top_n_prefix import FILTERS, _words, build_history


def _ranking(response: Any) -> tuple[Any, ...]:
    shown = [(r.hash, r.score, r.bm25, r.lexical_rank, r.semantic_rank, r.similarity,
              tuple(c["hash"] for c in r.copies), repr(r.pipeline)) for r in response.results]
    later = [repr(h) for h in response.more]
    return tuple(shown), tuple(later), repr(response.pipeline)


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_the_pinned_ranking_is_the_same_with_replayed_candidates(
    harness: Harness, make_repo: Callable[[str], GitRepo], mode: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo("repo")
    build_history(repo, seed=24)
    harness.index()
    rng = random.Random(2424)
    queries = [_words(rng, rng.randint(1, 3)) for _ in range(4)] + ["fish completion"]
    searcher = harness.searcher()
    replayed = 0
    try:
        for query in queries:
            for extra in [*FILTERS, {"sort": "oldest"}]:
                for top_n, depth in ((3, 50), (10, 40), (1, 12)):
                    answers = []
                    for replay, resume in ((False, False), (True, False), (True, True),
                                           (False, True)):
                        monkeypatch.setattr(engine, "REPLAY", replay)
                        monkeypatch.setattr(engine, "RESUME", resume)
                        answers.append(_ranking(searcher.search(
                            query, top_n=top_n, mode=mode, ranking_depth=depth, **extra)))
                    assert answers[1:] == [answers[0]] * 3, (query, extra, top_n)
                    replayed += bool(answers[1][1])
    finally:
        searcher.close()
    assert replayed > 10  # the ranking past the results was not empty
