"""Issue 21 target 3: the lexical ranking from per-phrase BM25 terms kept per index state
(``history.phrase_cache``) equals FTS5's own ranking hit for hit, value for value, over
random queries (plain words, identifiers with expansions, versions, CJK, repeated and
missing words) and random filters; and a state change never serves old terms."""

from __future__ import annotations

import random

import pytest

from gitquarry.history.search import phrase_cache
from gitquarry.history.search.candidates import Filters, GlobCandidates
from gitquarry.history.search.engine import search_git_history
from gitquarry.history.search.lexical import BM25_WEIGHTS, lexical_top_k, rank_lexical
from gitquarry.retrieval.fts import parse_query

from .conftest import BASE_TIME, FastCommit, GitRepo, Indexer

HOUR = 3600
N_COMMITS = 900
WORDS = ["parser", "cache", "render", "socket", "config", "loader", "widget", "schema",
         "router", "buffer", "common", "rare", "parse", "file", "http", "adapter"]
SPECIAL = ["parseConfigFile", "HttpAdapter.py", "v2.0.1", "2.0.1", "数据库", "修复数据库",
           "XMLHttpRequest", "loadUserProfile", "user", "profile", "config_file"]
GLOBS = ("src/**/*.py", "docs/*.md", "src/cache/**", "nothing/**", "src/*/parser.py")
WEIGHTS = ", ".join(str(w) for w in BM25_WEIGHTS)


def _commit(i: int, rng: random.Random) -> FastCommit:
    title = " ".join(rng.sample(WORDS, 2))
    if rng.random() < 0.2:
        title += " " + rng.choice(SPECIAL)
    body = " ".join(rng.choice(WORDS + SPECIAL) for _ in range(rng.randint(0, 12)))
    diff = "\n".join(" ".join(rng.choice(WORDS + SPECIAL) for _ in range(rng.randint(1, 8)))
                     for _ in range(rng.randint(1, 6)))
    if rng.random() < 0.5:
        diff += "\ncommon common"
    path = f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py" if i % 5 else f"docs/{i}.md"
    return FastCommit({path: f"{i}\n{diff}\n"}, f"{title}\n\n{body}", BASE_TIME + i * HOUR)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    ws = tmp_path_factory.mktemp("phrase_cache")
    repo = GitRepo(ws / "repo")
    rng = random.Random(21)
    repo.fast_import([_commit(i, rng) for i in range(N_COMMITS)])
    indexer = Indexer(ws)
    indexer.run()
    return indexer


@pytest.fixture
def cache_on(monkeypatch):
    """The cache on, building inline at a phrase's second miss (``BACKGROUND`` False: the
    counts of builds and hits below are exact; ``test_phrase_postings.py`` covers the
    background builder)."""
    monkeypatch.setattr(phrase_cache, "BACKGROUND", False)
    phrase_cache.clear()
    phrase_cache.enable()
    try:
        yield
    finally:
        phrase_cache.enable(False)
        phrase_cache.clear()


def _fts5(store, query, limit, filters=None, has_glob=False):
    """``rank_lexical`` with the cache off: FTS5's own AND then OR queries."""
    phrase_cache.enable(False)
    try:
        return rank_lexical(store.conn, query, filters or Filters(), limit, has_glob=has_glob)
    finally:
        phrase_cache.enable()


def _random_query(rng: random.Random) -> str:
    pool = WORDS + SPECIAL + ["nothinghere", "PARSER", "Cache", "--", "*", '"quoted"']
    return " ".join(rng.choice(pool) for _ in range(rng.choice((1, 1, 2, 2, 3, 4))))


def test_random_queries_rank_as_fts5_does(indexed, cache_on):
    rng = random.Random(5)
    with indexed.open() as store:
        store.conn.execute("BEGIN")
        try:
            for _ in range(120):
                query = _random_query(rng)
                limit = rng.choice((1, 5, 40, 400))
                filters = Filters()
                if rng.random() < 0.4:
                    lo = BASE_TIME + rng.randint(0, N_COMMITS) * HOUR
                    filters = Filters(after=rng.choice((lo, None)),
                                      before=lo + rng.randint(0, N_COMMITS) * HOUR,
                                      merges=rng.choice((None, "exclude", "only")))
                has_glob = rng.random() < 0.3
                if has_glob:
                    GlobCandidates(store.conn, rng.choice(GLOBS)).materialize()
                expected = _fts5(store, query, limit, filters, has_glob)
                got = rank_lexical(store.conn, query, filters, limit, has_glob=has_glob)
                assert got == expected, (query, limit, filters)
                assert phrase_cache.enabled(), query  # the FTS5 check at a state's start
        finally:
            store.conn.execute("ROLLBACK")
    assert phrase_cache.stats["answered"] > 0 and phrase_cache.stats["hits"] > 0
    assert phrase_cache.enabled()  # answered by the cache, not by its FTS5 fall-back


def test_random_filtered_searches_equal_the_uncached_search(indexed):
    """Whole searches (filters applied after ranking or inside it, globs, merges, top_n) give
    the same responses with the cache on and off."""
    rng = random.Random(6)
    with indexed.open() as store:
        for _ in range(40):
            query = _random_query(rng)
            kwargs: dict = {"top_n": rng.choice((1, 3, 10, 50))}
            shape = rng.random()
            if shape < 0.3:
                kwargs["after"] = BASE_TIME + rng.randint(0, N_COMMITS) * HOUR
            elif shape < 0.45:
                kwargs["before"] = BASE_TIME + rng.randint(0, N_COMMITS) * HOUR
            if rng.random() < 0.2:
                kwargs["merges"] = rng.choice(("exclude", "only"))
            if rng.random() < 0.3:
                kwargs["files_glob"] = rng.choice(("src/**/*.py", "docs/*.md", "src/cache/**"))
            answers = []
            for on in (False, True, True):
                phrase_cache.enable(on)
                try:
                    response = search_git_history(store, query, mode="lexical", **kwargs)
                finally:
                    phrase_cache.enable(False)
                answers.append([(r.hash, r.score, r.bm25, r.lexical_rank)
                                for r in response.results])
            assert answers[0] == answers[1] == answers[2], (query, kwargs)


