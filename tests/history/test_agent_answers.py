"""Issue 12: budgets, detail levels, cursors, refs, filters, get_commit, blame, index_state —
each checked against git itself on a real repository."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from gitquarry.errors import CommitNotFoundError, CursorExpiredError, InvalidArgumentError
from gitquarry.history.answers.answers import AnswerOptions
from gitquarry.history.answers.blame import blame_answer
from gitquarry.history.answers.commit_show import get_commit
from gitquarry.history.search.narrow import Narrowing
from gitquarry.token_budget import json_tokens

from .answers_fixture import Fixture, build


@pytest.fixture
def fx(tmp_path: Path) -> Fixture:
    return build(tmp_path / "ws")


QUERIES = ["retry", "timeout fetch", "cache responses", "note retry behaviour", "rename",
           "document usage", "large data file", "merge feature", "http client retry loop",
           "zzz nothing"]


def _search(fx: Fixture, query: str, **kw: object) -> dict:
    searcher, answers = fx.answers()
    try:
        options = kw.pop("options", AnswerOptions())
        return answers.search(query, top_n=int(kw.pop("top_n", 5)), mode="lexical",
                              options=options, **kw)  # type: ignore[arg-type]
    finally:
        answers.close()
        searcher.close()


def test_budget_property_every_response_fits(fx: Fixture) -> None:
    rng = random.Random(12)
    for _ in range(40):
        query = rng.choice(QUERIES)
        budget = rng.choice([500, 700, 1000, 1500, 3000, 8000])
        detail = rng.choice(["full", "compact", "ids"])
        top_n = rng.randint(1, 20)
        try:
            data = _search(fx, query, top_n=top_n,
                           options=AnswerOptions(detail=detail, max_tokens=budget))
        except InvalidArgumentError as exc:  # not even one result fits: said, never empty
            assert exc.argument == "max_tokens" and budget <= 1000, (query, budget, detail)
            assert _search(fx, query, top_n=top_n, options=AnswerOptions(detail=detail))[
                "results"]
            continue
        assert json_tokens(data) <= budget, (query, budget, detail)
        assert set(data["truncated"]) == {"results_dropped", "deltas_cut", "messages_cut"}
        assert data["results"] or data["truncated"]["results_dropped"] == 0


def test_no_budget_keeps_the_seed_fields(fx: Fixture) -> None:
    searcher, answers = fx.answers()
    try:
        plain = searcher.search("retry", top_n=5, mode="lexical").to_dict()
    finally:
        answers.close()
        searcher.close()
    data = _search(fx, "retry")
    assert "truncated" not in data
    for got, want in zip(data["results"], plain["results"], strict=True):
        assert {k: got[k] for k in want} == want
        assert "refs" in got and "refs_total" in got
    assert data["index_state"]["repositories"][0]["up_to_date"] is True


def test_budget_cuts_diffs_before_dropping_results(fx: Fixture) -> None:
    full = _search(fx, "needle_token large", top_n=1)
    delta = full["results"][0]["delta_truncated"]
    assert len(delta) > 3000
    fitted = _search(fx, "needle_token large", top_n=1,
                     options=AnswerOptions(max_tokens=900))
    assert fitted["truncated"]["deltas_cut"] == 1
    assert fitted["truncated"]["results_dropped"] == 0
    assert fitted["results"][0]["hash"] == full["results"][0]["hash"]


def test_compact_is_smaller_and_has_an_excerpt(fx: Fixture) -> None:
    full = _search(fx, "timeout", top_n=3)
    compact = _search(fx, "timeout", top_n=3, options=AnswerOptions(detail="compact"))
    assert [r["hash"] for r in compact["results"]] == [r["hash"] for r in full["results"]]
    top = compact["results"][0]
    assert set(top) >= {"hash", "date", "author", "title", "files", "score", "excerpt"}
    assert "timeout = 30" in top["excerpt"]
    assert len(top["date"]) == 10 and top["date"][4] == "-"  # YYYY-MM-DD
    # the excerpt's path:LINE header points at its first line in the commit's new file
    where, first, *_ = top["excerpt"].split("\n")
    path, line = where.rsplit(":", 1)
    blob = fx.repo.git("show", f"{top['hash']}:{path}").split("\n")
    assert first[:1] in (" ", "+") and blob[int(line) - 1] == first[1:]
    assert json_tokens(compact["results"]) < json_tokens(full["results"])
    assert "repo_path" not in top  # one repository: index_state names it
    assert compact["index_state"]["repositories"][0]["path"] == full["results"][0]["repo_path"]
    for c, f in zip(compact["results"], full["results"], strict=True):
        assert c["refs_total"] == f["refs_total"]
        assert len(c["refs"]) <= 3 and set(c["refs"]) <= set(_git_contains(fx, c["hash"]))
    ids = _search(fx, "timeout", top_n=3, options=AnswerOptions(detail="ids"))
    assert set(ids["results"][0]) == {"hash", "score"}


@pytest.mark.parametrize("budget", [None, 600])
def test_cursor_pages_the_same_ranking_without_duplicates_or_gaps(fx: Fixture,
                                                                  budget: int | None) -> None:
    whole = _search(fx, "retry note", top_n=40)
    expected = [r["hash"] for r in whole["results"]]
    assert len(expected) > 6
    seen: list[str] = []
    data = _search(fx, "retry note", top_n=3,
                   options=AnswerOptions(detail="compact", max_tokens=budget))
    seen += [r["hash"] for r in data["results"]]
    pages = 1
    while data["next_cursor"] and pages < 40:
        if pages == 2:  # new commits indexed between pages: the ranking stays pinned
            fx.repo.commit({"notes/late.md": "retry note late\n"}, "Late retry note")
            fx.indexer.run()
        data = _search(fx, "retry note", top_n=3, options=AnswerOptions(
            detail="compact", max_tokens=budget, cursor=data["next_cursor"]))
        seen += [r["hash"] for r in data["results"]]
        pages += 1
    assert seen == expected
    assert data["next_cursor"] is None


def test_cursor_errors(fx: Fixture) -> None:
    data = _search(fx, "retry note", top_n=2)
    cursor = data["next_cursor"]
    assert cursor
    with pytest.raises(InvalidArgumentError):
        _search(fx, "other query", top_n=2, options=AnswerOptions(cursor=cursor))
    with pytest.raises(InvalidArgumentError):
        _search(fx, "retry note", options=AnswerOptions(cursor="not a cursor"))
    with pytest.raises(CursorExpiredError):
        _search(fx, "retry note", options=AnswerOptions(cursor="AAAAAAAAAAAAAAAA.2"))
    again = _search(fx, "retry note", top_n=2, options=AnswerOptions(cursor=cursor))
    twice = _search(fx, "retry note", top_n=2, options=AnswerOptions(cursor=cursor))
    assert [r["hash"] for r in again["results"]] == [r["hash"] for r in twice["results"]]


def _git_contains(fx: Fixture, commit: str) -> set[str]:
    branches = fx.repo.git("branch", "-a", "--contains", commit, "--format=%(refname:short)")
    tags = fx.repo.git("tag", "--contains", commit)
    return set(branches.split()) | set(tags.split())


def test_refs_match_git_branch_and_tag_contains(fx: Fixture) -> None:
    searcher, answers = fx.answers()
    try:
        results = [{"hash": h} for h in fx.repo.all_hashes()]
        answers.refs.annotate(searcher.store.conn, results, max_names=1000)
    finally:
        answers.close()
        searcher.close()
    assert len(results) == len(fx.commits)
    for r in results:
        want = _git_contains(fx, r["hash"])
        assert set(r["refs"]) == want, r["hash"]
        assert r["refs_total"] == len(want)


def _git_display_order(fx: Fixture, commit: str) -> list[str]:
    """The refs containing ``commit`` in ``refs`` order, from git: local branches by name,
    remote branches by name, then tags by their commit's time (oldest first), then name."""
    local = sorted(fx.repo.git("branch", "--contains", commit,
                               "--format=%(refname:short)").split())
    remote = sorted(fx.repo.git("branch", "-r", "--contains", commit,
                                "--format=%(refname:short)").split())
    tags = fx.repo.git("tag", "--contains", commit,
                       "--format=%(*committerdate:unix)%(committerdate:unix) %(refname:short)")
    by_time = sorted((int(t), name) for t, name in (line.split() for line in tags.splitlines()))
    return local + remote + [name for _, name in by_time]


