"""The lexical floor end to end (issue 22: "fusion must not throw away a lexical hit that the
vectors cannot see"): in a real repository, the only commit holding every word of a prose
question is first by keywords, but its vector reads 400 other words, so the vectors rank it
below twenty commits that share two or three of the words. With the vectors' weight high,
plain RRF pushes it out of the hybrid top 10; the shipped floor keeps it there. Real git,
real index.db, the fake embedder through the real registry. A question that no commit matches
in full is ranked exactly as without the floor."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gitquarry.retrieval import fusion
from gitquarry.retrieval.fusion import LexicalFloor, query_shape

from .conftest import GitRepo, Harness

QUERY = "lantern ribbon harbor meadow copper"
WORDS = QUERY.split()


def _build(make_repo: Callable[[str], GitRepo]) -> str:
    repo = make_repo("app")
    for n in range(20):  # each shares two or three of the words, in a short title
        shared = [WORDS[(n + i) % 5] for i in range(2 + n % 2)]
        repo.commit(f"{' '.join(shared)} tweak{n} part{n}",
                    {f"src/decoy{n}.txt": f"{' '.join(shared)} value {n}\n"})
    for n in range(8):  # unrelated commits
        repo.commit(f"unrelated chore number {n}", {f"misc/{n}.txt": f"chore {n}\n"})
    filler = " ".join(f"filler{n}" for n in range(400))
    return repo.commit(f"storage rework\n\n{filler}\n\n{QUERY}",
                       {"src/storage.txt": "storage layer rework\n"})


def _hashes(harness: Harness, mode: str) -> list[str]:
    return [r.hash for r in harness.query(QUERY, mode=mode, top_n=10).results]


def test_a_full_keyword_match_the_vectors_do_not_see_stays_in_the_hybrid_top_ten(
    harness: Harness, make_repo: Callable[[str], GitRepo], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert query_shape(QUERY) == "natural"  # prose: the vectors weigh twice
    target = _build(make_repo)
    harness.search = {"semantic_weight": 4.0}
    harness.index()
    assert _hashes(harness, "lexical")[0] == target
    semantic = [r.hash for r in harness.query(QUERY, mode="semantic", top_n=40).results]
    assert semantic.index(target) >= 15  # the vectors barely see it
    assert target in _hashes(harness, "hybrid")
    # only hits holding every word are promised: with "zeppelin" (in no commit) nothing
    # holds every word, and the floor changes nothing
    partial = "lantern ribbon harbor meadow zeppelin"
    assert all(r.score < 0.5 for r in harness.query(partial, mode="lexical", top_n=10).results)
    with_floor = [(r.hash, r.score)
                  for r in harness.query(partial, mode="hybrid", top_n=10).results]
    monkeypatch.setattr(fusion, "LEXICAL_FLOOR", LexicalFloor(keep=0))
    assert target not in _hashes(harness, "hybrid")  # without the floor it drops out
    assert [(r.hash, r.score) for r in harness.query(partial, mode="hybrid", top_n=10).results
            ] == with_floor
