"""Findings of the s3 newcomer pass (a fresh clone, the README followed literally, then bad
input), each pinned by a test on real repositories and the real CLI.

- ``history --pickaxe`` on the terminal printed "No commits found" and nothing else when
  commits could not be checked (their Git objects are missing): the JSON answer's warnings
  (``pickaxe_git_failed``, ``pickaxe_incomplete``) were only in ``--json``.
- A committed docs policy (``.gitquarry.yaml``) holding a control character (ESC) made every
  ``repo-docs`` command fail with ``internal error (ReaderError …)``: PyYAML's reader checks
  the text when it is created, before the parse loop that turned YAML errors into
  ``YamlInputError``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitquarry.errors import YamlInputError
from gitquarry.parsing.strict_yaml import load_yaml
from testkit import GitRepo, isolate_user
from testkit.cli import CLI


def _drop_loose_object(repo: GitRepo, oid: str) -> None:
    """Delete one loose object from ``repo``'s object store (a damaged or partial clone)."""
    (repo.path / ".git" / "objects" / oid[:2] / oid[2:]).unlink()


def test_pickaxe_that_could_not_check_commits_says_so_on_the_terminal(
    tmp_path: Path, cli: CLI
) -> None:
    repo = GitRepo(tmp_path / "ws" / "r")
    repo.commit({"a.txt": "alpha\n"}, "first")
    repo.commit({"b.txt": "needle in here\n"}, "second")
    blob = repo.git("rev-parse", "HEAD:b.txt").strip()
    _drop_loose_object(repo, blob)
    workspace = str(tmp_path / "ws")
    code, _out, err = cli("index", "--no-embed", workspace)
    assert code == 0, err
    assert "without their diff" in err

    code, out, err = cli("history", "needle", "--pickaxe", "needle", "--mode", "lexical",
                         "--project", workspace)
    assert code == 0, err
    assert "No commits found" in out
    assert "could not be checked with git log -S; they are left out" in err
    assert "git log failed" in err
    assert "--pickaxe answered from" in err

    code, out, err = cli("history", "needle", "--pickaxe", "needle", "--mode", "lexical",
                         "--json", "--project", workspace)
    assert code == 0, err
    data = json.loads(out)
    codes = [w["code"] for w in data["warning_details"]]
    assert "pickaxe_incomplete" in codes and "pickaxe_git_failed" in codes
    assert data["results"] == []


@pytest.mark.parametrize("text", [
    "a: \x1b[31mred\n",
    "k: 1\nlist:\n  - \x07bell\n",
    "x: \x00\n",
])
def test_control_characters_in_yaml_are_a_typed_error(text: str) -> None:
    with pytest.raises(YamlInputError, match="not valid YAML: character #x00") as info:
        load_yaml(text, "policy.yaml")
    assert info.value.line == text.count("\n", 0, next(
        i for i, ch in enumerate(text) if ch in "\x1b\x07\x00")) + 1


def test_a_policy_with_an_escape_character_fails_closed_not_internally(
    tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "home").mkdir()
    isolate_user(tmp_path / "home", monkeypatch, state=True)
    repo = GitRepo(tmp_path / "r")
    repo.commit({"README.md": "# hi\n", "docs/a.md": "# alpha\n",
                 ".gitquarry.yaml": 'repository_docs:\n  schema: 1\n'
                                    '  include: ["\x1b[31mdocs/**"]\n'}, "policy")
    code, _out, err = cli("repo-docs", "register", "--repo", "evil/plant",
                          "--repository-path", str(repo.path))
    assert code == 0, err
    for command in ("policy", "plan"):
        code, out, err = cli("repo-docs", command, "--repo", "evil/plant")
        assert code == 1, (command, out, err)
        assert "internal error" not in err
        assert ("invalid repository docs policy in .gitquarry.yaml:3: not valid YAML: "
                "character #x001b is not allowed") in err
        assert "\x1b" not in err  # the character itself never reaches the terminal
    code, out, err = cli("repo-docs", "search", "alpha", "--repo", "evil/plant",
                         "--mode", "fulltext", "--json")
    assert code == 1 and "internal error" not in err
    assert json.loads(out)["error"]["code"] == "repository_docs_policy_invalid"


def test_a_qualifier_shaped_word_never_reads_as_a_silent_empty_answer(
    tmp_path: Path, cli: CLI
) -> None:
    """``title:progress`` is searched as the phrase "title progress" (FTS5 splits on ``:``):
    an empty answer says so (``qualifier_as_phrase``) on the terminal and in ``--json``;
    a query that finds commits carries no such warning."""
    repo = GitRepo(tmp_path / "ws" / "r")
    repo.commit({"a.txt": "alpha\n"}, "Show progress while indexing")
    repo.commit({"b.txt": "beta\n"}, "Fix the title of the report")
    workspace = str(tmp_path / "ws")
    code, _out, err = cli("index", "--no-embed", workspace)
    assert code == 0, err

    code, out, err = cli("history", "title:progress", "--mode", "lexical", "--json",
                         "--project", workspace)
    assert code == 0, err
    data = json.loads(out)
    assert data["results"] == []
    (warning,) = [w for w in data["warning_details"] if w["code"] == "qualifier_as_phrase"]
    assert "'title:progress'" in warning["message"] and "--author" in warning["message"]

    code, out, err = cli("history", "title:progress", "--mode", "lexical",
                         "--project", workspace)
    assert code == 0, err
    assert "No commits found" in out
    assert "match only as a phrase" in err

    code, out, err = cli("history", "title: progress", "--mode", "lexical", "--json",
                         "--project", workspace)
    assert code == 0, err
    data = json.loads(out)
    assert len(data["results"]) >= 1
    assert all(w["code"] != "qualifier_as_phrase" for w in data["warning_details"])
