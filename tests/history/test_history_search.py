"""Lexical search over a real index: FTS5 escaping, globs, time filters, ordering."""

from __future__ import annotations

import pytest

from gitquarry.errors import InvalidArgumentError, InvalidGlobError, InvalidTimeError
from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval.filters import compile_glob, parse_time
from gitquarry.retrieval.fts import fts5_match_expression
from gitquarry.retrieval.pipeline import PipelineSettings

from .conftest import BASE_TIME, FastCommit, GitRepo, Indexer

DAY = 86_400

MESSAGES = {
    "sota": "Adopt a state-of-the-art tokenizer",
    "rfc": "Implement RFC-0011 framing",
    "foo": "Rename foo.bar accessor",
    "parser": "parser: handle trailing commas",
    "dont": "don't retry forever",
    "cpp": "Port the C++ bindings",
    "quoted": 'Explain the "quoted" keyword',
    "other": "Unrelated housekeeping",
}


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory):
    """One repository whose commits hold the awkward query words, indexed once per module."""
    ws = tmp_path_factory.mktemp("corpus")
    repo = GitRepo(ws / "repo")
    hashes = {}
    for n, (key, message) in enumerate(MESSAGES.items()):
        hashes[key] = repo.commit({f"{key}.txt": f"{key} body\n"}, message, BASE_TIME + n * DAY)
    indexer = Indexer(ws)
    indexer.run()
    return hashes, indexer


@pytest.fixture
def corpus(corpus_index):
    """{key: commit hash} of the shared corpus."""
    return corpus_index[0]


@pytest.fixture
def indexer(request, workspace):
    """The shared corpus index for tests using ``corpus``, else a fresh workspace's."""
    if "corpus" in request.fixturenames:
        return request.getfixturevalue("corpus_index")[1]
    return Indexer(workspace)


def search(indexer, query, **kwargs):
    kwargs.setdefault("mode", "lexical")
    with indexer.open() as store:
        return search_git_history(store, query, **kwargs)


@pytest.mark.parametrize(
    ("query", "key"),
    [
        ("state-of-the-art", "sota"),
        ("RFC-0011", "rfc"),
        ("foo.bar", "foo"),
        ("parser:", "parser"),
        ("don't", "dont"),
        ("C++", "cpp"),
        ('"quoted"', "quoted"),
    ],
)
def test_fts_special_queries_find_the_right_commit(corpus, indexer, query, key):
    response = search(indexer, query, top_n=3)
    assert response.results, query
    assert response.results[0].hash == corpus[key]
    assert response.total_commits_indexed == len(MESSAGES)


@pytest.mark.parametrize("query", ["(x", "AND", "NEAR(a b", "*", "OR", "NOT", "-", '"', "a:b:c",
                                   "^", "col:", "))((", "NEAR(", '""""'])
def test_fts_operator_queries_never_error(corpus, indexer, query):
    response = search(indexer, query, top_n=5)
    assert isinstance(response.results, list)


def test_star_query_is_empty_with_warning(corpus, indexer):
    response = search(indexer, "*")
    assert response.results == []
    assert [w.code for w in response.warnings] == ["no_searchable_terms"]


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_gives_empty_results_and_warning(corpus, indexer, query):
    response = search(indexer, query)
    assert response.results == []
    assert [w.code for w in response.warnings] == ["empty_query"]
    assert response.total_commits_indexed == len(MESSAGES)


def test_match_expression_quotes_every_word():
    assert fts5_match_expression('NEAR(a b "c" *') == '"NEAR(a" AND "b" AND """c"""'
    assert fts5_match_expression("x y", "OR") == '"x" OR "y"'
    assert fts5_match_expression("* -- ()") == ""


@pytest.mark.parametrize("pattern", ["src/[a", "{a,b", "a}", "", "!src/*.py"])
def test_malformed_glob_raises_naming_the_pattern(corpus, indexer, pattern):
    with pytest.raises(InvalidGlobError) as info:
        search(indexer, "tokenizer", files_glob=pattern or " ")
    assert info.value.pattern == (pattern or " ")
    assert repr(pattern or " ") in str(info.value)


