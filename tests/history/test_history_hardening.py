"""Bad input found by an adversarial pass: each gets a typed error or a stated warning,
never an internal error, a hang or a silently empty answer."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.errors import IndexCorruptError, InvalidArgumentError, InvalidGlobError
from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval.filters import compile_glob
from gitquarry.retrieval.fts import MAX_QUERY_WORDS, fts5_match_expression, query_words
from gitquarry.store import open_store

from .conftest import GitRepo, Indexer

CLI = Callable[..., tuple[int, str, str]]


@pytest.fixture
def indexed(make_repo: Callable[..., GitRepo], indexer: Indexer) -> Indexer:
    repo = make_repo("repo")
    repo.commit({"src/app.py": "print('alpha')\n"}, "Add alpha handler")
    repo.commit({"src/cache.py": "CACHE = {}\n"}, "Cache the alpha lookups")
    indexer.run()
    return indexer


def test_repeated_words_are_searched_once_and_fast(indexed: Indexer) -> None:
    assert fts5_match_expression("alpha " * 300, "OR") == '"alpha"'
    assert len(query_words(" ".join(f"w{i}" for i in range(5000)))) == MAX_QUERY_WORDS
    with indexed.open() as store:
        started = time.monotonic()
        response = search_git_history(store, "alpha " * 300, top_n=5)
        many = search_git_history(store, " ".join(f"w{i}" for i in range(5000)) + " alpha")
        assert time.monotonic() - started < 10  # minutes before the fix
    assert [r.title for r in response.results][:1] == ["Add alpha handler"]
    assert many.results == [] or all(r.hash for r in many.results)


def test_nul_in_query_is_whitespace(indexed: Indexer) -> None:
    with indexed.open() as store:
        response = search_git_history(store, "alpha\x00handler", top_n=5)
    assert response.results[0].title == "Add alpha handler"


@pytest.mark.parametrize("bound", [10**30, -(10**30), 2**63])
def test_out_of_range_times_are_usage_errors(indexed: Indexer, bound: int) -> None:
    with indexed.open() as store, pytest.raises(InvalidArgumentError):
        search_git_history(store, "alpha", after=bound)


def test_out_of_range_time_on_the_cli_exits_2(indexed: Indexer, cli: CLI) -> None:
    code, _, err = cli("history", "alpha", "--after", "9" * 25, "--project", str(indexed.root))
    assert code == 2 and "invalid time" in err


def test_brace_bomb_glob_is_a_typed_error() -> None:
    with pytest.raises(InvalidGlobError):
        compile_glob("{a,b}" * 30)


def test_leading_dot_slash_and_stray_spaces_in_globs() -> None:
    assert compile_glob("./src/*.py")("src/app.py")
    assert compile_glob("*.py ")("src/app.py")


def test_dropped_table_is_reported_as_corruption(indexed: Indexer) -> None:
    conn = sqlite3.connect(indexed.db_path)
    conn.execute("DROP TABLE repo_commits")
    conn.commit()
    conn.close()
    with pytest.raises(IndexCorruptError):
        open_store(indexed.db_path)


def test_dropped_fts_table_is_corruption_not_missing_fts5(indexed: Indexer, cli: CLI) -> None:
    conn = sqlite3.connect(indexed.db_path)
    conn.execute("DROP TABLE commit_fts")
    conn.commit()
    conn.close()
    code, _, err = cli("history", "alpha", "--mode", "lexical", "--project", str(indexed.root))
    assert code == 1
    assert "rebuild-index" in err and "FTS5 module" not in err
    code, _, err = cli("rebuild-index", str(indexed.root), "--no-embed", "-q")
    assert code == 0, err
    code, out, _ = cli("history", "alpha", "--mode", "lexical", "--project", str(indexed.root))
    assert code == 0 and "Add alpha handler" in out


def test_index_location_that_is_a_file(make_repo: Callable[..., GitRepo], cli: CLI) -> None:
    repo = make_repo("repo")
    repo.commit({"a.txt": "a\n"}, "one")
    (repo.path / ".gitquarry").write_text("not a directory", encoding="utf-8")
    code, _, err = cli("index", str(repo.path), "--no-embed", "-q")
    assert code == 1
    assert "cannot use the index" in err and "internal error" not in err


def test_index_db_that_is_a_directory(make_repo: Callable[..., GitRepo], cli: CLI) -> None:
    repo = make_repo("repo")
    repo.commit({"a.txt": "a\n"}, "one")
    (repo.path / ".gitquarry" / "index.db").mkdir(parents=True)
    for argv in (("index",), ("rebuild-index",)):
        code, _, err = cli(*argv, str(repo.path), "--no-embed", "-q")
        assert code == 1, err
        assert "not a regular file" in err and "internal error" not in err


@pytest.mark.parametrize(
    "toml",
    [
        "[search]\nrrf_k = -1\n",
        "[search]\nlexical_weight = -1.0\n",
        "[search]\nsemantic_weight = nan\n",
        "[search]\ntop_n = 0\n",
        "[graph]\nchunk_max_chars = 0\n",
        "[embedding]\ntimeout_s = -1.0\n",
        '[indexing]\nindex_dir = ""\n',
        '[git_indexing]\nrefs = ["["]\n',
        '[indexing]\nexclude = ["{a"]\n',
    ],
)
def test_out_of_range_config_is_a_config_error(indexed: Indexer, cli: CLI, toml: str) -> None:
    user_file = Path(os.environ["GITQUARRY_CONFIG"])
    user_file.write_text(toml, encoding="utf-8")
    try:
        code, _, err = cli("history", "alpha", "--project", str(indexed.root))
    finally:
        user_file.write_text("", encoding="utf-8")
    assert code == 2, err
    assert str(user_file) in err and "internal error" not in err
    if toml.startswith(("[search]", '[git_indexing]\nrefs', '[indexing]\nexclude')):
        # repository-owned keys are range-checked in the workspace file too
        (indexed.root / ".gitquarry.toml").write_text(toml, encoding="utf-8")
        code, _, err = cli("history", "alpha", "--project", str(indexed.root))
        assert code == 2, err
        assert ".gitquarry.toml" in err and "internal error" not in err


def test_empty_index_says_so(
    workspace: Path, make_repo: Callable[..., GitRepo], cli: CLI
) -> None:
    make_repo("unborn")  # a repository with no commit yet: an index with none in it (a
    # folder with no repository at all gets no index: `index` writes nothing there)
    code, _, err = cli("index", str(workspace), "--no-embed", "-q")
    assert code == 0, err
    code, out, err = cli("history", "anything", "--project", str(workspace), "--json")
    import json

    data = json.loads(out)
    assert data["results"] == []
    assert "empty_index" in [w["code"] for w in data["warning_details"]]


def test_unfinished_run_is_flagged_in_results(indexed: Indexer) -> None:
    conn = sqlite3.connect(indexed.db_path)
    conn.execute("UPDATE repositories SET run_in_progress = 1")
    conn.commit()
    conn.close()
    with indexed.open() as store:
        response = search_git_history(store, "alpha")
    assert "indexing_incomplete" in [w.code for w in response.warnings]


def test_repository_without_matching_refs_is_warned(
    make_repo: Callable[..., GitRepo], cli: CLI
) -> None:
    repo = make_repo("repo")
    repo.commit({"a.txt": "a\n"}, "one")
    repo.git("checkout", "-q", "--detach")
    repo.git("branch", "-q", "-D", "main")
    code, _, err = cli("index", str(repo.path), "--no-embed")
    assert code == 0
    assert "no ref matches" in err


def test_control_characters_never_reach_the_terminal_raw(
    make_repo: Callable[..., GitRepo], cli: CLI
) -> None:
    repo = make_repo("repo")
    repo.commit({"a.txt": "a\n"}, "bell \x1b[2J clear")
    code, _, err = cli("index", str(repo.path), "--no-embed", "-q")
    assert code == 0, err
    code, out, _ = cli("history", "bell", "--mode", "lexical", "--project", str(repo.path))
    assert code == 0
    assert "\x1b" not in out and "\\x1b[2J" in out


def _clone(source: GitRepo, target: Path, *args: str) -> None:
    import subprocess

    subprocess.run(
        ["git", "clone", "-q", *args, f"file://{source.path}", str(target)],
        check=True, capture_output=True,
    )


def test_shallow_copy_never_hides_the_full_commit(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI
) -> None:
    """`a_shallow` (depth 1) is indexed before `z_full`: its boundary commit looks parentless
    and adds every file. The stored commit must end up as the full repository has it."""
    full = make_repo("z_full")
    first = full.commit({"a.txt": "a\n"}, "first adds a")
    second = full.commit({"b.txt": "b\n"}, "second adds only b")
    _clone(full, indexer.root / "a_shallow", "--depth", "1")
    report = indexer.run()
    shallow_report = next(r for r in report.repositories if r.path.endswith("a_shallow"))
    assert shallow_report.shallow_commits == 1
    row = indexer.row(second)
    assert row["parents"] == first
    assert row["files_changed"] == '["b.txt"]'
    with indexer.open() as store:
        hits = search_git_history(store, "second", files_glob="a.txt", mode="lexical")
    assert hits.results == []  # the commit never touched a.txt


def test_shallow_only_commit_is_stored_without_invented_files(
    make_repo: Callable[..., GitRepo], indexer: Indexer, tmp_path: Path
) -> None:
    source = make_repo(str(tmp_path / "elsewhere" / "src"))
    source.commit({"a.txt": "a\n"}, "first adds a")
    second = source.commit({"b.txt": "b\n"}, "second adds only b")
    _clone(source, indexer.root / "shallow", "--depth", "1")
    indexer.run()
    row = indexer.row(second)
    assert row["files_changed"] == "[]"
    assert "shallow clone boundary" in str(row["delta_truncated"])
