"""Issue 21 target 3: the keyword ranking from compact postings (``history.phrase_cache``:
row id + FTS5's weighted count per row, BM25 computed at query time, built by the
background thread) equals the brute-force reference (FTS5 ``bm25()`` of the OR expression
for every matching row, the AND set, every filter applied in Python) hit for hit and value
for value: random corpora, every filter, many ``top_n``/depths, and index state changes
between queries (commits added, a row rewritten in place with the same token count, a row
deleted)."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest

from gitquarry.history.search import phrase_cache
from gitquarry.history.search.candidates import Filters, GlobCandidates
from gitquarry.history.search.engine import search_git_history
from gitquarry.history.search.lexical import BM25_WEIGHTS, lexical_top_k, rank_lexical
from gitquarry.retrieval.filters import compile_glob
from gitquarry.retrieval.fts import parse_query

from .conftest import BASE_TIME, FastCommit, GitRepo, Indexer

HOUR = 3600
WEIGHTS = ", ".join(str(w) for w in BM25_WEIGHTS)
SPECIAL = ["parseConfigFile", "HttpAdapter.py", "v2.0.1", "数据库", "loadUserProfile",
           "config_file", "XMLHttpRequest"]
PEOPLE = [("Alice Liddell", "alice@example.com"), ("Bob Busy", "bob@example.com"),
          ("Carol Quiet", "carol@example.com")]
GLOBS = ("src/**/*.py", "docs/*.md", "src/a*/**", "nothing/**")


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 7)))
            for _ in range(rng.randint(8, 30))]


def _corpus(rng: random.Random, n: int, start: int = 0) -> list[FastCommit]:
    """``n`` commits from a skewed random vocabulary (a few words in most commits), with
    expanded words, repeated words, three authors and paths under src/ and docs/."""
    vocab = _vocabulary(random.Random(rng.random()))
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    commits = []
    for i in range(start, start + n):
        def words(k: int) -> str:
            picked = rng.choices(vocab, weights, k=k)
            if rng.random() < 0.15:
                picked.append(rng.choice(SPECIAL))
            return " ".join(picked)
        title = words(rng.randint(1, 4))
        body = words(rng.randint(0, 15))
        diff = "\n".join(words(rng.randint(1, 9)) for _ in range(rng.randint(1, 8)))
        path = (f"src/{rng.choice(vocab)}/{rng.choice(vocab)}.py" if rng.random() < 0.7
                else f"docs/{i}.md")
        commits.append(FastCommit({path: f"{i}\n{diff}\n"}, f"{title}\n\n{body}",
                                  BASE_TIME + i * HOUR, author=rng.choice(PEOPLE)))
    return commits


def _queries(rng: random.Random, conn: sqlite3.Connection, n: int) -> list[str]:
    """Random queries of the corpus's own words (title words), expansions and misses."""
    titles = [r[0] for r in conn.execute("SELECT title FROM git_commits")]
    pool = sorted({w for t in titles for w in t.split()})
    pool += [*SPECIAL, "bob", "alice", "nothinghere", "--"]
    return [" ".join(rng.choice(pool) for _ in range(rng.choice((1, 1, 2, 2, 3, 4))))
            for _ in range(n)]