def test_values_are_fts5s_own_for_every_group(indexed, cache_on):
    with indexed.open() as store:
        terms = parse_query("parseConfigFile 数据库 v2.0.1 HttpAdapter.py")
        rank_lexical(store.conn, terms, Filters(), N_COMMITS, has_glob=False)  # first miss
        answered = phrase_cache.stats["answered"]
        hits = rank_lexical(store.conn, terms, Filters(), N_COMMITS, has_glob=False)
        assert phrase_cache.stats["answered"] == answered + 1
        assert any(h.every for h in hits) and any(not h.every for h in hits)
        for operator, every in (("AND", True), ("OR", False)):
            fts = dict(store.conn.execute(
                f"SELECT rowid, bm25(commit_fts, {WEIGHTS}) FROM commit_fts "
                "WHERE commit_fts MATCH ?", (terms.expression(operator),)))
            for hit in hits:
                if hit.every is every:
                    assert fts[hit.id] == hit.bm25  # exact, not approximately


def test_a_new_index_state_never_serves_old_terms(tmp_path, cache_on):
    repo = GitRepo(tmp_path / "ws" / "repo")
    repo.commit({"a.txt": "x\n"}, "zeta parser", BASE_TIME)
    indexer = Indexer(tmp_path / "ws")
    indexer.run()
    with indexer.open() as store:
        for _ in range(3):
            first = lexical_top_k(store.conn, "zeta", Filters(), 10, has_glob=False)
            assert len(first) == 1
    for i in range(3):
        repo.commit({"b.txt": f"y{i}\n"}, f"zeta again {i}", BASE_TIME + 10 + i)
    indexer.run()
    scans, hits = phrase_cache.stats["scans"], phrase_cache.stats["hits"]
    with indexer.open() as store:
        for _ in range(3):  # a first miss in the new state (FTS5), a scan, then kept
            again = lexical_top_k(store.conn, "zeta", Filters(), 10, has_glob=False)
            assert again == _fts5(store, "zeta", 10)
            assert len(again) == 4
        assert phrase_cache.stats["scans"] == scans + 1  # scanned again, never served old
        assert phrase_cache.stats["hits"] == hits + 1


def test_a_differing_sum_turns_the_cache_off(indexed, cache_on, monkeypatch):
    """The first multi-phrase answer of a state is checked against FTS5; a difference (as a
    C library that fuses multiply-add would give) falls back to FTS5 for the process."""
    monkeypatch.setattr(phrase_cache, "_broken", False)  # restored (False) afterwards
    phrase_cache.clear()
    real = phrase_cache._top

    def skewed(docs, score, n):
        return [(d, s * (1 + 1e-15)) for d, s in real(docs, score, n)]

    monkeypatch.setattr(phrase_cache, "_top", skewed)
    with indexed.open() as store:
        phrase_cache.rank(store.conn, parse_query("parser cache"), 10, WEIGHTS)  # first miss
        assert phrase_cache.rank(store.conn, parse_query("parser cache"), 10, WEIGHTS) is None
        assert not phrase_cache.enabled()
        hits = rank_lexical(store.conn, "parser cache", Filters(), 10, has_glob=False)
    assert hits == _fts5_fresh(indexed, "parser cache", 10)


def _fts5_fresh(indexed, query, limit):
    with indexed.open() as store:
        return _fts5(store, query, limit)


# --- the brute-force reference of issue 8 §1, with the cache on ---------------------------

from .test_lexical_exact import (  # noqa: E402  (the reference's fixtures and cases)
    FILTERS,
    QUERIES,
    generated,  # noqa: F401
    reference,
)
from .test_lexical_exact import ranked as _ranked_hashes  # noqa: E402
from .test_lexical_exact import store as exact_store  # noqa: E402, F401


def test_brute_force_reference_with_the_cache_on(exact_store, cache_on):  # noqa: F811
    for query in QUERIES:
        for name, filters in FILTERS.items():
            expected = reference(exact_store, query, **filters)
            for top_n in (1, 7, 60):
                got = _ranked_hashes(exact_store, query, top_n, **filters)
                assert got == expected[:top_n], (query, name, top_n)
    assert phrase_cache.stats["answered"] > 0


def test_units_count_only_where_every_unit_matches(tmp_path, cache_on):
    """FTS5 reports an expansion's units at a row only when all of them are there (the
    ``AND`` node sits on the row): ``http adapter`` without ``py`` adds nothing to
    ``HttpAdapter.py``'s term, checked against FTS5 with the OR fill reaching those rows."""
    repo = GitRepo(tmp_path / "ws" / "repo")
    for i, title in enumerate(["http adapter zz", "py zz", "http adapter py", "zz other",
                               "unrelated", "py alone", "adapter http zz"]):
        repo.commit({f"f{i}.txt": f"{i}\n"}, title, BASE_TIME + i)
    indexer = Indexer(tmp_path / "ws")
    indexer.run()
    with indexer.open() as store:
        for query in ("HttpAdapter.py zz", "zz HttpAdapter.py", "HttpAdapter.py"):
            expected = _fts5(store, query, 10)
            assert expected
            for _ in range(2):  # the first miss, then kept
                assert rank_lexical(store.conn, query, Filters(), 10, has_glob=False) == expected
        assert phrase_cache.enabled()
