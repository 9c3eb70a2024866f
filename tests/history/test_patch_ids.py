"""Patch-ids (issue 14): computed beside the ``git log`` stream, equal to git's own
``git patch-id --stable``, stored, backfilled for old rows; copies collapsed in search."""

from __future__ import annotations

import subprocess

from gitquarry.gitio import log as gitlog
from gitquarry.gitio.log import stream_commits
from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval.pipeline import PipelineSettings

from .conftest import GitRepo, Indexer


def _reference(repo: GitRepo, hashes: list[str]) -> dict[str, str]:
    """git's own answer: ``git log -p | git patch-id --stable``."""
    log = repo.run(
        "log", "--no-walk=unsorted", "--stdin", "-p", "-M", "--diff-merges=first-parent",
        "--root", "--format=commit %H", input_bytes=("\n".join(hashes) + "\n").encode(),
    ).stdout
    out = subprocess.run(["git", "patch-id", "--stable"], input=log, capture_output=True,
                         check=True).stdout.decode()
    return {line.split()[1]: line.split()[0] for line in out.splitlines()}


def _varied_history(repo: GitRepo) -> list[str]:
    repo.commit({"a.txt": "one\ntwo\nthree\n", "b.bin": b"\x00\x01\x02"}, "start")
    repo.branch("topic")
    repo.commit({"a.txt": "one\n2\nthree\n"}, "topic edit")
    repo.commit({"c.txt": "new file\n" * 50}, "topic add")
    repo.checkout("main")
    repo.commit({"d.txt": "main side\n", "b.bin": b"\x00\x01\x03"}, "main edit + binary")
    repo.merge("topic", message="Merge topic")
    repo.git("mv", "c.txt", "moved.txt")
    repo.commit(message="rename")
    repo.commit(message="empty commit")
    repo.commit({"a.txt": None}, "delete")
    return repo.git("rev-list", "--all").split()


def test_patch_ids_equal_git_patch_id(make_repo) -> None:
    repo = make_repo()
    hashes = _varied_history(repo)
    got = {c.hash: c.patch_id for c in stream_commits(repo.path / ".git", hashes,
                                                       patch_ids=True)}
    ref = _reference(repo, hashes)
    assert {h: (got[h] or None) for h in hashes} == {h: ref.get(h) for h in hashes}
    empty = repo.git("rev-list", "-1", "--grep=empty commit", "HEAD")
    assert got[empty] == ""  # computed: no diff, no patch-id
    # not asked for: not computed
    assert all(c.patch_id is None for c in stream_commits(repo.path / ".git", hashes))


def test_parser_is_independent_of_chunk_boundaries(make_repo) -> None:
    """Regression: a read ending exactly after a raw (``--raw -z``) entry made the parser
    take the next raw entries for the patch (wrong diff, wrong patch-id)."""
    repo = make_repo()
    hashes = _varied_history(repo)
    stream = repo.run(
        "log", "--no-walk=unsorted", "--stdin", f"--format={gitlog._FORMAT}",
        *gitlog._LOG_OPTIONS, *gitlog._DIFF_OPTIONS, "-p",
        input_bytes=("\n".join(hashes) + "\n").encode(),
    ).stdout

    def parse(chunk: int) -> list[tuple[str, list[str], str]]:
        parser = gitlog._Parser(200)
        commits = []
        for start in range(0, len(stream), chunk):
            commits += list(parser.feed(stream[start : start + chunk]))
        commits += parser.finish()
        return [(c.hash, c.files, c.delta) for c in commits]

    whole = parse(len(stream))
    assert len(whole) == len(hashes)
    assert not any(delta.startswith(":") for _, _, delta in whole)
    for size in (1, 7, 64):
        assert parse(size) == whole


def test_indexed_patch_ids_and_backfill(make_repo, indexer: Indexer) -> None:
    repo = make_repo()
    hashes = _varied_history(repo)
    indexer.run()
    ref = _reference(repo, hashes)
    with indexer.open() as store:
        stored = dict(store.conn.execute("SELECT hash, patch_id FROM git_commits"))
    assert {h: stored[h] or None for h in hashes} == {h: ref.get(h) for h in hashes}
    # an index written before patch-ids: NULL until the next run computes them
    with indexer.open() as store, store.atomic() as conn:
        conn.execute("UPDATE git_commits SET patch_id = NULL")
    report = indexer.run()
    assert report.repositories[0].patch_ids_backfilled == len(hashes)
    assert report.repositories[0].up_to_date
    with indexer.open() as store:
        again = dict(store.conn.execute("SELECT hash, patch_id FROM git_commits"))
    assert again == stored
    assert indexer.run().repositories[0].patch_ids_backfilled == 0


