"""``gitquarry repo-docs`` end to end through the console entry point (exit codes, output)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitquarry.cli.app import main

from .conftest import Repo


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_register_plan_index_search_status(capsys: pytest.CaptureFixture[str],
                                           docs_repo: Repo, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITQUARRY_CONFIG", str(tmp_path / "c.toml"))
    (tmp_path / "c.toml").write_text('[embedding]\nprovider = "none"\n')
    code, out, _ = run(capsys, "repo-docs", "register", "--repo", "acme/widget",
                       "--repository-path", str(docs_repo.path))
    assert code == 0 and "registration_id: reg-" in out and str(docs_repo.path) not in out
    code, out, _ = run(capsys, "repo-docs", "plan")
    assert code == 0 and "eligible: 3 files" in out and "not selected: 1 files" in out
    code, out, err = run(capsys, "repo-docs", "search", "gunicorn workers")
    assert code == 0
    assert out.splitlines()[0].startswith(" 1. docs/deploy.md:1-")
    assert "Deployment" in out.splitlines()[0]
    assert "no embedding provider" in err  # hybrid requested, fulltext used, said so
    code, out, _ = run(capsys, "repo-docs", "index", "--foreground", "--json")
    data = json.loads(out)
    assert code == 0 and data["state"] == "ready" and data["eligible_files"] == 3
    code, out, _ = run(capsys, "repo-docs", "status")
    assert code == 0 and "ready" in out
    code, out, _ = run(capsys, "repo-docs", "search", "zzqqxx", "--mode", "fulltext")
    assert code == 0 and "No results found." in out
    code, out, _ = run(capsys, "repo-docs", "search", "gunicorn", "--json", "--limit", "1")
    data = json.loads(out)
    assert len(data["hits"]) == 1 and data["corpus_kind"] == "repository_docs"


@pytest.mark.parametrize(
    ("argv", "code", "fragment"),
    [
        (["repo-docs", "search", "x", "--mode", "semantic"], 2, "--mode"),
        (["repo-docs", "search", "x", "--limit", "51"], 2, "--limit"),
        # issue 24 changed this contract: a revision that does not exist is "not found",
        # exit 3 (it was 2, a usage error)
        (["repo-docs", "search", "x", "--revision", "nope"], 3, "names no commit"),
        (["repo-docs", "search", "x", "--registration-id", "reg-x"], 2, "none of them"),
        (["repo-docs", "search", "x", "--repo", "other/repo"], 2, "not registered"),
        (["repo-docs", "register", "--repo", "a b", "--repository-path", "."], 2,
         "not a repository name"),
    ],
)
def test_errors_are_clean(capsys: pytest.CaptureFixture[str], docs_repo: Repo, argv: list[str],
                          code: int, fragment: str) -> None:
    assert run(capsys, "repo-docs", "register", "--repo", "acme/widget",
               "--repository-path", str(docs_repo.path))[0] == 0
    got, _out, err = run(capsys, *argv)
    assert got == code and fragment in err and "Traceback" not in err
    assert err.startswith("Error: ")


def test_invalid_policy_exit_code(capsys: pytest.CaptureFixture[str], docs_repo: Repo) -> None:
    docs_repo.commit({".gitquarry.yaml": "repository_docs:\n  schema: 1\n  preset: none\n"})
    run(capsys, "repo-docs", "register", "--repo", "a/b", "--repository-path",
        str(docs_repo.path))
    code, _out, err = run(capsys, "repo-docs", "plan")
    assert code == 1 and "invalid repository docs policy in .gitquarry.yaml" in err


def test_gitquarry_index_refreshes_registered_docs(capsys: pytest.CaptureFixture[str],
                                                   docs_repo: Repo, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    run(capsys, "repo-docs", "register", "--repo", "acme/widget", "--repository-path",
        str(docs_repo.path))
    code, out, _ = run(capsys, "index", "--no-embed", "--json", str(docs_repo.path))
    data = json.loads(out)
    assert code == 0
    (docs,) = data["repo_docs"]
    assert docs["state"] == "ready" and docs["namespace_id"] == "none"
    assert docs["eligible_files"] == 3
    code, out, _ = run(capsys, "index", "--no-embed", str(docs_repo.path))
    assert code == 0 and "Docs:" not in out  # up to date: nothing to say
