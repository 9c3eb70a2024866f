"""Leftovers of the s3 newcomer pass (``/work/notes/s3-newcomer.md``, "Not done"), each pinned
by a test on real repositories and the real CLI / web page.

- ``blame`` on a file whose Git object is missing said "no indexed repository has this file
  at HEAD" (rc 3, not found): the file is there, its object is not. Now the typed
  ``git_object_unavailable`` error (rc 1) naming the file and the missing object.
- The web page ignored ``top_n`` / ``limit`` (the CLI's and MCP's names) and used its own
  default counts (history 10 where the CLI uses ``[search] top_n``; graph 20 where the CLI
  and MCP use 10).
- Help-text nits: ``[search]`` eaten by Rich's markup, "seed 000", lower-case metavars,
  statuses not listed, options without help; ``--detail``/``--max-tokens`` silently ignored
  without ``--json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testkit import GitRepo
from testkit.cli import CLI


def _drop_loose_object(repo: GitRepo, oid: str) -> None:
    """Delete one loose object from ``repo``'s object store (a damaged or partial clone)."""
    (repo.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()


def test_blame_of_a_file_whose_object_is_missing_names_the_object(tmp_path: Path,
                                                                   cli: CLI) -> None:
    repo = GitRepo(tmp_path / "ws" / "r")
    repo.commit({"a.txt": "alpha\n", "esc.txt": "first\n"}, "first")
    repo.commit({"esc.txt": "second\n"}, "second")
    blob = repo.git("rev-parse", "HEAD:esc.txt").strip()
    workspace = str(tmp_path / "ws")
    code, _out, err = cli("index", "--no-embed", workspace)
    assert code == 0, err
    _drop_loose_object(repo, blob)

    code, out, err = cli("blame", "esc.txt", "--project", workspace)
    assert code == 1, (code, out, err)
    assert blob in err and "esc.txt" in err and "missing" in err, err
    assert "not at HEAD" not in err and "no indexed repository has this file" not in err

    code, out, err = cli("blame", "esc.txt", "--project", workspace, "--json")
    assert code == 1
    payload = json.loads(out)
    assert payload["error"]["code"] == "git_object_unavailable", payload

    # a file that is really not there is still "not found" (rc 3)
    code, _out, err = cli("blame", "nope.txt", "--project", workspace)
    assert code == 3 and "no indexed repository has this file at HEAD" in err, err
    # and a readable file still blames
    code, out, err = cli("blame", "a.txt", "--project", workspace)
    assert code == 0 and "a.txt at " in out and "first" in out, err


# -- the web page's result count ---------------------------------------------------------------
# Before: the history page read only its form field ``n`` (default 10): ``top_n=100000``, the
# name the CLI and the MCP tool use, was ignored without a word and the page answered with its
# own count; and an empty ``n`` meant 10 where ``gitquarry history`` uses ``[search] top_n``.


def test_the_web_page_reads_top_n_as_the_other_surfaces_do() -> None:
    from gitquarry.cli.history_answer import cli_history_request
    from gitquarry.errors import InvalidArgumentError
    from gitquarry.web.app import history_count
    from gitquarry.web.backend import web_history_request

    assert history_count({"top_n": "7"}) == 7
    assert history_count({"n": "7"}) == 7
    assert history_count({"n": "7", "top_n": "7"}) == 7
    assert history_count({}) is None and history_count({"n": "", "top_n": ""}) is None
    for bad in ({"top_n": "100000"}, {"top_n": "0"}, {"n": "101"}, {"top_n": "x"},
                {"n": "5", "top_n": "6"}):
        with pytest.raises(InvalidArgumentError):
            history_count(bad)
    # no count given: the configured default, exactly as the CLI's request
    assert web_history_request("parser", top_n=history_count({})) == cli_history_request(
        "parser")
    assert web_history_request("parser", top_n=history_count({"top_n": "7"})) == \
        cli_history_request("parser", top_n=7)


def test_the_web_graph_page_reads_limit_and_defaults_as_the_cli() -> None:
    """The graph page's default count was 20 where ``gitquarry search`` and the MCP tool
    answer 10; ``limit`` (their name) was ignored."""
    from gitquarry.cli.graph import cli_graph_request
    from gitquarry.errors import InvalidArgumentError
    from gitquarry.web.app import graph_count
    from gitquarry.web.backend import web_graph_request

    assert graph_count({"limit": "7"}) == 7 and graph_count({"n": "7"}) == 7
    assert graph_count({}) is None
    for bad in ({"limit": "101"}, {"n": "0"}, {"n": "3", "limit": "4"}):
        with pytest.raises(InvalidArgumentError):
            graph_count(bad)
    assert web_graph_request("auth", limit=graph_count({})) == cli_graph_request("auth")
    assert web_graph_request("auth", limit=graph_count({"limit": "7"})) == \
        cli_graph_request("auth", limit=7)


# -- help texts (s3-newcomer A3) ------------------------------------------------------------


def _help(cli: CLI, *argv: str) -> str:
    code, out, err = cli(*argv, "--help")
    assert code == 0, err
    return " ".join(out.split())  # the terminal's wrapping and the table's borders aside


def test_help_texts_name_what_they_mean(cli: CLI) -> None:
    history = _help(cli, "history")
    assert "[search] mmr_lambda" in history and "MMR;  " not in history  # Rich ate "[search]"
    assert "default 5, set by [search] top_n" in history
    assert "seed 000" not in _help(cli, "rebuild-index")
    assert "daemon watch [OPTIONS] PATH" in _help(cli, "daemon", "watch")
    assert "daemon unwatch [OPTIONS] WORKSPACE" in _help(cli, "daemon", "unwatch")
    jobs = _help(cli, "jobs", "list")
    for status in ("queued", "running", "interrupted", "succeeded", "superseded", "failed",
                   "cancelled"):
        assert status in jobs
    rebind = _help(cli, "repo-docs", "rebind")
    assert "The registration to move" in rebind and "new local directory" in rebind
    assert "--mode MODE" in " ".join(_help(cli, "repo-docs", "search").replace("│", " ").split())


def test_json_only_options_on_text_output_say_they_are_ignored(tmp_path: Path,
                                                               cli: CLI) -> None:
    repo = GitRepo(tmp_path / "ws" / "r")
    repo.commit({"a.txt": "alpha\n"}, "fix the parser cache")
    workspace = str(tmp_path / "ws")
    code, _out, err = cli("index", "--no-embed", workspace)
    assert code == 0, err
    base = ["history", "parser", "--mode", "lexical", "--project", workspace]
    code, out, err = cli(*base, "--detail", "compact")
    assert code == 0 and "fix the parser cache" in out
    assert "--detail shapes only the --json answer" in err, err
    code, out, err = cli(*base, "--detail", "ids", "--max-tokens", "600")
    assert code == 0 and "--detail and --max-tokens shape only the --json answer" in err, err
    code, out, err = cli(*base)
    assert code == 0 and "--json answer" not in err
    code, out, err = cli(*base, "--detail", "compact", "--json")
    assert code == 0 and "--json answer" not in err
