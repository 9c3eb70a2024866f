"""Issue 7 §8 (terminal escaping everywhere) and §9 (help, wording, plurals, bold snippets).

Every command runs as a real subprocess over a workspace and repository whose directory
names, commit text, file names and graph text hold terminal escape sequences; no raw ESC,
BEL or C1 control may reach stdout or stderr, in text or JSON output, in errors or log lines.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, Repo, run_gitquarry, user_config

ESC_DIR = "ws\x1b[31mRED\x1b]0;pwned\x07"
ESC_REPO = "repo\x1b[2J"
RAW = re.compile(rb"\x1b|\x07|\xc2[\x80-\x9f]")  # ESC, BEL, C1 controls in UTF-8


@pytest.fixture
def hostile_names(tmp_path: Path) -> Path:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / ESC_DIR
    repo = Repo(ws / ESC_REPO)
    repo.commit("Fix \x1b[41mparser\x1b[0m bug\n\nbody \u009b31m with C1 CSI",
                {"src/evil\x1b[1mname.py": "x\n", "docs/guide.md": "# Guide\n\nparser notes\n"})
    graph = ws / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text(
        'nodes:\n  - ref_id: "parser\\e[5m"\n    kind: service\n'
        '    summary: "Parser \\e[2J service"\n', encoding="utf-8")
    return ws


COMMANDS = [
    ("index", "{ws}"),
    ("index", "{ws}", "--json"),
    ("status", "--project", "{ws}"),
    ("status", "--project", "{ws}", "--json"),
    ("history", "parser", "--project", "{ws}"),
    ("history", "parser", "--project", "{ws}", "--explain", "--after", "20240101"),
    ("history", "parser", "--project", "{ws}", "--json"),
    ("search", "parser", "--project", "{ws}"),
    ("search", "parser", "--project", "{ws}", "--json"),
    ("graph", "reindex", "--project", "{ws}"),
    ("rebuild-index", "{ws}", "--no-embed"),
    ("history", "parser", "--project", "{ws}/no\x1b[such"),
    ("history", "parser", "--project", "{ws}", "-g", "src/[\x1b"),
    ("history", "parser", "--project", "{ws}", "--mode", "x\x1b[3m"),
    ("history", "parser", "--project", "{ws}", "--after", "\x1b[1m"),
    ("history", "parser", "--project", "{ws}", "--bogus\x1b[1m"),
    ("repo-docs", "register", "--repo", "o/r", "--repository-path", "{ws}/" + ESC_REPO),
    ("repo-docs", "sources"),
    ("repo-docs", "policy", "--repo", "o/r"),
    ("repo-docs", "plan", "--repo", "o/r"),
    ("repo-docs", "status", "--repo", "o/r"),
    ("repo-docs", "search", "parser", "--repo", "o/r", "--mode", "fulltext"),
    ("repo-docs", "search", "parser", "--repo", "o/r", "--mode", "fulltext", "--json"),
]


RAW_TEXT = re.compile("[\x1b\x07\x80-\x9f]")


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_every_command_escapes_repository_and_filesystem_text(hostile_names: Path,
                                                              cli: CLI) -> None:
    seen_escaped = False
    for argv in COMMANDS:
        code, out, err = cli(*(a.replace("{ws}", str(hostile_names)) for a in argv))
        assert not RAW_TEXT.search(out + err), (argv, out + err)
        assert "Traceback" not in out + err and "internal error" not in err, (argv, err)
        seen_escaped |= "\\x1b" in out + err
        if "--json" in argv and code == 0:
            json.loads(out)  # still valid JSON, values intact
    assert seen_escaped


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_log_lines_and_errors_of_a_real_process_are_escaped(hostile_names: Path) -> None:
    env = {**os.environ, "GITQUARRY_LOG": "info"}  # the library's log lines too
    for argv in (("index", str(hostile_names)),
                 ("history", "parser", "--project", f"{hostile_names}/no\x1b[such"),
                 ("history", "parser", "--project", str(hostile_names), "--bogus\x1b[1m")):
        proc = run_gitquarry(*argv, env=env)
        both = proc.stdout + proc.stderr
        assert not RAW.search(both), (argv, both[:2000])
        assert b"Traceback" not in both


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_json_keeps_the_values_exactly(hostile_names: Path) -> None:
    proc = run_gitquarry("index", str(hostile_names), "-q")
    assert proc.returncode == 0, proc.stderr
    proc = run_gitquarry("history", "parser", "--project", str(hostile_names), "--json")
    result = json.loads(proc.stdout)["results"][0]
    assert result["title"] == "Fix \x1b[41mparser\x1b[0m bug"
    assert "\u009b31m" in result["message"]
    assert result["files_changed"][1] == "src/evil\x1b[1mname.py"


# -- §9: help, wording, plurals ----------------------------------------------------------------

def _command_paths() -> list[tuple[str, ...]]:
    """Every command and group of the CLI, walked from the root (so new ones are covered)."""
    from typer.main import get_command

    from gitquarry.cli.app import app

    paths: list[tuple[str, ...]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        paths.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, (*path, name))

    walk(get_command(app), ())
    return paths


@pytest.mark.parametrize("argv", _command_paths(), ids=lambda p: " ".join(p) or "root")
def test_help_shows_flags_and_usage_plainly(cli: CLI, argv: tuple[str, ...]) -> None:
    code, out, err = cli(*argv, "--help")
    assert code == 0, err
    assert "<bool>" not in out
    usage = next(line for line in out.splitlines() if "Usage:" in line)
    assert not re.search(r"\{[A-Za-z_]+\}|\[path\]", usage), usage


def test_usage_lines(cli: CLI) -> None:
    _, out, _ = cli("history", "--help")
    assert "Usage: gitquarry history [OPTIONS] QUERY" in out
    assert "--after" in out and "TIME" in out and "--json" in out
    _, out, _ = cli("index", "--help")
    assert "Usage: gitquarry index [OPTIONS] [PATH]" in out


def test_singular_counts(tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    Repo(ws / "r").commit("Only commit", {"docs/one.md": "# One\n\nalpha\n"})
    graph = ws / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text(
        "nodes:\n  - ref_id: one\n    kind: service\n    summary: One alpha service\n"
        "    docs: [r/docs/one.md]\n", encoding="utf-8")
    code, out, err = cli("index", str(ws))
    assert code == 0, err
    assert "Indexed 1 new commit, pruned 0, in 1 repository" in out
    assert "Graph: 1 node, 0 edges, 1 doc (0 unlinked), 1 chunk" in out
    code, out, err = cli("graph", "reindex", "--project", str(ws))
    assert "1 node, 0 edges, 1 doc (0 unlinked), 1 chunk" in out
    code, out, err = cli("status", "--project", str(ws))
    assert "Graph:     1 node, 0 edges, 1 doc, 1 chunk" in out
    assert "1 commit, " in out
    code, out, err = cli("history", "only", "--project", str(ws), "--mode", "lexical")
    assert "1 result of 1 commit · mode lexical" in err


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_graph_snippet_is_bold_on_a_terminal_and_tagged_in_json(tmp_path: Path) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    graph = ws / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text(
        "nodes:\n  - ref_id: z\n    kind: service\n    summary: The zeppelin hangar\n",
        encoding="utf-8")
    terminal = run_gitquarry("search", "zeppelin", "--project", str(ws),
                             env={**os.environ, "FORCE_COLOR": "1", "TERM": "xterm"})
    assert terminal.returncode == 0, terminal.stderr
    assert b"\x1b[1mzeppelin" in terminal.stdout and b"<b>" not in terminal.stdout
    piped = run_gitquarry("search", "zeppelin", "--project", str(ws))
    assert b"zeppelin" in piped.stdout and b"<b>" not in piped.stdout
    assert b"\x1b" not in piped.stdout
    as_json = run_gitquarry("search", "zeppelin", "--project", str(ws), "--json")
    assert "<b>zeppelin</b>" in json.loads(as_json.stdout)[0]["snippet"]


def test_no_index_message_names_the_walk(tmp_path: Path, cli: CLI) -> None:
    code, _, err = cli("history", "x", "--project", str(tmp_path))
    assert code == 1
    assert f"no gitquarry index in {tmp_path} or its parent directories" in err
