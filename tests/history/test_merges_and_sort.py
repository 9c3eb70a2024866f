"""Merge filters, merges folded under the results they repeat, --sort and introduction
questions on real repositories."""

from __future__ import annotations

import json

import pytest

from gitquarry.errors import InvalidArgumentError
from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval.pipeline import PipelineSettings

from .conftest import BASE_TIME, GitRepo, Indexer

DAY = 86_400


def search(indexer: Indexer, query: str, **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("mode", "lexical")
    with indexer.open() as store:
        return search_git_history(store, query, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def merged(make_repo, indexer):  # type: ignore[no-untyped-def]
    """main: base; feature branch with the widget fix and a changelog note, merged --no-ff;
    more widget commits."""
    repo: GitRepo = make_repo()
    base = repo.commit({"README": "widget tool\n"}, "Initial widget tool", BASE_TIME)
    repo.branch("feature")
    fix = repo.commit({"src/widget.py": "def render(widget):\n    return widget.draw()\n"},
                      "Fix widget rendering crash", BASE_TIME + DAY)
    note = repo.commit({"CHANGES": "Release notes for version two\n"}, "Changelog entry",
                       BASE_TIME + DAY + 60)
    repo.checkout("main")
    other = repo.commit({"docs/usage.md": "Widgets are drawn lazily.\n"},
                        "Document lazy widget drawing", BASE_TIME + 2 * DAY)
    merge = repo.merge("feature", message="Merge branch 'feature': widget rendering",
                       date=BASE_TIME + 3 * DAY)
    later = repo.commit({"src/widget.py": "def render(widget):\n    return widget.paint()\n"},
                        "Widget rendering uses paint", BASE_TIME + 4 * DAY)
    indexer.run()
    return {"base": base, "fix": fix, "note": note, "other": other, "merge": merge,
            "later": later}


#: the result pipeline without collapsing copies or folding merges
PLAIN = PipelineSettings(collapse=False)


def hashes(response) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.hash for r in response.results]


def test_no_merges_and_only_merges_filter_inside_the_ranking(merged, indexer) -> None:
    everything = hashes(search(indexer, "widget", top_n=10, pipeline=PLAIN))
    assert set(everything) == set(merged.values()) - {merged["note"]}
    no_merges = hashes(search(indexer, "widget", top_n=10, merges="exclude"))
    assert no_merges == [h for h in everything if h != merged["merge"]]  # same order otherwise
    assert hashes(search(indexer, "widget", top_n=10, merges="only")) == [merged["merge"]]
    # top_n is filled from the non-merge commits when the merge would have taken a slot
    assert len(hashes(search(indexer, "widget", top_n=4, merges="exclude"))) == 4


def test_merge_repeating_a_shown_commit_is_folded_under_it(merged, indexer) -> None:
    plain = hashes(search(indexer, "widget rendering crash", top_n=5, pipeline=PLAIN))
    assert merged["merge"] in plain and merged["note"] not in plain
    response = search(indexer, "widget rendering crash", top_n=5)
    # the merge also brought in the changelog note, which is not shown, so git's ancestry
    # does not fold it; its diff holds the fix's changed lines, so it is folded under the fix
    shown = {r.hash: r for r in response.results}
    assert merged["merge"] not in shown
    assert [(c["hash"], c["via"]) for c in shown[merged["fix"]].copies] == [
        (merged["merge"], "merge")
    ]
    # nothing else is lost: the other results are those of the plain ranking
    assert set(shown) == set(plain) - {merged["merge"]}


def test_sort_newest_and_oldest_order_the_matches_by_commit_time(merged, indexer) -> None:
    newest = search(indexer, "widget", top_n=5, sort="newest").results
    assert [r.timestamp for r in newest] == sorted((r.timestamp for r in newest), reverse=True)
    oldest = search(indexer, "widget", top_n=5, sort="oldest").results
    assert [r.hash for r in oldest] == [r.hash for r in reversed(newest)]
    assert oldest[0].hash == merged["base"]
    # the same matches as the relevance ranking, in another order
    relevance = search(indexer, "widget", top_n=5)
    assert {r.hash for r in oldest} == {r.hash for r in relevance.results}


def test_introduction_question_puts_the_introducing_commit_first(make_repo, indexer) -> None:
    repo: GitRepo = make_repo()
    intro = repo.commit({"src/pager.py": "def echo_via_pager(text):\n    pass\n"},
                        "Add echo_via_pager for long output", BASE_TIME)
    fixes = [
        repo.commit({"src/pager.py": f"def echo_via_pager(text):\n    return {i}\n"},
                    f"Fix echo_via_pager bug {i}"
                    # three fixes say the word more often than the introduction does
                    + ("\n\necho_via_pager lost output; echo_via_pager now returns it." * (i < 3)),
                    BASE_TIME + (i + 1) * DAY)
        for i in range(6)
    ]
    indexer.run()
    plain = hashes(search(indexer, "echo_via_pager", top_n=5))
    assert plain[0] != intro  # small later fixes outrank the introduction
    asked = hashes(search(indexer, "when was echo_via_pager added", top_n=5))
    assert asked[0] == intro
    assert set(asked) <= {intro, *fixes}


def test_bad_merges_or_sort_values_are_usage_errors(merged, indexer) -> None:
    with pytest.raises(InvalidArgumentError, match="merges"):
        search(indexer, "widget", merges="sometimes")
    with pytest.raises(InvalidArgumentError, match="sort"):
        search(indexer, "widget", sort="random")


def test_cli_flags(merged, indexer, cli) -> None:  # type: ignore[no-untyped-def]
    args = ["--project", str(indexer.root)]
    code, out, err = cli("history", "widget", "--no-merges", "--mode", "lexical", "--json",
                         "-n", "10", *args)
    assert code == 0, err
    assert merged["merge"] not in {r["hash"] for r in json.loads(out)["results"]}
    code, out, err = cli("history", "widget", "--merges", "--mode", "lexical", "--json", *args)
    assert code == 0, err
    assert [r["hash"] for r in json.loads(out)["results"]] == [merged["merge"]]
    code, out, err = cli("history", "widget", "--sort", "oldest", "--mode", "lexical",
                         "--json", *args)
    assert code == 0, err
    assert json.loads(out)["results"][0]["hash"] == merged["base"]
    code, _, err = cli("history", "widget", "--sort", "sideways", *args)
    assert code == 2 and "sort" in err
