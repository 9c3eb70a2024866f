"""Defects a tester found in s7 (2026-12-02): each test reproduces one on a real repository
and a real index (or a real empty file), through the CLI in-process and a real MCP client.

- a zero-byte or schema-less ``index.db`` was taken for an empty index, and a read command
  (``status``, ``history``, ``show``, ``blame``, ``search``, the MCP server) wrote a schema
  into it: a read now says "no index" (exit 1, ``no_index``) and leaves the file as it was;
  ``index`` initialises it;
- ``--author ''``/``--committer ''``/``--path ''``/``--pickaxe ''`` (and MCP ``author``,
  ``committer``, ``path``, ``pickaxe`` given as ``""``) were silently "not given": a usage
  error naming the option (exit 2), as ``--files-glob ''`` is;
- ``--explain`` named a time bound ``--after``/``--before`` when the user typed
  ``--since``/``--until``: it names the option as typed;
- a repository reached through a symlink was skipped with a warning that did not say why:
  the warning names the path (escaped) and says it is a symlink;
- MCP ``blame_search`` with a line past the end of the file blamed ``path``: the error names
  the line argument.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, fast_import, user_config, with_mcp_server


def _workspace(root: Path) -> Path:
    fast_import(root / "repo", [
        (f"Parser change {i}", {f"src/mod{i % 3}.py": f"parser = {i}\n"}) for i in range(6)
    ])
    return root


def _snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (recursively) and its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def _make_db(db: Path, kind: str) -> None:
    """An ``index.db`` holding no index: empty (zero bytes), a SQLite file with no table, or
    one with only this installation's owner stamp (an ``index`` that has just begun)."""
    db.parent.mkdir(parents=True)
    if kind == "zero-byte":
        db.write_bytes(b"")
        return
    conn = sqlite3.connect(db)
    try:
        if kind == "schema-less":
            conn.execute("CREATE TABLE t (x)")
            conn.execute("DROP TABLE t")
        else:
            from gitquarry.store import trust

            conn.isolation_level = None
            trust.stamp(conn, db)
        conn.commit()
    finally:
        conn.close()
    assert db.stat().st_size > 0


READ_COMMANDS = [
    ("status", "--project", "{ws}"),
    ("status", "--project", "{ws}", "--json"),
    ("history", "parser", "--project", "{ws}"),
    ("history", "parser", "--project", "{ws}", "--json"),
    ("show", "{head}", "--project", "{ws}", "--no-pager"),
    ("show", "{head}", "--project", "{ws}", "--json"),
    ("blame", "src/mod0.py", "--project", "{ws}", "--no-pager"),
    ("search", "parser", "--project", "{ws}"),
]


@pytest.mark.parametrize("kind", ["zero-byte", "schema-less", "stamped"])
def test_an_uninitialised_index_db_is_no_index_and_reads_never_write_it(
        tmp_path: Path, cli: CLI, kind: str) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = _workspace(tmp_path / "ws")
    head = (ws / "repo" / ".git" / "refs" / "heads" / "main").read_text().strip()
    commands = [tuple(a.replace("{ws}", str(ws)).replace("{head}", head) for a in argv)
                for argv in READ_COMMANDS]
    # each command's answer when there is no index file at all: the one expected below
    expected = {argv: cli(*argv) for argv in commands}
    assert expected[commands[1]][0] == 1
    assert json.loads(expected[commands[1]][1])["error"]["code"] == "no_index"
    assert not (ws / ".gitquarry").exists()
    _make_db(ws / ".gitquarry" / "index.db", kind)
    before = _snapshot(ws / ".gitquarry")
    from gitquarry.store import trust

    records = trust.records_dir()
    owned = _snapshot(records) if records.exists() else {}
    for argv in commands:
        code, out, err = cli(*argv)
        assert code != 0 and "internal error" not in err, (argv, out, err)
        assert (code, out, err) == expected[argv], argv
        assert _snapshot(ws / ".gitquarry") == before, argv  # nothing written, nothing new
    assert (_snapshot(records) if records.exists() else {}) == owned

    async def body(session: Any) -> Any:
        return await session.call_tool("search_git_history", {"query": "parser"})

    result, _ = with_mcp_server(ws, body, tmp_path)
    assert result.is_error and "no_index: no gitquarry index" in result.content[0].text
    assert _snapshot(ws / ".gitquarry") == before

    # a write command initialises it
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    code, out, err = cli("history", "parser", "--project", str(ws), "--json")
    assert code == 0 and json.loads(out)["total_commits_indexed"] == 6, err
    assert os.path.getsize(ws / ".gitquarry" / "index.db") > 0


@pytest.fixture
def indexed(tmp_path: Path, cli: CLI) -> Path:
    user_config('[embedding]\nprovider = "none"\n')
    ws = _workspace(tmp_path / "ws")
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    return ws


@pytest.mark.parametrize(("option", "value"), [
    ("--author", ""), ("--author", "  "), ("--committer", ""), ("--path", ""),
    ("--path", " "), ("--path", "/"), ("--path", "./"), ("--pickaxe", ""), ("-S", ""),
])
def test_an_empty_filter_is_a_usage_error_naming_the_option(
        indexed: Path, cli: CLI, option: str, value: str) -> None:
    named = "--pickaxe" if option == "-S" else option
    for extra in ([], ["--json"]):
        code, out, err = cli("history", "parser", option, value, *extra,
                             "--project", str(indexed))
        assert code == 2, (option, value, out, err)
        assert err.startswith(f"Error: {named}: "), err
        assert "empty" in err and "leave it out" in err, err
        if extra:
            error = json.loads(out)["error"]
            assert error["code"] == "invalid_argument" and error["exit_code"] == 2
            assert error["message"].startswith(f"{named}: ")
    # a value is still a filter; a pickaxe of one space is a string git log -S looks for
    for option, value in (("--author", "Ada"), ("--path", "src"), ("--pickaxe", " ")):
        code, out, err = cli("history", "parser", option, value, "--json",
                             "--project", str(indexed))
        assert code == 0, (option, err)