def reference(conn: sqlite3.Connection, query: str, filters: Filters,
              ) -> list[tuple[int, float, bool]]:
    """The lexical ranking by brute force: FTS5 ``bm25()`` of the OR expression for every
    matching row, the AND expression's rows first, then by bm25 and row id; the time, merge
    and glob filters applied in Python to every stored commit."""
    terms = parse_query(query)
    if not terms.words:
        return []
    scored = conn.execute(
        f"SELECT rowid, bm25(commit_fts, {WEIGHTS}) FROM commit_fts WHERE commit_fts MATCH ?",
        (terms.expression("OR"),)).fetchall()
    every = {r[0] for r in conn.execute(
        "SELECT rowid FROM commit_fts WHERE commit_fts MATCH ?", (terms.expression("AND"),))}
    if len(terms.words) > 1:
        # the AND group's values are the AND expression's (the OR one reports other phrases)
        and_values = dict(conn.execute(
            f"SELECT rowid, bm25(commit_fts, {WEIGHTS}) FROM commit_fts "
            "WHERE commit_fts MATCH ?", (terms.expression("AND"),)).fetchall())
        scored = [(cid, and_values[cid] if cid in every else s) for cid, s in scored]
    rows = {r[0]: (r[1], r[2], json.loads(r[3])) for r in conn.execute(
        "SELECT id, timestamp, is_merge, files_changed FROM git_commits")}
    match = compile_glob(filters.files_glob) if filters.files_glob else None

    def passes(cid: int) -> bool:
        if cid not in rows:
            return False
        when, merge, files = rows[cid]
        if filters.after is not None and when < filters.after:
            return False
        if filters.before is not None and when > filters.before:
            return False
        if filters.merges == "exclude" and merge:
            return False
        if filters.merges == "only" and not merge:
            return False
        return match is None or any(match(f) for f in files)

    kept = [(cid, s, cid in every) for cid, s in scored if passes(cid)]
    kept.sort(key=lambda hit: (not hit[2], hit[1], hit[0]))
    return kept


def _ranked(conn: sqlite3.Connection, query: str, filters: Filters,
            limit: int) -> list[tuple[int, float, bool]]:
    has_glob = filters.files_glob is not None
    if has_glob:
        assert filters.files_glob is not None
        GlobCandidates(conn, filters.files_glob).materialize()
    total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    hits = lexical_top_k(conn, query, Filters(after=filters.after, before=filters.before,
                                              merges=filters.merges),
                         limit, has_glob=has_glob, total_docs=total)
    return [tuple(h) for h in hits]  # type: ignore[misc]


def _random_filters(rng: random.Random, n_commits: int) -> Filters:
    shape = rng.random()
    after = before = None
    if shape < 0.25:
        after = BASE_TIME + rng.randint(0, n_commits) * HOUR
    elif shape < 0.4:
        before = BASE_TIME + rng.randint(0, n_commits) * HOUR
    elif shape < 0.55:
        after = BASE_TIME + rng.randint(0, n_commits) * HOUR
        before = after + rng.randint(0, n_commits) * HOUR
    merges = rng.choice((None, None, None, "exclude", "only"))
    glob = rng.choice(GLOBS) if rng.random() < 0.3 else None
    return Filters(files_glob=glob, after=after, before=before, merges=merges)


def _build(tmp_path, seed: int, n: int) -> tuple[GitRepo, Indexer]:
    rng = random.Random(seed)
    repo = GitRepo(tmp_path / f"ws{seed}" / "repo")
    repo.fast_import(_corpus(rng, n))
    repo.branch("side", "HEAD~3")
    repo.checkout("side")
    repo.commit({"side.txt": "side\n"}, "side branch work", BASE_TIME + (n + 1) * HOUR)
    repo.checkout("main")
    repo.merge("side", message="merge side branch", date=BASE_TIME + (n + 2) * HOUR)
    indexer = Indexer(tmp_path / f"ws{seed}")
    indexer.run()
    return repo, indexer


@pytest.fixture
def background_cache(monkeypatch):
    monkeypatch.setattr(phrase_cache, "BACKGROUND", True)
    monkeypatch.setattr(phrase_cache, "_broken", False)
    phrase_cache.clear()
    phrase_cache.enable()
    try:
        yield
    finally:
        phrase_cache.enable(False)
        phrase_cache.wait_idle()
        phrase_cache.clear()


def _check_queries(conn: sqlite3.Connection, queries: list[str], rng: random.Random,
                   n_commits: int) -> int:
    """Each query under random filters and limits, twice (the first may be FTS5's while
    the builder runs, the second after it): both equal the reference. Returns how many
    were answered from the postings."""
    answered = 0
    for query in queries:
        filters = _random_filters(rng, n_commits)
        expected = reference(conn, query, filters)
        for _ in range(2):
            before = phrase_cache.stats["answered"]
            for limit in (1, rng.randint(2, 12), 60, 500):
                got = _ranked(conn, query, filters, limit)
                assert got == expected[:limit], (query, filters, limit)
            answered += phrase_cache.stats["answered"] > before
            assert phrase_cache.wait_idle()
    return answered