def test_malformed_glob_is_rejected_even_for_an_empty_query(corpus, indexer):
    with pytest.raises(InvalidGlobError):
        search(indexer, "", files_glob="src/[a")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**/*.py", "lib/src/a.py", False),
        ("src/**/*.py", "src/a.pyc", False),
        ("src/*.py", "src/x/a.py", False),
        ("*.md", "docs/deep/readme.md", True),
        ("*.md", "readme.md", True),
        ("docs/", "docs/a/b.txt", True),
        ("{src,lib}/*.py", "lib/a.py", True),
        ("src/?.py", "src/ab.py", False),
        ("a b.md", "a b.md", True),
        ("src/[ab].py", "src/b.py", True),
    ],
)
def test_glob_semantics(pattern, path, expected):
    assert compile_glob(pattern)(path) is expected


def test_glob_filter_in_search(make_repo, indexer):
    repo = make_repo()
    top = repo.commit({"src/a.py": "gadget\n"}, "gadget top level")
    deep = repo.commit({"src/x/y/a.py": "gadget\n"}, "gadget deep")
    lib = repo.commit({"lib/src/a.py": "gadget\n"}, "gadget in lib")
    indexer.run()
    got = {r.hash for r in search(indexer, "gadget", files_glob="src/**/*.py").results}
    assert got == {top, deep}
    assert lib not in got


def test_filters_apply_before_ranking(make_repo, indexer):
    """30 commits match the words; the 3 matching the glob rank lowest, yet all 3 come back."""
    repo = make_repo()
    commits = [
        FastCommit({f"docs/n{i}.md": f"widget widget widget {i}\n"},
                   f"widget widget widget notes {i}\n\nwidget widget widget")
        for i in range(27)
    ] + [FastCommit({f"src/pkg/m{i}.py": f"x = {i}\n"}, f"tweak widget {i}") for i in range(3)]
    repo.fast_import(commits)
    indexer.run()
    expected = {h for h in repo.all_hashes()
                if repo.git("log", "-1", "--format=%s", h).startswith("tweak")}
    unfiltered = search(indexer, "widget", top_n=3)
    assert not {r.hash for r in unfiltered.results} & expected
    response = search(indexer, "widget", top_n=3, files_glob="src/**/*.py")
    assert {r.hash for r in response.results} == expected
    assert len(response.results) == 3


def test_filters_apply_before_ranking_beyond_candidate_pool(make_repo, indexer):
    """More strong matches than the ranker's candidate pool (top_n * 4, at least 50)."""
    repo = make_repo()
    commits = [FastCommit({f"docs/n{i}.md": "sprocket\n"}, f"sprocket sprocket {i}")
               for i in range(120)]
    commits.insert(5, FastCommit({"src/only.py": "pass\n"}, "long message about one sprocket "
                                 "and a lot of other words that dilute the match considerably"))
    repo.fast_import(commits)
    indexer.run()
    response = search(indexer, "sprocket", top_n=1, files_glob="src/**/*.py")
    assert [r.files_changed for r in response.results] == [["src/only.py"]]


@pytest.fixture
def dated(make_repo, indexer):
    repo = make_repo()
    hashes = [
        repo.commit({f"f{i}.txt": f"{i}\n"}, f"release note {i}", BASE_TIME + i * DAY)
        for i in range(5)
    ]
    indexer.run()
    return hashes


def test_after_before_unix_seconds_inclusive(dated, indexer):
    response = search(indexer, "release", top_n=10, after=BASE_TIME + DAY,
                      before=BASE_TIME + 3 * DAY)
    assert {r.hash for r in response.results} == set(dated[1:4])


def test_after_before_iso_dates(dated, indexer):
    after = parse_time("2024-01-02")
    before = parse_time("2024-01-03T00:00:00Z")
    assert after == BASE_TIME + DAY and before == BASE_TIME + 2 * DAY
    response = search(indexer, "release", top_n=10, after=after, before=before)
    assert {r.hash for r in response.results} == set(dated[1:3])
    assert parse_time("2024-01-02T02:00:00+02:00") == BASE_TIME + DAY
    assert parse_time(str(BASE_TIME)) == BASE_TIME


