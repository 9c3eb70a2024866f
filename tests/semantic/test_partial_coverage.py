"""Hybrid search while vectors are still being computed (issue 20 §4): at 5 %, 25 %, 50 % and 100
% of commits embedded, hybrid never ranks a commit without a vector below its lexical rank, so
on a relevance set (each query a commit's own title) an answer that has no vector yet is found
by hybrid at least as high as by lexical. (Answers that have a vector move with the embedder's
judgement: the fake embedder's vectors are word hashes, no measure of quality; the real model's
figures on the click set are in docs/performance.md.) A real repository, a real index, the fake
embedder (through the real registry); coverage is cut by deleting vectors from the real index,
as an interrupted embedding run leaves it."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from .conftest import GitRepo, Harness

# issue 24: seconds per test (daemons, Chromium, an index per case); CI runs the slow set
pytestmark = pytest.mark.slow

WORDS = [
    "fish", "bash", "zsh", "completion", "prompt", "pager", "editor", "progress",
    "colour", "option", "flag", "group", "context", "parser", "default", "value", "help",
    "text", "stream", "path", "file", "timeout", "retry", "cache", "loader", "config",
    "echo", "style", "shell", "script", "command",
]


@pytest.fixture
def titled(harness: Harness, make_repo: Callable[[str], GitRepo]) -> tuple[Harness, list[str],
                                                                            dict[str, str]]:
    rng = random.Random(4)
    repo = make_repo("repo")
    titles: dict[str, str] = {}
    for n in range(90):
        title = " ".join(rng.sample(WORDS, rng.randint(2, 4)))
        body = " ".join(rng.choice(WORDS) for _ in range(12))
        commit = repo.commit(f"{title}\n\n{body}", {f"f{n % 7}.txt": f"{body} {n}\n"})
        titles[commit] = title
    harness.index()
    queries = rng.sample(sorted(titles), 30)
    return harness, queries, titles


def _rank(response, commit: str) -> int | None:  # type: ignore[no-untyped-def]
    hashes = [r.hash for r in response.results]
    return hashes.index(commit) + 1 if commit in hashes else None


def _mrr(ranks: list[int | None]) -> float:
    return sum(1 / r for r in ranks if r) / len(ranks)


@pytest.mark.parametrize("coverage", [0.05, 0.25, 0.5, 1.0])
def test_hybrid_never_ranks_an_unembedded_commit_below_its_lexical_rank(
    titled, coverage: float,
) -> None:
    harness, queries, titles = titled
    ids = [int(r[0]) for r in harness.rows("SELECT id FROM git_commits ORDER BY id")]
    keep = set(random.Random(int(coverage * 100)).sample(ids, max(1, round(coverage * len(ids)))))
    with harness.open() as store:
        store.conn.execute("DELETE FROM commit_vectors WHERE commit_id NOT IN "
                           f"({','.join(str(i) for i in keep)})")
        store.conn.commit()
    vectors = {int(r[0]) for r in harness.rows("SELECT commit_id FROM commit_vectors")}
    by_hash = {str(h): int(i) for i, h in harness.rows("SELECT id, hash FROM git_commits")}
    searcher = harness.searcher()
    lexical_ranks: list[int | None] = []
    hybrid_ranks: list[int | None] = []
    try:
        for commit in queries:
            query = titles[commit]
            lexical = searcher.search(query, top_n=20, mode="lexical", collapse=False)
            hybrid = searcher.search(query, top_n=20, mode="hybrid", collapse=False)
            assert hybrid.effective_mode == "hybrid"
            assert hybrid.embedded_fraction == pytest.approx(len(vectors) / len(ids), abs=1e-3)
            lexical_ranks.append(_rank(lexical, commit))
            hybrid_ranks.append(_rank(hybrid, commit))
            # the rule: a commit without a vector never drops below its lexical rank
            hybrid_order = [r.hash for r in hybrid.results]
            for n, result in enumerate(lexical.results, start=1):
                if by_hash[result.hash] not in vectors:
                    assert result.hash in hybrid_order[:n], (query, result.hash, n)
    finally:
        searcher.close()
    unembedded = [n for n, commit in enumerate(queries) if by_hash[commit] not in vectors]
    assert unembedded or coverage == 1.0
    lex = [lexical_ranks[n] for n in unembedded]
    hyb = [hybrid_ranks[n] for n in unembedded]
    assert _mrr(hyb) >= _mrr(lex) if unembedded else True, (coverage, lex, hyb)
    for before, after in zip(lex, hyb, strict=True):
        assert before is None or (after is not None and after <= before), (coverage, lex, hyb)
