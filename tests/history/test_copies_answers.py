"""Copies' refs (issues 12 + 14, one path per concern): a copy's ``refs`` come from the index
(``history.refs_contain``), with the same names, order and cut as a result's own ``refs``,
checked against ``git branch --contains`` / ``git tag --contains``."""

from __future__ import annotations

from gitquarry.history.answers.answers import AnswerOptions, HistoryAnswers
from gitquarry.history.search.candidate_stream import MAX_REFS
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.workspace import resolve_workspace

from .conftest import BASE_TIME, GitRepo, Indexer
from .test_patch_ids import _backported_fix


def _git_display_order(repo: GitRepo, commit: str) -> list[str]:
    """The refs containing ``commit`` in ``refs`` order, from git: local branches by name,
    then tags by their commit's time (oldest first), then name."""
    local = sorted(repo.git("branch", "--contains", commit, "--format=%(refname:short)").split())
    tags = repo.git("tag", "--contains", commit,
                    "--format=%(*committerdate:unix)%(committerdate:unix) %(refname:short)")
    by_time = sorted((int(t), n) for t, n in (line.split() for line in tags.splitlines()))
    return local + [n for _, n in by_time]


def test_copies_refs_match_git_order_and_cut(make_repo, indexer: Indexer) -> None:
    repo = make_repo()
    commits = _backported_fix(repo)
    # release-1's pick is held by more refs than a copy lists: 25 tags at later commits
    repo.checkout("release-1")
    for i in range(25):
        repo.commit({"later.txt": f"{i}\n"}, f"later work {i}", BASE_TIME + 10_000 + i * 60)
        repo.git("tag", f"r1-{i:02d}")
    repo.checkout("main")
    indexer.run()
    searcher = HistorySearcher(resolve_workspace(indexer.root, for_search=True))
    answers = HistoryAnswers(searcher)
    try:
        data = answers.search("strip whitespace config parser", top_n=10, mode="lexical",
                              options=AnswerOptions())
        assert answers.refs is searcher.refs  # one set of bit sets for hits and copies
        builds = searcher.refs.fingerprints
    finally:
        answers.close()
        searcher.close()
    assert builds == 1, builds  # the copies' refs and the hits' refs shared one build
    copies_of_fix = {commits[k] for k in ("fix", "release-1", "release-2", "release-3",
                                          "merge_main", "merge_next")}
    host = next(r for r in data["results"] if r["hash"] in copies_of_fix)
    listed = {c["hash"]: c for c in host["copies"]}
    assert set(listed) | {host["hash"]} == copies_of_fix
    cut_seen = False
    for commit, copy in listed.items():
        want = _git_display_order(repo, commit)
        assert copy["refs"] == want[:MAX_REFS], commit
        assert copy.get("refs_omitted", 0) == max(len(want) - MAX_REFS, 0), commit
        cut_seen |= "refs_omitted" in copy
    assert cut_seen, "no copy was held by more than MAX_REFS refs"
    # the host's own refs follow the same rules (names, order)
    assert host["refs"] == _git_display_order(repo, host["hash"])[:len(host["refs"])]


def _fixes_with_copies(repo: GitRepo, n: int) -> dict[str, tuple[str, str]]:
    """``n`` parser fixes on main, each cherry-picked onto ``maint``: {word: (fix, pick)}."""
    repo.commit({"base.txt": "base\n"}, "initial", BASE_TIME)
    repo.branch("maint")
    out: dict[str, tuple[str, str]] = {}
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"][:n]
    for i, word in enumerate(words):
        repo.checkout("main")
        fix = repo.commit({f"{word}.py": f"{word} = {i}\n"},
                          f"Fix the parser crash on {word} input" + " parser" * i,
                          BASE_TIME + 100 * (i + 1))
        repo.checkout("maint")
        repo.git("cherry-pick", fix, env=repo.env(BASE_TIME + 100 * (i + 1) + 50))
        out[word] = (fix, repo.head())
    repo.checkout("main")
    return out


def test_cursor_pages_carry_copies_and_explain(make_repo, indexer: Indexer) -> None:
    repo = make_repo()
    fixes = _fixes_with_copies(repo, 6)
    indexer.run()
    pairs = {h: pair for pair in fixes.values() for h in pair}
    searcher = HistorySearcher(resolve_workspace(indexer.root, for_search=True))
    answers = HistoryAnswers(searcher)
    pages = []
    try:
        options = AnswerOptions(explain=True)
        data = answers.search("parser crash", top_n=2, mode="lexical", options=options)
        pages.append(data)
        while data["next_cursor"] is not None and len(pages) < 10:
            data = answers.search("parser crash", top_n=2, mode="lexical",
                                  options=AnswerOptions(explain=True,
                                                        cursor=data["next_cursor"]))
            pages.append(data)
    finally:
        answers.close()
        searcher.close()
    assert len(pages) == 3, [len(p["results"]) for p in pages]
    shown = [r for p in pages for r in p["results"]]
    # every change once, in one of its two copies, the other listed under it on every page
    assert sorted(pairs[r["hash"]] for r in shown) == sorted(fixes.values())
    position = 0
    for page in pages:
        assert page["pipeline"]["steps"] == pages[0]["pipeline"]["steps"]
        for r in page["results"]:
            other = next(h for h in pairs[r["hash"]] if h != r["hash"])
            assert [c["hash"] for c in r["copies"]] == [other], r
            assert r["copies"][0]["via"] == "patch-id"
            assert r["copies"][0]["refs"] == _git_display_order(repo, other)
            # explain: the rank in the whole pinned ranking, what the pipeline absorbed
            position += 1
            assert r["pipeline"]["rank"] == position
            assert all(e["key"] == other for e in r["pipeline"]["absorbed"].get("collapse", []))
            assert r["lexical_score"] is not None
            # the same fields as a first-page result
            assert set(r) == set(pages[0]["results"][0]), set(r) ^ set(pages[0]["results"][0])