def test_refs_order_and_cut_match_git(fx: Fixture) -> None:
    """Order (branches, then tags oldest first) and the max_names cut keep the first names."""
    for i in range(30):  # more refs than max_names, tags in time order
        fx.repo.git("tag", f"t{i:02d}", fx.commits[f"n{i % 12}"])
    fx.repo.git("branch", "zz-last", fx.commits["init"])
    fx.indexer.run()
    wants = {h: _git_display_order(fx, h) for h in fx.repo.all_hashes()}
    searcher, answers = fx.answers()
    try:
        for cut in (1000, 10, 3):
            results = [{"hash": h} for h in wants]
            answers.refs.annotate(searcher.store.conn, results, max_names=cut)
            for r in results:
                want = wants[r["hash"]]
                assert r["refs"] == want[:cut], r["hash"]
                assert r["refs_total"] == len(want)
        # compact: the first two refs that are not tags, then the oldest tag
        tags = set(fx.repo.git("tag").split())
        results = [{"hash": h} for h in wants]
        answers.refs.annotate(searcher.store.conn, results, compact=True)
        for r in results:
            want = wants[r["hash"]]
            first_tag = [n for n in want if n in tags][:1]
            assert r["refs"] == [n for n in want if n not in tags][:2] + first_tag, r["hash"]
            assert r["refs_total"] == len(want)
    finally:
        answers.close()
        searcher.close()


