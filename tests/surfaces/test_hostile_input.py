"""Hostile and damaged input found by the breaker session (2026-11-30): each test is the
reproduction of one defect, run against real repositories and real index files."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gitquarry.errors import IndexCorruptError
from gitquarry.store.connection import open_store, storage_errors

from .conftest import CLI, Repo, fast_import, run_gitquarry, user_config


@pytest.fixture
def indexed(tmp_path: Path, cli: CLI) -> Path:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    fast_import(ws / "repo", [
        (f"Retry change {i}", {f"src/mod{i % 3}.py": f"retries = {i}\n"}) for i in range(12)
    ])
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    return ws


def damage_diffs(db: Path) -> None:
    """Overwrite the stored (zlib-compressed) diffs with bytes that are not a zlib stream,
    bypassing the update trigger (which would have to inflate them)."""
    conn = sqlite3.connect(db)
    try:
        trigger = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'git_commits_au'").fetchone()[0]
        conn.execute("DROP TRIGGER git_commits_au")
        conn.execute("UPDATE git_commits SET delta_truncated = X'789C0000DEADBEEF' "
                     "WHERE typeof(delta_truncated) = 'blob'")
        conn.execute(trigger)
        conn.commit()
    finally:
        conn.close()


def test_damaged_compressed_diff_is_index_corrupt_not_internal_error(
        indexed: Path, cli: CLI) -> None:
    db = indexed / ".gitquarry" / "index.db"
    damage_diffs(db)
    for argv in (["history", "retry", "--mode", "lexical"],
                 ["history", "retry", "--mode", "lexical", "--pickaxe", "retries", "--json"]):
        code, out, err = cli(*argv, "--project", str(indexed))
        assert code == 1, (argv, out, err)
        assert "internal error" not in err
        assert "corrupt" in err and "rebuild-index" in err, err
    # read in SQL (the pipeline's dedup, the FTS triggers on prune): the same typed error
    store = open_store(db)
    try:
        with pytest.raises(IndexCorruptError, match="stored diff"), storage_errors(db):
            store.conn.execute("SELECT gq_inflate(delta_truncated) FROM git_commits").fetchall()
    finally:
        store.close()


BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "Trojan Source" reordering
RAW_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_bidi_controls_never_reach_the_terminal_raw(tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "repo")
    sha = repo.commit(f"Fix parser {BIDI}gnp.exe\u2066 bug\n\nbody \u200f with bidi",
                      {f"src/evil{BIDI}txt.py": "parser = 1\n",
                       "docs/guide.md": f"# Guide {BIDI}\n\nparser notes \u2067x\n"})
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    code, _, err = cli("repo-docs", "register", "--repo", "o/bidi",
                       "--repository-path", str(ws / "repo"))
    assert code == 0, err
    seen = 0
    for argv in (["history", "parser", "--project", str(ws), "--mode", "lexical"],
                 ["history", "parser", "--project", str(ws), "--mode", "lexical", "--json"],
                 ["show", sha[:8], "--project", str(ws)],
                 ["show", sha[:8], "--project", str(ws), "--json"],
                 ["blame", f"src/evil{BIDI}txt.py", "--project", str(ws)],
                 ["repo-docs", "search", "parser", "--repo", "o/bidi", "--mode", "fulltext"],
                 ["repo-docs", "search", "parser", "--repo", "o/bidi", "--mode", "fulltext",
                  "--json"]):
        code, out, err = cli(*argv)
        assert code == 0, (argv, err)
        assert not RAW_BIDI.search(out + err), (argv, out + err)
        seen += "\\u202e" in out
        if "--json" in argv:
            data = json.loads(out)  # the decoded values keep the character
            assert BIDI in json.dumps(data, ensure_ascii=False)
    assert seen == 7


def test_a_budget_too_small_for_one_result_is_an_error_not_an_empty_page(
        tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    long_title = "Retry " + " ".join(f"word{i}" for i in range(300))  # one result > 500 tokens
    fast_import(ws / "repo", [(f"{long_title} {i}", {f"f{i}.py": f"retries = {i}\n"})
                              for i in range(3)])
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    base = ["history", "retry", "--project", str(ws), "--mode", "lexical", "--json",
            "--detail", "compact"]
    code, out, err = cli(*base, "--max-tokens", "500")
    # before: results [] and a cursor at offset 0; since issue 24 the stdout of a --json
    # error is the error as JSON (it was empty), never a page
    assert code == 2 and json.loads(out)["error"]["exit_code"] == 2, (out, err)
    assert "results" not in json.loads(out), out
    found = re.search(r"needs about ([\d,]+)", err)
    assert found and "--max-tokens" in err, err
    code, out, err = cli(*base, "--max-tokens", found.group(1).replace(",", ""))
    assert code == 0, err
    data = json.loads(out)
    assert len(data["results"]) >= 1
    assert data["next_cursor"] is None or not data["next_cursor"].endswith(".0")


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_a_query_of_only_operators_says_why_it_found_nothing(tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "repo")
    repo.commit("Docs", {"README.md": "# Parser\n\nparser notes\n"})
    graph = ws / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text(
        "nodes:\n  - ref_id: parser\n    kind: service\n    summary: The parser service\n",
        encoding="utf-8")
    code, _, err = cli("repo-docs", "register", "--repo", "o/ops",
                       "--repository-path", str(ws / "repo"))
    assert code == 0, err
    for query in ('"', "* ( ) :", "^-+"):
        code, out, err = cli("repo-docs", "search", query, "--repo", "o/ops",
                             "--mode", "fulltext", "--json")
        assert code == 0, err
        data = json.loads(out)
        assert data["hits"] == []
        assert "no_searchable_terms" in [w["code"] for w in data["warning_details"]], query
        code, out, err = cli("search", query, "--project", str(ws))
        assert code == 0, err
        assert "holds no searchable word" in err, (query, err)


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_show_without_the_git_object_says_why_and_keeps_the_path_filter(
        tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "repo")
    repo.commit("Base", {"keep.py": "a = 1\n"})
    sha = repo.commit("Two files", {"one.py": "one = 1\n", "two.py": "two = 2\n"})
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    (ws / "repo" / ".git" / "objects" / sha[:2] / sha[2:]).unlink()  # a missing Git object
    code, out, err = cli("show", sha[:10], "--project", str(ws), "--path", "two.py", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["diff_source"].startswith("index (git could not read the commit"), data
    assert "+two = 2" in data["diff"] and "one.py" not in data["diff"], data["diff"]
    assert {f["path"] for f in data["files"]} == {"one.py", "two.py"}
    code, out, err = cli("show", sha[:10], "--project", str(ws))
    assert code == 0 and "binary" not in out, out  # the counts are unknown, not "binary"
    assert "git could not read the commit" in err


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_arguments_that_are_not_utf8_are_usage_errors(indexed: Path) -> None:
    """A shell passes bytes: ``\\xff`` reaches Python as the lone surrogate ``\\udcff``, which the
    cursor digest (and SQLite) could not encode: it was an internal error."""
    bad = os.fsdecode(b"caf\xe9")
    for extra in (["history", bad], ["history", "x", "--author", bad],
                  ["history", "x", "--pickaxe", bad], ["history", "x", "--files-glob", bad],
                  ["history", "x", "--path", bad], ["blame", "src/mod0.py", bad]):
        proc = run_gitquarry(*extra, "--project", str(indexed), "--json")
        assert proc.returncode == 2, (extra, proc.stderr)
        assert b"not valid UTF-8" in proc.stderr and b"internal error" not in proc.stderr


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_blame_over_a_missing_object_warns_instead_of_answering_silently(
        tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = Repo(ws / "repo")
    repo.commit("Add retry", {"net.py": "retries = 3\n"})
    middle = repo.commit("Add timeout", {"net.py": "retries = 3\ntimeout = 5\n"})
    repo.commit("Add backoff", {"net.py": "retries = 3\ntimeout = 5\nbackoff = 2\n"})
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    (ws / "repo" / ".git" / "objects" / middle[:2] / middle[2:]).unlink()
    code, out, err = cli("blame", "net.py", "--project", str(ws), "--json")
    assert code == 0, err
    data = json.loads(out)  # git still answers (exit 0), with lines given to the wrong commit
    assert [w["code"] for w in data["warning_details"]] == ["blame_incomplete"]
    assert middle in data["warnings"][0]
    code, out, err = cli("blame", "net.py", "--project", str(ws))
    assert code == 0 and "may be attributed to the wrong commit" in err, err
    code, out, err = cli("blame", "net.py:9", "--project", str(ws))
    assert code == 2 and "git blame failed: git blame failed" not in err, err


def test_a_damaged_cursor_store_is_rebuilt_and_cursors_keep_working(indexed: Path,
                                                                      cli: CLI) -> None:
    (indexed / ".gitquarry" / "cursors.db").write_bytes(b"junk, not a database\n" * 100)
    base = ["history", "retry", "--project", str(indexed), "--mode", "lexical", "--json",
            "--top-n", "2"]
    code, out, err = cli(*base)
    assert code == 0, err
    first = json.loads(out)
    assert "cursor_in_memory" not in [w["code"] for w in first["warning_details"]]
    code, out, err = cli(*base, "--cursor", first["next_cursor"])  # another process's cursor
    assert code == 0, err
    page = json.loads(out)
    assert page["results"] and not {r["hash"] for r in page["results"]} & {
        r["hash"] for r in first["results"]}


def test_usage_errors_name_options_as_the_command_line_spells_them(indexed: Path,
                                                                  cli: CLI) -> None:
    for extra, name in ((["--min-score", "2"], "--min-score:"), (["--sort", "x"], "--sort:")):
        code, _, err = cli("history", "retry", "--project", str(indexed), *extra)
        assert code == 2 and name in err, err


def test_words_past_the_query_cap_are_reported_not_silently_dropped(indexed: Path,
                                                                     cli: CLI) -> None:
    query = " ".join(f"w{i}" for i in range(70)) + " retry"  # 'retry' is the 71st word
    code, out, err = cli("history", query, "--project", str(indexed), "--mode", "lexical",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    dropped = [w for w in data["warning_details"] if w["code"] == "query_words_dropped"]
    assert len(dropped) == 1 and "7 more" in dropped[0]["message"], dropped
    code, out, err = cli("history", " ".join(f"w{i}" for i in range(10)) + " retry",
                         "--project", str(indexed), "--mode", "lexical", "--json")
    assert "query_words_dropped" not in out


def test_a_corrupt_docs_cache_names_its_own_remedy(tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    repo = Repo(tmp_path / "repo")
    repo.commit("Docs", {"README.md": "# Parser\n\nparser notes\n"})
    code, _, err = cli("repo-docs", "register", "--repo", "o/cache",
                       "--repository-path", str(repo.path))
    assert code == 0, err
    (repo.path / ".gitquarry").mkdir(exist_ok=True)
    (repo.path / ".gitquarry" / "repo_docs.db").write_bytes(b"not a database\n" * 200)
    code, _, err = cli("repo-docs", "search", "parser", "--repo", "o/cache",
                       "--mode", "fulltext")
    assert code == 1 and "corrupt" in err, err
    # `rebuild-index` rebuilds the workspace index, never this cache
    assert "repo-docs index" in err and "rebuild-index" not in err, err
    (repo.path / ".gitquarry" / "repo_docs.db").unlink()
    code, out, err = cli("repo-docs", "search", "parser", "--repo", "o/cache",
                         "--mode", "fulltext")
    assert code == 0 and "README.md" in out, (out, err)


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_blame_revisions_git_cannot_take_are_path_not_found_over_mcp(
        tmp_path: Path, cli: CLI) -> None:
    """MCP ``blame_search`` with a revision over the kernel's 128 KiB argument cap used to be
    ``internal_error: OSError: Argument list too long``; ``^HEAD`` and an option-looking name
    must not reach git as revisions either. Each is the typed "no indexed repository has this
    file at ..." and a good call right after answers."""
    from .conftest import with_mcp_server

    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add retry", {"net.py": "retries = 3\n"})
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    bad = ["H" * 200_000, "^HEAD", "--output=" + str(tmp_path / "out")]

    async def body(session: Any) -> Any:
        out = []
        for rev in bad:
            out.append(await session.call_tool("blame_search",
                                               {"path": "net.py", "revision": rev}))
        out.append(await session.call_tool("blame_search", {"path": "net.py"}))
        return out

    results, _ = with_mcp_server(ws, body, tmp_path)
    for rev, res in zip(bad, results[:-1], strict=True):
        text = res.content[0].text
        assert res.is_error, rev[:20]
        assert "internal_error" not in text and "OSError" not in text, text[:300]
        assert "path_not_found" in text, text[:300]
    assert not results[-1].is_error, results[-1].content[0].text
    assert not (tmp_path / "out").exists()
