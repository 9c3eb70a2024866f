"""Issue 8 §2: the lexical ``score`` says how well a commit matches, not only where it ranks:
0.5 for holding every query word plus 0.5 × BM25 / the query's largest possible BM25
(``history.scores``), in [0, 1], sorted descending, independent of the other results."""

from __future__ import annotations

import math

import pytest

from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval.fts import expression_phrases, fts5_string

from .conftest import BASE_TIME, GitRepo, Indexer

DAY = 86_400
LONG_FILE = "".join(f"line {n} of an unrelated module with words\n" for n in range(150))


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    ws = tmp_path_factory.mktemp("scores")
    repo = GitRepo(ws / "repo")
    hashes = {
        "title": repo.commit({"s.py": "x = 1\n"}, "Fix session timeout handling", BASE_TIME),
        "weak": repo.commit(
            {"big.py": LONG_FILE + "# the session may hit a timeout here\n" + LONG_FILE},
            "Refactor the big module", BASE_TIME + DAY,
        ),
        "typo": repo.commit(
            {"doc.py": LONG_FILE + '"""Return the session."""\n'}, "Fix typo in docstring",
            BASE_TIME + 2 * DAY,
        ),
    }
    for n in range(12):
        when = BASE_TIME + (3 + n) * DAY
        repo.commit({f"f{n}.txt": f"filler {n}\n"}, f"Unrelated change {n}", when)
    indexer = Indexer(ws)
    indexer.run()
    return hashes, indexer


def run(indexer, query, **kwargs):
    with indexer.open() as store:
        return search_git_history(store, query, mode="lexical", top_n=10, **kwargs)


def expected_score(indexer, query, bm25, every):
    """The documented formula, computed independently of ``history.scores``."""
    with indexer.open() as store:
        rows = store.conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]
        upper = 0.0
        for phrase in expression_phrases(query):
            hits = store.conn.execute(
                "SELECT count(*) FROM commit_fts WHERE commit_fts MATCH ?", (fts5_string(phrase),)
            ).fetchone()[0]
            idf = math.log((rows - hits + 0.5) / (hits + 0.5))
            upper += (idf if idf > 0 else 1e-6) * 2.2
    return 0.5 * every + 0.5 * (-bm25 / upper)


def test_scores_follow_the_documented_formula(scored):
    hashes, indexer = scored
    response = run(indexer, "session timeout")
    got = {r.hash: r for r in response.results}
    assert list(got) == [hashes["title"], hashes["weak"], hashes["typo"]]
    for key, every in (("title", True), ("weak", True), ("typo", False)):
        r = got[hashes[key]]
        assert r.score == pytest.approx(expected_score(indexer, "session timeout", r.bm25, every),
                                        abs=1e-6)
        assert r.lexical_score == r.score


def test_scores_say_how_well_a_commit_matches(scored):
    hashes, indexer = scored
    by_hash = {r.hash: r.score for r in run(indexer, "session timeout").results}
    title, weak, typo = (by_hash[hashes[k]] for k in ("title", "weak", "typo"))
    assert 0.5 < weak < title < 1.0  # both words: above 0.5; in the title: much stronger
    assert title - weak > 0.1
    assert 0.0 < typo < 0.5  # the docstring typo fix holds one word of two
    # a one-word query: the typo fix is no longer "score 1.000"
    single = {r.hash: r.score for r in run(indexer, "session").results}
    assert single[hashes["typo"]] < single[hashes["title"]] < 1.0


def test_a_score_does_not_depend_on_the_other_results(scored):
    hashes, indexer = scored
    everything = {r.hash: r.score for r in run(indexer, "session timeout").results}
    alone = run(indexer, "session timeout", after=BASE_TIME + DAY, before=BASE_TIME + DAY)
    assert [(r.hash, r.score) for r in alone.results] == [
        (hashes["weak"], everything[hashes["weak"]])
    ]


def test_scores_in_unit_interval_and_sorted(scored):
    _, indexer = scored
    for query in ("session timeout", "fix", "unrelated change filler", "module session zzz"):
        scores = [r.score for r in run(indexer, query).results]
        assert scores == sorted(scores, reverse=True)
        assert all(0.0 <= s <= 1.0 for s in scores)


def test_explain_shows_rank_bm25_and_lexical_score(scored, cli):
    _, indexer = scored
    code, out, _ = cli("history", "session timeout", "--project", str(indexer.root),
                       "--mode", "lexical", "--explain")
    assert code == 0
    assert "bm25 rank 1 (bm25 -" in out and "lexical score 0." in out


def test_idf_never_fails_on_inconsistent_counts():
    from gitquarry.history.search.scores import IDF_FLOOR, fts5_idf

    assert fts5_idf(10, 12) == IDF_FLOOR
    assert fts5_idf(0, 0) == IDF_FLOOR
    assert fts5_idf(100, 1) > 4