def test_refs_follow_index_changes_and_skip_unchanged_checks(fx: Fixture) -> None:
    """A long-lived answerer (the MCP server's) sees refs and commits that a later indexing
    run added (another connection), and a write through its own connection; while nothing is
    written it neither rebuilds nor reads the fingerprint."""
    searcher, answers = fx.answers()
    try:
        conn = searcher.store.conn
        first = [{"hash": fx.commits["retry"]}]
        answers.refs.annotate(conn, first, max_names=1000)
        assert set(first[0]["refs"]) == _git_contains(fx, fx.commits["retry"])
        reads = answers.refs.fingerprints
        for _ in range(5):
            answers.refs.annotate(conn, [{"hash": fx.commits["retry"]}])
        assert answers.refs.fingerprints == reads  # nothing written: no fingerprint read
        # another process indexes a new branch with a new commit and a moved tag
        fx.repo.branch("hotfix", fx.commits["retry"])
        fx.repo.checkout("hotfix")
        fix = fx.repo.commit({"src/fix.py": "x = 1\n"}, "Hot fix", 1_700_000_000)
        fx.repo.checkout("main")
        fx.repo.git("tag", "-f", "v1.0", fix)
        fx.indexer.run()
        again = [{"hash": fx.commits["retry"]}, {"hash": fix}]
        answers.refs.annotate(conn, again, max_names=1000)
        assert conn is searcher.store.conn
        for r in again:
            assert set(r["refs"]) == _git_contains(fx, r["hash"]), r["hash"]
        assert "hotfix" in again[1]["refs"] and "v1.0" in again[1]["refs"]
        # a write through the same connection (data_version does not move for it)
        conn.execute("DELETE FROM repo_refs WHERE ref = CAST('refs/heads/hotfix' AS BLOB)")
        conn.commit()
        last = [{"hash": fix}]
        answers.refs.annotate(conn, last, max_names=1000)
        assert "hotfix" not in last[0]["refs"] and "v1.0" in last[0]["refs"]
        # the hot fix becomes unreachable (pruned) and a new commit may take its row id
        fx.repo.git("tag", "-f", "v1.0", fx.commits["retry"])
        fx.repo.git("branch", "-D", "hotfix")
        newer = fx.repo.commit({"src/new.py": "y = 2\n"}, "Newer", 1_700_000_100)
        fx.indexer.run()
        indexed = [h for (h,) in conn.execute("SELECT hash FROM git_commits")]
        assert fix not in indexed and newer in indexed
        final = [{"hash": h} for h in indexed]
        answers.refs.annotate(conn, final, max_names=1000)
        for r in final:
            assert set(r["refs"]) == _git_contains(fx, r["hash"]), r["hash"]
    finally:
        answers.close()
        searcher.close()


def _git_log(fx: Fixture, *args: str) -> set[str]:
    return set(fx.repo.git("log", "--all", "--format=%H", *args).split())


def _all_matches(fx: Fixture, narrowing: Narrowing, **kw: object) -> set[str]:
    searcher, answers = fx.answers()
    try:
        ids = searcher.search("", top_n=1, mode="lexical")  # warm
        del ids
        from gitquarry.history.search.narrow import candidate_ids

        found, _ = candidate_ids(searcher.store.conn, narrowing)
        return {h for (h,) in searcher.store.conn.execute(
            f"SELECT hash FROM git_commits WHERE id IN ({','.join('?' * len(found))})",
            sorted(found))} if found else set()
    finally:
        answers.close()
        searcher.close()


def test_author_committer_path_and_pickaxe_match_git_log(fx: Fixture) -> None:
    # author: substring, case-insensitive, of the mapped or the committed identity
    for needle in ("ALICE@OLD", "alice@new", "smith"):
        assert _all_matches(fx, Narrowing(author=needle)) == _git_log(
            fx, f"--author={needle}", "-i", "--use-mailmap") | _git_log(
            fx, f"--author={needle}", "-i", "--no-use-mailmap"), needle
    assert _all_matches(fx, Narrowing(author="ALICE@OLD"))
    assert _all_matches(fx, Narrowing(author="bob")) == _git_log(fx, "--author=bob", "-i")
    assert _all_matches(fx, Narrowing(committer="cy@")) == _git_log(fx, "--committer=cy@")
    assert _all_matches(fx, Narrowing(path="src/net")) == _git_log(
        fx, "--no-merges", "--", "src/net") | (_git_log(fx, "--", "src/net") & _git_log(
            fx, "--first-parent", "--", "src/net"))
    assert _all_matches(fx, Narrowing(path="src/ne")) == set()
    for needle in ("retries = 3", "timeout = 30", "needle_token", "CACHE", "absent string"):
        assert _all_matches(fx, Narrowing(pickaxe=needle)) == _git_log(
            fx, f"-S{needle}"), needle