@pytest.mark.parametrize("seed,n", [(1, 300), (2, 700), (3, 150)])
def test_random_corpora_rank_as_the_brute_force_reference(tmp_path, background_cache,
                                                          seed, n):
    _, indexer = _build(tmp_path, seed, n)
    refused = phrase_cache.stats["refused"]
    rng = random.Random(seed * 7)
    with indexer.open() as store:
        queries = _queries(rng, store.conn, 40)
        answered = _check_queries(store.conn, queries, rng, n)
    assert answered > len(queries) // 2  # mostly answered by the postings, not by FTS5
    assert phrase_cache.enabled()
    assert phrase_cache.stats["refused"] == refused


def test_state_changes_between_queries_never_serve_old_postings(tmp_path, background_cache):
    """One long-lived store (as the MCP server holds it) while the index changes under it:
    commits added by the indexer, an old row rewritten in place with the same token count
    (an author renamed: no size signal), a row deleted."""
    repo, indexer = _build(tmp_path, 4, 250)
    rng = random.Random(44)
    with indexer.open() as reader:
        conn = reader.conn
        queries = [*_queries(rng, conn, 12), "bob", "alice busy", "zed", "zed bob"]
        _check_queries(conn, queries, rng, 260)
        answered = phrase_cache.stats["answered"]

        for c in _corpus(random.Random(9), 25, start=300):
            repo.commit(c.files, c.message, c.date, author=c.author or PEOPLE[0])
        indexer.run()
        _check_queries(conn, queries, rng, 360)

        with indexer.open() as writer:
            victim = writer.conn.execute(
                "SELECT id FROM git_commits WHERE author LIKE 'Bob%' ORDER BY id LIMIT 1"
            ).fetchone()[0]
            writer.conn.execute(
                "UPDATE git_commits SET author = 'Zed Busy <bob@example.com>' WHERE id = ?",
                (victim,))
            writer.conn.commit()
        _check_queries(conn, queries, rng, 360)
        assert any(h[0] == victim for h in reference(conn, "zed", Filters()))

        with indexer.open() as writer:
            gone = writer.conn.execute(
                "SELECT id FROM git_commits WHERE author LIKE 'Alice%' ORDER BY id DESC LIMIT 1"
            ).fetchone()[0]
            writer.conn.execute("DELETE FROM repo_commits WHERE commit_id = ?", (gone,))
            writer.conn.execute("DELETE FROM git_commits WHERE id = ?", (gone,))
            writer.conn.commit()
        _check_queries(conn, queries, rng, 360)
        assert all(h[0] != gone for h in reference(conn, "alice", Filters()))
    assert phrase_cache.stats["answered"] > answered  # the new states were answered too
    assert phrase_cache.enabled()


def test_whole_searches_equal_with_and_without_the_postings(tmp_path, background_cache):
    """search_git_history (result pipeline, merges, globs, windows, the pinned ranking past
    the results) gives the same responses with the postings on and off."""
    _, indexer = _build(tmp_path, 5, 400)
    rng = random.Random(55)
    with indexer.open() as store:
        queries = _queries(rng, store.conn, 15)
        for query in queries:
            kwargs: dict = {"top_n": rng.choice((1, 3, 10, 50, 100))}
            f = _random_filters(rng, 400)
            for name in ("after", "before", "files_glob", "merges"):
                if getattr(f, name) is not None:
                    kwargs[name] = getattr(f, name)
            depth = rng.choice((0, 20, 50))
            answers = []
            for on in (False, True, True):
                phrase_cache.enable(on)
                response = search_git_history(store, query, mode="lexical",
                                              ranking_depth=depth, **kwargs)
                phrase_cache.wait_idle()
                answers.append(([(r.hash, r.score, r.bm25, r.lexical_rank)
                                 for r in response.results], repr(response.more)))
            assert answers[0] == answers[1] == answers[2], (query, kwargs, depth)
    assert phrase_cache.stats["answered"] > 0