def test_mcp_refuses_an_empty_filter_and_takes_none_as_not_given(
        indexed: Path, tmp_path: Path) -> None:
    names = ("author", "committer", "path", "pickaxe")

    async def body(session: Any) -> dict[str, Any]:
        out = {name: await session.call_tool("search_git_history",
                                             {"query": "parser", name: ""})
               for name in names}
        out["none"] = await session.call_tool(
            "search_git_history", {"query": "parser", **dict.fromkeys(names)})
        return out

    results, _ = with_mcp_server(indexed, body, tmp_path)
    for name in names:
        text = results[name].content[0].text
        assert results[name].is_error, (name, text)
        assert f"invalid_argument: {name}: " in text and "empty" in text, text
    assert not results["none"].is_error, results["none"].content[0].text
    assert json.loads(results["none"].content[0].text)["results"]


@pytest.mark.parametrize(("typed", "other"), [
    (["--since", "2024-01-01"], "--after"), (["--after", "2024-01-01"], "--since"),
    (["--until", "2099-01-01"], "--before"), (["--before=2099-01-01"], "--until"),
    (["--since", "2024-01-01", "--until", "2099-01-01"], "--after"),
])
def test_explain_names_a_time_bound_as_typed(indexed: Path, cli: CLI, typed: list[str],
                                              other: str) -> None:
    code, _, err = cli("history", "parser", *typed, "--explain", "--project", str(indexed))
    assert code == 0, err
    for option in typed:
        name = option.partition("=")[0]
        if name.startswith("--"):
            assert f"{name} " in err and " read as " in err, err
    assert f"{other} " not in err, err
    # the last spelling typed is the one Click kept: the one named
    code, _, err = cli("history", "parser", "--after", "2024-01-02", "--since",
                       "2024-01-01", "--explain", "--project", str(indexed))
    assert code == 0 and "--since 2024-01-01 read as" in err and "--after 2024" not in err, err


def test_a_repository_reached_through_a_symlink_is_skipped_and_the_warning_says_so(
        tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = _workspace(tmp_path / "ws")
    outside = fast_import(tmp_path / "outside", [("Outside change", {"o.py": "o = 1\n"})])
    (ws / "linked").symlink_to(outside.path)
    (ws / "evil\x1b[31mlink").symlink_to(outside.path)
    (ws / "nest").mkdir()
    (ws / "nest" / "deeper").symlink_to(outside.path)
    plain = tmp_path / "plain-dir"
    plain.mkdir()
    (ws / "not-a-repo").symlink_to(plain)  # a link to no repository: nothing to say
    code, out, err = cli("index", str(ws), "-q")
    assert code == 0, err
    assert "\x1b" not in err and "\x1b" not in out
    for shown in ("linked", "evil\\x1b[31mlink", "nest/deeper"):
        assert f"Warning: {ws / shown} is a symbolic link" in err, err
    assert "not-a-repo" not in err
    lines = [ln for ln in err.splitlines() if "symbolic link" in ln]
    assert len(lines) == 3 and all("[repository_symlink]" in ln for ln in lines), lines
    assert all("skipped" in ln for ln in lines), lines
    # the repository itself only (the linked one's commit is not indexed); listed by status
    code, out, err = cli("status", "--project", str(ws), "--json")
    data = json.loads(out)
    assert data["total_commits"] == 6
    skipped = {s["path"]: s["code"] for s in data["skipped"]}
    assert skipped == {str(ws / "linked"): "repository_symlink",
                       str(ws / "evil\x1b[31mlink"): "repository_symlink",
                       str(ws / "nest" / "deeper"): "repository_symlink"}, skipped


def test_blame_past_the_end_of_the_file_names_the_line_argument(
        indexed: Path, cli: CLI, tmp_path: Path) -> None:
    calls: dict[str, dict[str, Any]] = {
        "start": {"path": "src/mod0.py", "start_line": 99},
        "range": {"path": "src/mod0.py", "start_line": 5, "end_line": 9},
        "spec": {"path": "src/mod0.py:7"},
        "inside": {"path": "src/mod0.py", "start_line": 1, "end_line": 99},  # end clamped
        "missing": {"path": "src/nope.py", "start_line": 99},
    }

    async def body(session: Any) -> dict[str, Any]:
        return {name: await session.call_tool("blame_search", args)
                for name, args in calls.items()}

    results, _ = with_mcp_server(indexed, body, tmp_path)
    text = {name: r.content[0].text for name, r in results.items()}
    for name, line, argument in (("start", 99, "start_line"), ("range", 5, "start_line"),
                                 ("spec", 7, "path")):
        assert results[name].is_error, (name, text[name])
        assert (f"invalid_argument: {argument}: line {line} is past the end of "
                "'src/mod0.py', which has 1 line at HEAD") in text[name], text[name]
        assert "git blame failed" not in text[name]
    assert not results["inside"].is_error, text["inside"]
    assert results["missing"].is_error and "path_not_found" in text["missing"], text["missing"]
    # the command line: the line is part of PATH[:LINE]
    code, out, err = cli("blame", "src/mod0.py:7", "--no-pager", "--project", str(indexed))
    assert code == 2, (out, err)
    assert err.startswith("Error: PATH: line 7 is past the end of 'src/mod0.py', which has "
                          "1 line at HEAD"), err