@pytest.mark.parametrize("value", ["notadate", "2024-13-45", "today", "3 fortnights", "", "1.5"])
def test_bad_time_raises(value):
    with pytest.raises(InvalidTimeError):
        parse_time(value)


def test_after_later_than_before_is_rejected(dated, indexer):
    with pytest.raises(InvalidArgumentError):
        search(indexer, "release", after=BASE_TIME + DAY, before=BASE_TIME)


@pytest.mark.parametrize("top_n", [0, -1, 101, True])
def test_top_n_out_of_range(dated, indexer, top_n):
    with pytest.raises(InvalidArgumentError):
        search(indexer, "release", top_n=top_n)


def test_equal_scores_have_deterministic_order(make_repo, indexer):
    repo = make_repo()
    repo.commit({"base.txt": "base\n"}, "base")
    repo.branch("one")
    older = repo.commit({"same.txt": "identical\n"}, "identical change", BASE_TIME + DAY)
    repo.branch("two", "main")
    newer = repo.commit({"same.txt": "identical\n"}, "identical change", BASE_TIME + 2 * DAY)
    indexer.run()
    # the two commits are the same change (one patch-id): shown once by default
    collapsed = search(indexer, "identical change").results
    assert [r.hash for r in collapsed] == [newer]
    assert [c["hash"] for c in collapsed[0].copies] == [older]
    plain = PipelineSettings(collapse=False, ngram_dedup_enabled=False)
    orders = {tuple(r.hash for r in search(indexer, "identical change", pipeline=plain).results)
              for _ in range(5)}
    assert orders == {(newer, older)}
    first = search(indexer, "identical change", pipeline=plain).results
    assert first[0].bm25 == first[1].bm25
    assert first[0].score == first[1].score  # a score measures the match, not the rank


def test_result_fields(make_repo, indexer):
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "first")
    head = repo.commit({"src/auth/token.py": "refresh()\n"},
                       "Fix token refresh\n\nRefresh before expiry.", BASE_TIME + DAY)
    indexer.run()
    (r,) = search(indexer, "token refresh", top_n=1).results
    assert r.hash == head
    assert r.title == "Fix token refresh"
    assert r.message == "Refresh before expiry."
    assert r.author == "Ada Author <ada@example.com>"
    assert r.committer == "Cy Committer <cy@example.com>"
    assert r.timestamp == BASE_TIME + DAY
    assert r.files_changed == ["src/auth/token.py"]
    assert r.delta_truncated == repo.show(head)
    assert r.repo_path == str(repo.path.resolve())
    assert 0 < r.score <= 1
    assert not r.is_merge and r.parents == [repo.head("HEAD~1")]


def test_search_on_fresh_empty_index(fresh_store):
    response = search_git_history(fresh_store, "anything", mode="lexical")
    assert response.results == [] and response.total_commits_indexed == 0


def test_unknown_mode_rejected(fresh_store):
    with pytest.raises(InvalidArgumentError):
        search_git_history(fresh_store, "x", mode="fuzzy")


def test_hybrid_without_semantic_degrades_with_warning(corpus, indexer):
    response = search(indexer, "tokenizer", mode="hybrid")
    assert response.effective_mode == "lexical" and response.requested_mode == "hybrid"
    assert "semantic_unavailable" in [w.code for w in response.warnings]
    assert response.results[0].hash == corpus["sota"]


def test_glob_sees_paths_added_after_an_earlier_search(make_repo, indexer):
    """Glob matches are cached per index file; new paths must still be matched."""
    repo = make_repo()
    repo.commit({"old/a.py": "gizmo\n"}, "gizmo old")
    indexer.run()
    assert search(indexer, "gizmo", files_glob="new/**").results == []
    fresh = repo.commit({"new/b.py": "gizmo\n"}, "gizmo new")
    indexer.run()
    assert [r.hash for r in search(indexer, "gizmo", files_glob="new/**").results] == [fresh]