def test_a_phrase_whose_values_are_not_reproduced_is_never_kept(tmp_path, background_cache,
                                                                monkeypatch):
    """The builder checks every row's value against FTS5's: a formula off by one unit in the
    last place (as a differently built C library would give) keeps nothing."""
    _, indexer = _build(tmp_path, 6, 120)
    counts = dict(phrase_cache.stats)
    real = phrase_cache._term_values
    monkeypatch.setattr(phrase_cache, "_term_values",
                        lambda p, k: real(p, k) * (1 + 2**-52))
    with indexer.open() as store:
        for query in ("bob", "alice bob", "HttpAdapter.py bob"):
            expected = reference(store.conn, query, Filters())
            for _ in range(3):
                assert _ranked(store.conn, query, Filters(), 30) == expected[:30]
                phrase_cache.wait_idle()
    assert phrase_cache.stats["refused"] > counts["refused"]
    assert phrase_cache.stats["answered"] == counts["answered"]


def test_the_postings_budget_bounds_memory(tmp_path, background_cache, monkeypatch):
    """Past ``MAX_ENTRIES`` a phrase is not kept (nothing is evicted) and its queries are
    FTS5's, with the same answers."""
    monkeypatch.setattr(phrase_cache, "MAX_ENTRIES", 60)
    _, indexer = _build(tmp_path, 7, 200)
    refused = phrase_cache.stats["refused"]
    rng = random.Random(77)
    with indexer.open() as store:
        queries = _queries(rng, store.conn, 15)
        _check_queries(store.conn, queries, rng, 200)
    assert 0 < phrase_cache._entries <= 60
    assert phrase_cache.stats["refused"] == refused  # refused for room, not by the check
    assert any(state.refused for state in phrase_cache._states.values())


def _varint(value: int) -> bytes:
    """SQLite's varint encoding (``sqlite3PutVarint``)."""
    if value > 0x00FFFFFFFFFFFFFF:
        out = [value & 0xFF]
        value >>= 8
        for _ in range(8):
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(reversed(out))
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(groups))


def test_row_sizes_decode_every_varint_length():
    rng = random.Random(3)
    sizes = [[rng.choice((0, 1, 127, 128, 300, 16383, 16384, 2**21 + 5, 2**35, 2**56 + 3,
                          rng.randint(0, 5000))) for _ in range(6)] for _ in range(400)]
    for batch in (sizes, [s for s in sizes if max(s) < 2**49]):
        blobs = [b"".join(_varint(v) for v in row) for row in batch]
        assert [phrase_cache._varints(b) for b in blobs] == batch
        assert phrase_cache._row_sizes(blobs).tolist() == [sum(row) for row in batch]


def test_real_docsize_records_give_fts5s_values(tmp_path, background_cache):
    """``rank`` with one phrase returns FTS5's own bm25 for every row (the row constants
    from the docsize and averages records are FTS5's)."""
    _, indexer = _build(tmp_path, 8, 200)
    with indexer.open() as store:
        terms = parse_query("bob")
        for _ in range(2):
            got = phrase_cache.rank(store.conn, terms, 10_000, WEIGHTS)
            phrase_cache.wait_idle()
        assert got is not None
        fts = dict(store.conn.execute(
            f"SELECT rowid, bm25(commit_fts, {WEIGHTS}) FROM commit_fts "
            "WHERE commit_fts MATCH '\"bob\"'").fetchall())
        assert len(got) == len(fts) > 0
        assert all(fts[d] == s for d, s, _ in got)
        top = rank_lexical(store.conn, terms, Filters(), 5, has_glob=False)
        assert [tuple(h) for h in top] == got[:5]
