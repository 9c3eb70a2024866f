"""Bad input found by the s7 breaker pass (2026-12-02): each test reproduces one defect on a
real repository and a real index, through the CLI in-process and a real MCP client session.

- a bad ``--since``/``--until`` (and MCP ``after``/``before``/``*_timestamp``) named the
  option that was wrong nowhere: the error now names it as the caller spelled it;
- ``--path`` with a ``..`` segment (never a repository path) is a typed usage error showing
  the path escaped; a ``--path`` no indexed commit changes says so in the answer's warnings;
- a time bound outside every indexed commit's time (``--until -1``) said nothing: a warning,
  on stderr and in ``--json``'s ``warnings`` (the bounds are valid, as ``git log --until``
  takes them; an upper bound before the lower one stays a usage error);
- ``--files-glob ''`` searched every file: an empty glob is a usage error;
- a query of only operators (``*``, ``( )``) said why it found nothing in lexical mode only,
  not when hybrid degraded to keywords;
- ``show --path`` / MCP ``get_commit`` paths the commit does not change: an empty diff and no
  word; MCP ``blame_search`` ignored an ``end_line`` without ``start_line``;
- ``repo-docs register --repository-path`` did not name the option; malformed job ids and
  statuses were "no daemon is running"; ``repo-docs index`` of an unknown repository left a
  daemon running.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import BASE_TIME, CLI, fast_import, user_config, with_mcp_server

FIRST = BASE_TIME + 60  # the first commit's time (fast_import: a minute apart)


@pytest.fixture
def indexed(tmp_path: Path, cli: CLI) -> Path:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    fast_import(ws / "repo", [
        (f"Parser change {i}", {f"src/mod{i % 3}.py": f"parser = {i}\n"}) for i in range(6)
    ])
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    return ws


@pytest.mark.parametrize(("option", "value"), [
    ("--since", "bad"), ("--after", "bad"), ("--until", "nope"), ("--before", "nope"),
    ("--since", "2.weeks.agox"), ("--until", "20241399"),
])
def test_a_bad_time_names_the_option_as_typed(indexed: Path, cli: CLI, option: str,
                                              value: str) -> None:
    code, out, err = cli("history", "parser", option, value, "--project", str(indexed))
    assert code == 2, err
    assert err.startswith(f"Error: {option}: invalid time {value!r}: use an ISO-8601"), err
    assert "2.weeks.ago" in err  # the accepted forms
    code, out, err = cli("history", "parser", f"{option}={value}", "--json",
                         "--project", str(indexed))
    assert code == 2
    error = json.loads(out)["error"]
    assert error["code"] == "invalid_time" and error["exit_code"] == 2
    assert error["message"].startswith(f"{option}: invalid time")


def test_reversed_bounds_name_both_options_as_typed(indexed: Path, cli: CLI) -> None:
    code, _, err = cli("history", "parser", "--since", "2024-06-01", "--until", "2024-01-01",
                       "--project", str(indexed))
    assert code == 2 and err.startswith("Error: --since/--until: the lower bound"), err


def test_a_path_with_dotdot_is_a_usage_error_shown_escaped(indexed: Path, cli: CLI) -> None:
    code, out, err = cli("history", "parser", "--path", "../\x1b[31mevil", "--json",
                         "--project", str(indexed))
    assert code == 2, err
    assert "\x1b" not in err and "\x1b" not in out
    assert err.startswith("Error: --path: '../\\x1b[31mevil' has a '..' segment"), err
    assert json.loads(out)["error"]["code"] == "invalid_argument"
    # the library's own name for the blame argument stays blame's (PATH), not --path
    for root in ([], ["--color", "never"]):
        code, _, err = cli(*root, "blame", "", "--project", str(indexed))
        assert code == 2 and err.startswith("Error: PATH: give a file path"), err
    code, _, err = cli("history", "parser", "--path", "x" * 1001, "--project", str(indexed))
    assert code == 2 and err.startswith("Error: --path: longer than 1000"), err


def test_a_path_no_commit_changes_says_so(indexed: Path, cli: CLI) -> None:
    for given, shown in (("/nonexistent/dir", "nonexistent/dir"), ("repo/src", "repo/src")):
        code, out, err = cli("history", "parser", "--path", given, "--json",
                             "--project", str(indexed))
        assert code == 0, err
        data = json.loads(out)
        assert data["results"] == []
        assert any(f"no indexed commit changes a path under {shown!r}" in w
                   for w in data["warnings"]), data["warnings"]
    code, out, err = cli("history", "parser", "--path", "src", "--json",
                         "--project", str(indexed))
    assert json.loads(out)["results"] and not any(
        "no indexed commit changes" in w for w in json.loads(out)["warnings"])
    code, out, err = cli("history", "parser", "--path", "nowhere", "--project", str(indexed))
    assert code == 0 and "No commits found" in out
    assert "Warning: no indexed commit changes a path under 'nowhere'" in err


@pytest.mark.parametrize(("argv", "code_word"), [
    (["--until", "-1"], "before_oldest_commit"),
    (["--until", "2023-12-31"], "before_oldest_commit"),
    (["--since", "2099-01-01"], "after_newest_commit"),
])
def test_a_bound_outside_every_commit_time_says_why_nothing_matched(
        indexed: Path, cli: CLI, argv: list[str], code_word: str) -> None:
    code, out, err = cli("history", "parser", *argv, "--project", str(indexed))
    assert code == 0 and "No commits found" in out
    assert "so no commit can match" in err, err
    code, out, _ = cli("history", "parser", *argv, "--json", "--project", str(indexed))
    data = json.loads(out)
    assert data["results"] == []
    assert any("so no commit can match" in w for w in data["warnings"]), data["warnings"]
    # a bound inside the history: results, and no such warning
    code, out, _ = cli("history", "parser", "--until", str(FIRST), "--json",
                       "--project", str(indexed))
    data = json.loads(out)
    assert len(data["results"]) == 1
    assert not any("no commit can match" in w for w in data["warnings"])


@pytest.mark.parametrize("glob", ["", " ", "/", "//"])
def test_an_empty_files_glob_is_a_usage_error(indexed: Path, cli: CLI, glob: str) -> None:
    for extra in ([], ["--json"]):
        code, out, err = cli("history", "parser", "--files-glob", glob, *extra,
                             "--project", str(indexed))
        assert code == 2, (glob, out, err)
        assert f"invalid glob pattern {glob!r}: the pattern is empty" in err


def test_mcp_names_the_bad_argument_and_refuses_an_empty_glob(
        indexed: Path, tmp_path: Path) -> None:
    calls: dict[str, dict[str, Any]] = {
        "after": {"after": "bad"},
        "before": {"before": "soon-ish"},
        "after_timestamp": {"after_timestamp": 2**70},
        "reversed": {"after": "2024-06-01", "before": "2024-01-01"},
        "reversed_ts": {"after_timestamp": 2_000_000_000, "before_timestamp": 1_000_000_000},
        "glob": {"files_glob": ""},
        "dotdot": {"path": "../x"},
        "until": {"before_timestamp": -1},
    }

    blame_calls: dict[str, dict[str, Any]] = {
        "end_only": {"path": "src/mod0.py", "end_line": 1},
        "backwards": {"path": "src/mod0.py", "start_line": 2, "end_line": 1},
        "one_line": {"path": "src/mod0.py", "start_line": 1},
    }

    async def body(session: Any) -> dict[str, Any]:
        out = {name: await session.call_tool("search_git_history",
                                             {"query": "parser", **args})
               for name, args in calls.items()}
        for name, args in blame_calls.items():
            out[name] = await session.call_tool("blame_search", args)
        return out

    results, _ = with_mcp_server(indexed, body, tmp_path)
    text = {name: r.content[0].text for name, r in results.items()}
    for name in ("after", "before", "after_timestamp", "reversed", "reversed_ts", "glob",
                 "dotdot"):
        assert results[name].is_error, (name, text[name])
    assert "invalid_time: after: invalid time 'bad'" in text["after"]
    assert "invalid_time: before: invalid time 'soon-ish'" in text["before"]
    assert "invalid_time: after_timestamp: invalid time" in text["after_timestamp"]
    assert "invalid_argument: after/before: the lower bound" in text["reversed"]
    assert ("invalid_argument: after_timestamp/before_timestamp: the lower bound"
            in text["reversed_ts"])
    assert "invalid_glob: invalid glob pattern '': the pattern is empty" in text["glob"]
    assert "invalid_argument: path: '../x' has a '..' segment" in text["dotdot"]
    assert not results["until"].is_error
    data = json.loads(text["until"])
    assert data["results"] == [] and any("so no commit can match" in w
                                         for w in data["warnings"])
    # blame_search: an end_line alone was ignored (the whole file blamed, no word said);
    # a backwards range was reported as a bad "path"
    assert results["end_only"].is_error and (
        "invalid_argument: end_line: needs start_line" in text["end_only"]), text["end_only"]
    assert results["backwards"].is_error and (
        "invalid_argument: end_line: must be start_line (2) or later, got 1"
        in text["backwards"]), text["backwards"]
    assert not results["one_line"].is_error, text["one_line"]
    assert json.loads(text["one_line"])["range"]


@pytest.mark.parametrize("query", ["*", "* ( ) :", '""', "'", "^-+"])
def test_a_query_of_only_operators_says_so_when_keywords_rank(indexed: Path, cli: CLI,
                                                               query: str) -> None:
    # hybrid asked for, no vectors (provider none): keywords rank, as in lexical mode, and
    # the answer says the query holds no word instead of a silent "No commits found"
    for mode in ([], ["--mode", "lexical"], ["--mode", "semantic"]):
        code, out, err = cli("history", query, *mode, "--json", "--project", str(indexed))
        assert code == 0, err
        data = json.loads(out)
        assert data["results"] == [] and data["effective_mode"] == "lexical"
        codes = [w["code"] for w in data["warning_details"]]
        assert codes.count("no_searchable_terms") == 1, (mode, codes)
    code, out, err = cli("history", "--project", str(indexed), "--", query)
    assert code == 0 and "holds no searchable word" in err, err


def test_show_with_a_path_the_commit_does_not_change_says_so(indexed: Path, cli: CLI) -> None:
    code, out, err = cli("history", "parser", "--path", "src/mod0.py", "--json", "-n", "1",
                         "--project", str(indexed))
    sha = json.loads(out)["results"][0]["hash"]
    code, out, err = cli("show", sha[:10], "--path", "src/nope.py", "--path", "\x1b[2Jx",
                         "--json", "--project", str(indexed))
    assert code == 0, err
    data = json.loads(out)
    assert data["diff"] == ""
    assert data["warnings"] == ["the commit changes no file 'src/nope.py', '\\x1b[2Jx' "
                                "(paths are repository-relative, as listed under files)"]
    code, out, err = cli("show", sha[:10], "--path", "src/nope.py", "--no-pager",
                         "--project", str(indexed))
    assert code == 0 and "Warning: the commit changes no file 'src/nope.py'" in err
    # a path it changes, or a directory holding one: the diff, no warning
    for given in ("src/mod0.py", "src", "src/"):
        code, out, err = cli("show", sha[:10], "--path", given, "--json",
                             "--project", str(indexed))
        data = json.loads(out)
        assert "warnings" not in data and "src/mod0.py" in data["diff"], given


def test_a_bad_repository_path_names_the_option_and_shows_the_path_escaped(
        tmp_path: Path, cli: CLI) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for given, why in ((tmp_path / "missing\x1b[2J", "does not exist"),
                       (plain, "is not a Git repository")):
        code, out, err = cli("repo-docs", "register", "--repo", "o/n",
                             "--repository-path", str(given), "--json")
        assert code == 2, err
        assert "\x1b" not in err and "\x1b" not in out
        shown = str(given).replace("\x1b", "\\x1b")
        assert err.startswith(f"Error: --repository-path: {shown} {why}"), err
        error = json.loads(out)["error"]
        assert error["code"] == "repository_docs_registration_invalid"
        assert error["message"].startswith("--repository-path: ")


@pytest.mark.parametrize("argv", [["jobs", "show", "../x"], ["jobs", "attach", "nonsense"],
                                  ["jobs", "cancel", "job-1x"]])
def test_a_malformed_job_id_is_a_usage_error_before_the_daemon_is_looked_for(
        cli: CLI, argv: list[str]) -> None:
    # no daemon runs here: the id's form is checked first (it was "no daemon is running",
    # exit 1, for an id no daemon could know)
    code, out, err = cli(*argv, "--json")
    assert code == 2, err
    assert err.startswith(f"Error: JOB_ID: {argv[-1]!r} is not a job id like job-000001")
    assert json.loads(out)["error"]["code"] == "invalid_argument"
    code, _, err = cli("jobs", "list", "--status", "bogus")
    assert code == 2 and err.startswith("Error: --status: must be one of queued"), err
    code, _, err = cli("jobs", "show", "job-000001")  # well-formed: the daemon is asked
    assert code == 1 and "no gitquarry daemon is running" in err


def test_mcp_job_tools_check_the_id_and_status_naming_their_arguments(
        indexed: Path, tmp_path: Path) -> None:
    async def body(session: Any) -> dict[str, Any]:
        return {
            "status": await session.call_tool("service_job_status", {"job_id": "../x"}),
            "attach": await session.call_tool("service_job_attach", {"job_id": "x"}),
            "cancel": await session.call_tool("service_job_cancel", {"job_id": "job-"}),
            "list": await session.call_tool("service_jobs_list", {"status": "bogus"}),
            "known": await session.call_tool("service_job_status", {"job_id": "job-000001"}),
        }

    results, _ = with_mcp_server(indexed, body, tmp_path)
    text = {name: r.content[0].text for name, r in results.items()}
    assert all(r.is_error for r in results.values()), text
    assert "invalid_argument: job_id: '../x' is not a job id like job-000001" in text["status"]
    assert "invalid_argument: job_id: 'x' is not a job id" in text["attach"]
    assert "invalid_argument: job_id: 'job-' is not a job id" in text["cancel"]
    assert "invalid_argument: status: must be one of queued" in text["list"]
    assert "daemon_not_running" in text["known"]  # well-formed: the daemon is asked


def test_indexing_docs_of_an_unknown_repository_starts_no_daemon(
        indexed: Path, tmp_path: Path, cli: CLI) -> None:
    from gitquarry.service import paths

    code, out, err = cli("repo-docs", "index", "--repo", "o/nope", "--json")
    assert code == 2, err
    assert json.loads(out)["error"]["code"] == "repository_docs_registration_invalid"
    assert paths.running_daemon() is None, "a usage error left a daemon running"

    async def body(session: Any) -> Any:
        return await session.call_tool("repository_docs_index", {"repo_id": "o/nope"})

    result, _ = with_mcp_server(indexed, body, tmp_path)
    assert result.is_error
    assert "repository_docs_registration_invalid" in result.content[0].text
    assert paths.running_daemon() is None, "the MCP tool left a daemon running"