def _backported_fix(repo: GitRepo) -> dict[str, str]:
    """A fix on ``fix``, cherry-picked onto three release branches, merged twice."""
    repo.commit({"app.py": "def parse(x):\n    return x\n", "README": "app\n"}, "initial")
    for name in ("release-1", "release-2", "release-3"):
        repo.branch(name, "main")
        repo.commit({f"{name}.txt": f"{name}\n"}, f"prepare {name}")
    repo.branch("fix", "main")
    fix = repo.commit({"app.py": "def parse(x):\n    return x.strip()\n"},
                      "Strip whitespace in the config parser")
    picks = {}
    for name in ("release-1", "release-2", "release-3"):
        repo.checkout(name)
        repo.git("cherry-pick", "-x", fix, env=repo.env())
        picks[name] = repo.head()
    repo.checkout("main")
    repo.commit({"other.txt": "unrelated work on main\n"}, "Unrelated work on main")
    merge_main = repo.merge("fix", message="Merge branch 'fix'")
    repo.branch("next", "main~1")
    merge_next = repo.merge("fix", message="Merge branch 'fix' into next")
    return {"fix": fix, **picks, "merge_main": merge_main, "merge_next": merge_next}


def test_cherry_picked_fix_appears_once_with_its_copies(make_repo, indexer: Indexer) -> None:
    repo = make_repo()
    commits = _backported_fix(repo)
    indexer.run()
    with indexer.open() as store:
        response = search_git_history(store, "strip whitespace config parser", top_n=10)
        plain = search_git_history(
            store, "strip whitespace config parser", top_n=10,
            pipeline=PipelineSettings(collapse=False, ngram_dedup_enabled=False),
        )
    copies_of_fix = {commits[k] for k in ("fix", "release-1", "release-2", "release-3",
                                          "merge_main", "merge_next")}
    shown = [r.hash for r in response.results]
    assert len(set(shown) & copies_of_fix) == 1, shown
    result = next(r for r in response.results if r.hash in copies_of_fix)
    listed = {c["hash"]: c for c in result.copies}
    assert set(listed) | {result.hash} == copies_of_fix
    for name in ("release-1", "release-2", "release-3"):
        copy = listed.get(commits[name])
        if copy is not None:
            assert name in copy["refs"]
            assert copy["via"] == "patch-id"
            assert copy["committed"] > 0
    merge = listed.get(commits["merge_next"])
    assert merge is not None and "next" in merge["refs"]
    # --no-collapse: every copy is its own result
    assert copies_of_fix <= {r.hash for r in plain.results}
    assert all(not r.copies for r in plain.results)


def test_merge_of_shown_commits_is_folded_under_them(make_repo, indexer: Indexer) -> None:
    repo = make_repo()
    repo.commit({"base.txt": "base\n"}, "base")
    repo.branch("topic")
    first = repo.commit({"cache.py": "CACHE = {}\n"}, "Add a cache for parsed templates")
    second = repo.commit({"cache.py": "CACHE = {}\nLIMIT = 100\n"},
                         "Bound the template cache to 100 entries")
    repo.checkout("main")
    repo.commit({"main.txt": "other\n"}, "Unrelated change")
    merge = repo.merge("topic", message="Merge branch 'topic': template cache")
    indexer.run()
    with indexer.open() as store:
        response = search_git_history(store, "template cache", top_n=5)
        explained = response.to_dict(explain=True)
    shown = [r.hash for r in response.results]
    assert merge not in shown and first in shown and second in shown
    host = next(r for r in response.results if any(c["hash"] == merge for c in r.copies))
    assert next(c for c in host.copies if c["hash"] == merge)["via"] == "merge"
    folded = [e for r in explained["results"] for e in r["pipeline"]["absorbed"].get("fold", [])]
    assert [e["key"] for e in folded] == [merge]
    assert "fold" in explained["pipeline"]["steps"]


def test_single_commit_merge_ranked_first_shows_the_change_itself(make_repo,
                                                                   indexer: Indexer) -> None:
    """A merge of one commit shares its patch-id; when the merge ranks first (its title holds
    the query words) the result is still the change itself, at the merge's rank and score,
    with the merge under ``copies`` via "merge" (fresh-user finding: 'Merge pull request
    #1296' shown, 'Update progressbar docstrings' only under 'also as')."""
    repo = make_repo()
    repo.commit({"base.txt": "base\n", "docs.py": "def bar():\n    pass\n"}, "base")
    repo.branch("docs")
    change = repo.commit({"docs.py": 'def bar():\n    """Draw the progress."""\n'},
                         "Update the docstrings")
    repo.checkout("main")
    repo.commit({"other.txt": "unrelated\n"}, "Unrelated change")
    merge = repo.merge("docs", message="Merge pull request #12: progress bar progress bar")
    indexer.run()
    with indexer.open() as store:
        patch_ids = dict(store.conn.execute("SELECT hash, patch_id FROM git_commits"))
        plain = search_git_history(
            store, "progress bar", top_n=5,
            pipeline=PipelineSettings(collapse=False, ngram_dedup_enabled=False),
        )
        response = search_git_history(store, "progress bar", top_n=5)
    assert patch_ids[merge] and patch_ids[merge] == patch_ids[change]
    # without collapsing, the merge ranks above the change
    order = [r.hash for r in plain.results]
    assert order.index(merge) < order.index(change), order
    first = plain.results[order.index(merge)]
    shown = [r.hash for r in response.results]
    assert change in shown and merge not in shown, shown
    result = response.results[shown.index(change)]
    assert shown.index(change) == 0 and result.score == first.score
    assert [(c["hash"], c["via"]) for c in result.copies] == [(merge, "merge")]