def test_pickaxe_says_how_it_was_answered(fx: Fixture) -> None:
    data = _search(fx, "large data", narrowing=Narrowing(pickaxe="needle_token"))
    assert [r["hash"] for r in data["results"]] == [fx.commits["big"]]
    assert data["pickaxe"]["answered_from"] == "index+git"  # the 400-line diff was cut
    assert data["pickaxe"]["checked_with_git_log_S"] >= 1
    small = _search(fx, "timeout", narrowing=Narrowing(pickaxe="timeout = 30"))
    assert small["pickaxe"]["decided_from_stored_diff"] >= 1


def test_get_commit_full_diff_and_paging_equal_git_show(fx: Fixture) -> None:
    searcher, answers = fx.answers()
    try:
        commit = fx.commits["big"]
        want = fx.repo.show(commit).rstrip("\n").split("\n")
        whole = get_commit(answers, commit[:8])
        assert whole["diff"].split("\n") == want
        assert whole["files"] == [{"path": "data/big.txt", "added": 401, "deleted": 0}]
        assert whole["refs"] == ["main"]
        pages: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = get_commit(answers, commit, diff_offset=offset, max_tokens=1200)
            assert json_tokens(page) <= 1200 + 200
            pages += page["diff"].split("\n")
            offset = page["next_diff_offset"]
        assert pages == want
        with pytest.raises(CommitNotFoundError):
            get_commit(answers, "zz")
        with pytest.raises(CommitNotFoundError):
            get_commit(answers, "0000000")
    finally:
        answers.close()
        searcher.close()


def test_blame_equals_git_blame_and_ranks_the_file_history(fx: Fixture) -> None:
    searcher, answers = fx.answers()
    try:
        data = blame_answer(answers, "src/net/http_client.py:2-3", query="retry loop")
    finally:
        answers.close()
        searcher.close()
    porcelain = fx.repo.git("blame", "--porcelain", "-L", "2,3", "HEAD", "--",
                            "src/net/http_client.py")
    want = {line.split()[0] for line in porcelain.split("\n")
            if line and not line.startswith("\t") and len(line.split()[0]) == 40}
    assert {e["hash"] for e in data["blame"]} == want
    assert all(e["indexed"] for e in data["blame"])
    # the history follows the rename: the commit that introduced the retry ranks first
    assert data["history"]["results"][0]["hash"] == fx.commits["retry"]
    assert data["history"]["results"][0]["in_blame"] is True
    assert data["lines"][0]["text"] == "    retries = 3"


def test_index_state_reports_unindexed_commits_without_reindexing(fx: Fixture) -> None:
    fx.repo.commit({"x.txt": "x\n"}, "Not yet indexed")
    data = _search(fx, "retry")
    repo = data["index_state"]["repositories"][0]
    assert repo["commits_not_indexed"] == 1
    assert repo["refs_changed"] == 1 and repo["changed_refs"] == ["refs/heads/main"]
    assert repo["up_to_date"] is False and data["index_state"]["up_to_date"] is False


def test_relative_after_matches_git_log_since(fx: Fixture, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    from gitquarry.retrieval.filters import interpret_time

    now = fx.repo.git("log", "-1", "--format=%ct", fx.commits["n11"])
    monkeypatch.setenv("TZ", "UTC")
    for text in ("3.days.ago", "1 week ago", "yesterday", "2 weeks ago", "last friday"):
        bound = interpret_time(text, now=int(now))
        assert bound.reading == "relative"
        want = subprocess.run(
            ["git", "log", "--all", f"--since={text}", "--format=%H"], cwd=fx.repo.path,
            env={**fx.repo.env(when=0), "GIT_TEST_DATE_NOW": now, "TZ": "UTC"},
            capture_output=True, text=True, check=True).stdout.split()
        searcher, answers = fx.answers()
        try:
            got = {h for (h,) in searcher.store.conn.execute(
                "SELECT hash FROM git_commits WHERE timestamp >= ?", (bound.seconds,))}
        finally:
            answers.close()
            searcher.close()
        assert got == set(want), text
