"""Issue 7 §3: authors and committers follow the repository's ``.mailmap``, as
``git log --use-mailmap`` shows them, with the raw identity kept."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from gitquarry.history.search.engine import search_git_history

from .conftest import BASE_TIME, GitRepo, Indexer

CLI = Callable[..., tuple[int, str, str]]
KIM_OLD = ("Kim Alder", "kim@old.example")
MAILMAP = "Kim Birch <kim@new.example> <kim@old.example>\n"


def _lexical(indexer: Indexer, query: str) -> list[str]:
    with indexer.open() as store:
        return [r.hash for r in search_git_history(store, query, mode="lexical").results]


def test_canonical_identity_is_shown_and_searchable_raw_kept(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI
) -> None:
    repo = make_repo()
    repo.commit({".mailmap": MAILMAP}, "Add mailmap")
    commit = repo.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD, committer=KIM_OLD)
    git_finds = repo.git("log", "--use-mailmap", "--author=Birch", "--format=%H")
    assert git_finds == commit
    code, _, err = cli("index", str(indexer.root), "--no-embed", "-q")
    assert code == 0, err
    code, out, _ = cli("history", "Birch", "--project", str(indexer.root), "--mode", "lexical",
                       "--json")
    results = json.loads(out)["results"]
    assert (results[0]["hash"], results[0]["author"], results[0]["committer"]) == (
        commit, "Kim Birch <kim@new.example>", "Kim Birch <kim@new.example>"
    )
    # the only other hit is the commit adding the .mailmap (its diff holds the name)
    assert [r["hash"] for r in results[1:]] == [repo.head("HEAD~1")]
    row = indexer.row(commit)
    assert row["author_raw"] == "Kim Alder <kim@old.example>"
    assert row["committer_raw"] == "Kim Alder <kim@old.example>"
    other = indexer.row(repo.head("HEAD~1"))
    assert other["author"] == "Ada Author <ada@example.com>" and other["author_raw"] is None


def test_mailmap_change_is_picked_up_without_any_ref_moving(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI
) -> None:
    repo = make_repo()
    commit = repo.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD)
    indexer.run()
    assert _lexical(indexer, "Birch") == []
    (repo.path / ".mailmap").write_text(MAILMAP)  # uncommitted, as git log reads it
    code, out, err = cli("index", str(indexer.root), "--no-embed")
    assert code == 0, err
    assert ".mailmap changed; 1 commit now show" in out
    assert _lexical(indexer, "Birch") == [commit]
    assert _lexical(indexer, "Alder") == []
    assert indexer.row(commit)["author_raw"] == "Kim Alder <kim@old.example>"
    # removing it maps back; a second run with no change is a no-op
    (repo.path / ".mailmap").unlink()
    report = indexer.run()
    assert report.repositories[0].identities_remapped == 1
    assert indexer.row(commit)["author"] == "Kim Alder <kim@old.example>"
    assert indexer.row(commit)["author_raw"] is None
    assert indexer.run().up_to_date


def test_mailmap_remap_drops_vectors_of_changed_commits(
    make_repo: Callable[..., GitRepo], indexer: Indexer
) -> None:
    repo = make_repo()
    kim = repo.commit({"a.txt": "a\n"}, "Kim's work", author=KIM_OLD)
    ada = repo.commit({"b.txt": "b\n"}, "Ada's work")
    indexer.run()
    with indexer.open() as store, store.atomic() as conn:
        conn.execute("INSERT INTO embedding_namespaces (key, provider, model, dimensions, "
                     "text_format, created_at) VALUES ('k', 'p', 'm', 1, 't', 0)")
        conn.execute("INSERT INTO commit_vectors SELECT 1, id, 'x', x'00000000' FROM git_commits")
    (repo.path / ".mailmap").write_text(MAILMAP)
    indexer.run()
    with indexer.open() as store:
        left = {r[0] for r in store.conn.execute(
            "SELECT c.hash FROM commit_vectors v JOIN git_commits c ON c.id = v.commit_id")}
    assert left == {ada} and kim not in left


def test_bare_repository_uses_head_mailmap(
    make_repo: Callable[..., GitRepo], tmp_path: Path, indexer: Indexer
) -> None:
    source = GitRepo(tmp_path / "source")
    commit = source.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD)
    source.commit({".mailmap": MAILMAP}, "Add mailmap")
    subprocess.run(["git", "clone", "-q", "--bare", str(source.path),
                    str(indexer.root / "bare.git")], check=True, capture_output=True)
    indexer.run()
    assert indexer.row(commit)["author"] == "Kim Birch <kim@new.example>"


def test_symlinked_mailmap_is_ignored_like_git(
    make_repo: Callable[..., GitRepo], indexer: Indexer, tmp_path: Path
) -> None:
    repo = make_repo()
    commit = repo.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD)
    target = tmp_path / "elsewhere.mailmap"
    target.write_text(MAILMAP)
    os.symlink(target, repo.path / ".mailmap")
    report = indexer.run()
    assert indexer.row(commit)["author"] == "Kim Alder <kim@old.example>"
    assert any("symbolic link" in n for n in report.repositories[0].notes)


def test_identity_in_other_encoding_is_mapped_after_reencoding(
    make_repo: Callable[..., GitRepo], indexer: Indexer
) -> None:
    """A Latin-1 commit (``encoding`` header): the name is UTF-8 in the index and mapped."""
    repo = make_repo()
    (repo.path / ".mailmap").write_text("Zoë Canonical <zoe@example.com> <zoe@old.example>\n")
    tree = repo.git("write-tree")
    body = (
        f"tree {tree}\nauthor ".encode() + "Zoë Old".encode("latin-1")
        + f" <zoe@old.example> {BASE_TIME} +0000\ncommitter C <c@x> {BASE_TIME} +0000\n"
          "encoding ISO-8859-1\n\nLatin-1 identity\n".encode()
    )
    repo.git("update-ref", "refs/heads/main", repo.hash_commit(body))
    commit = repo.head()
    indexer.run()
    assert indexer.row(commit)["author"] == "Zoë Canonical <zoe@example.com>"


def test_results_expose_the_raw_identities_in_full_detail_only(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI
) -> None:
    """``author_raw``/``committer_raw`` on search results (JSON, MCP's answers) and
    ``get_commit``: the identity as git recorded it (``%an <%ae>``), beside the mailmapped
    ``author`` (``%aN <%aE>``); not in the compact form."""
    from gitquarry.history.answers.answers import AnswerOptions, HistoryAnswers
    from gitquarry.history.answers.commit_show import get_commit
    from gitquarry.history.search.searcher import HistorySearcher
    from gitquarry.workspace import resolve_workspace

    repo = make_repo()
    repo.commit({".mailmap": MAILMAP}, "Add mailmap")
    kim = repo.commit({"a.txt": "a\n"}, "Tune the parser", author=KIM_OLD,
                      committer=("Kim Alder", "kim@old.example"))
    ada = repo.commit({"b.txt": "b\n"}, "Tune the parser again")
    code, _, err = cli("index", str(indexer.root), "--no-embed", "-q")
    assert code == 0, err

    def git_identity(commit: str, fmt: str) -> str:
        return repo.git("log", "-1", f"--format={fmt}", commit)

    code, out, err = cli("history", "tune parser", "--project", str(indexer.root), "--mode",
                         "lexical", "--json")
    assert code == 0, err
    by_hash = {r["hash"]: r for r in json.loads(out)["results"]}
    for commit in (kim, ada):
        r = by_hash[commit]
        assert r["author"] == git_identity(commit, "%aN <%aE>")
        assert r["author_raw"] == git_identity(commit, "%an <%ae>")
        assert r["committer"] == git_identity(commit, "%cN <%cE>")
        assert r["committer_raw"] == git_identity(commit, "%cn <%ce>")
    assert by_hash[kim]["author_raw"] == "Kim Alder <kim@old.example>" != by_hash[kim]["author"]
    assert by_hash[ada]["author_raw"] == by_hash[ada]["author"]

    searcher = HistorySearcher(resolve_workspace(indexer.root, for_search=True))
    answers = HistoryAnswers(searcher)
    try:
        full = answers.search("tune parser", top_n=5, mode="lexical",
                              options=AnswerOptions(max_tokens=4000))
        compact = answers.search("tune parser", top_n=5, mode="lexical",
                                 options=AnswerOptions(detail="compact"))
        shown = get_commit(answers, kim)
    finally:
        answers.close()
        searcher.close()
    raws = {r["hash"]: r["author_raw"] for r in full["results"]}
    assert raws[kim] == "Kim Alder <kim@old.example>"
    assert all("author_raw" not in r and "committer_raw" not in r for r in compact["results"])
    assert (shown["author_raw"], shown["committer_raw"]) == ("Kim Alder <kim@old.example>",) * 2
    assert shown["author"] == "Kim Birch <kim@new.example>"
