"""Issue 9 / 12: ``repository_docs_plan`` with ``list_files`` fits ``max_tokens`` as
``repository_docs_search`` does (MCP), and the repo-docs CLI's ``--json --max-tokens`` fits
plan and search; counts stay whole, ``truncated`` says what each list left out."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitquarry.config import Config
from gitquarry.repo_docs.registry import Registry
from gitquarry.token_budget import json_tokens

from .conftest import Repo
from .test_cli import run
from .test_mcp import session


@pytest.fixture
def big_repo(make_repo) -> Repo:  # type: ignore[no-untyped-def]
    """200 docs pages (long paths) and 60 symlinks (excluded), in one commit."""
    files: dict[str, str | bytes | None] = {
        f"docs/section-{i // 20:02d}/operations-runbook-page-{i:03d}.md":
            f"# Page {i}\n\nThe gunicorn workers restart on deploy {i}.\n"
        for i in range(200)
    }
    repo = make_repo(files)
    for i in range(60):
        os.symlink("../README.md", repo.path / "docs" / f"link-to-readme-{i:02d}.md")
    repo.commit({}, "links")
    return repo


def test_plan_over_mcp_fits_max_tokens_with_both_lists_cut(fake_config: Config,
                                                          big_repo: Repo) -> None:
    Registry().register("acme/big", big_repo.path)
    results = session(fake_config, [
        ("repository_docs_plan", {"repo_id": "acme/big", "list_files": True,
                                  "max_tokens": 1_000_000}),
        ("repository_docs_plan", {"repo_id": "acme/big", "list_files": True,
                                  "max_tokens": 2000}),
        ("repository_docs_plan", {"repo_id": "acme/big", "list_files": True}),
        ("repository_docs_plan", {"repo_id": "acme/big"}),
        ("repository_docs_plan", {"repo_id": "acme/big", "max_tokens": 499}),
    ])
    whole, cut, default, counts = (json.loads(r.content[0].text) for r in results[1:5])
    assert whole["truncated"] == {"files_dropped": 0, "exclusions_dropped": 0}
    assert len(whole["files"]) == whole["eligible_files"] == 200
    assert len(whole["exclusions"]) == whole["exclusions_by_reason"]["symlink"] == 60
    assert "warning_details" not in whole
    for data, budget in ((cut, 2000), (default, 8000)):
        assert json_tokens(data) <= budget
        dropped = data["truncated"]
        assert dropped["files_dropped"] > 0
        # both lists keep their first entries (the room is shared), counts stay whole
        assert 0 < len(data["files"]) == 200 - dropped["files_dropped"]
        assert 0 < len(data["exclusions"]) == 60 - dropped["exclusions_dropped"]
        assert data["files"] == whole["files"][:len(data["files"])]
        assert data["exclusions"] == whole["exclusions"][:len(data["exclusions"])]
        assert (data["eligible_files"], data["exclusions_by_reason"]) == (
            200, whole["exclusions_by_reason"])
        assert [w["code"] for w in data["warning_details"]] == ["token_budget"]
    assert len(cut["files"]) < len(default["files"])
    # at 2,000 tokens both lists are cut; at 8,000 the short exclusion list fits whole and
    # the files take the rest of the room
    assert cut["truncated"]["exclusions_dropped"] > 0
    assert default["truncated"]["exclusions_dropped"] == 0
    # without list_files the plan is small: nothing to cut
    assert "files" not in counts and counts["truncated"] == {"files_dropped": 0,
                                                              "exclusions_dropped": 0}
    assert results[5].is_error  # under the 500-token floor, refused by the schema


def test_repo_docs_cli_json_max_tokens(capsys: pytest.CaptureFixture[str], big_repo: Repo,
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITQUARRY_CONFIG", str(tmp_path / "c.toml"))
    (tmp_path / "c.toml").write_text('[embedding]\nprovider = "none"\n')
    code, _, err = run(capsys, "repo-docs", "register", "--repo", "acme/big",
                       "--repository-path", str(big_repo.path))
    assert code == 0, err
    code, out, err = run(capsys, "repo-docs", "plan", "--json")
    assert code == 0, err
    whole = json.loads(out)
    assert "truncated" not in whole and len(whole["files"]) == 200  # no budget: as before
    code, out, err = run(capsys, "repo-docs", "plan", "--json", "--max-tokens", "1500")
    assert code == 0, err
    plan = json.loads(out)
    assert json_tokens(plan) <= 1500
    assert len(plan["files"]) + plan["truncated"]["files_dropped"] == 200
    assert plan["files"] == whole["files"][:len(plan["files"])]

    code, out, err = run(capsys, "repo-docs", "search", "gunicorn workers restart", "--json",
                         "--mode", "fulltext", "--limit", "50")
    assert code == 0, err
    full = json.loads(out)
    assert len(full["hits"]) == 50 and json_tokens(full) > 2000
    code, out, err = run(capsys, "repo-docs", "search", "gunicorn workers restart", "--json",
                         "--mode", "fulltext", "--limit", "50", "--max-tokens", "2000")
    assert code == 0, err
    fitted = json.loads(out)
    assert json_tokens(fitted) <= 2000
    kept = len(fitted["hits"])
    assert 0 < kept == 50 - fitted["truncated"]["results_dropped"]
    assert [h["chunk_id"] for h in fitted["hits"]] == [h["chunk_id"] for h in full["hits"][:kept]]

    for argv in (["plan", "--json", "--max-tokens", "10"],
                 ["search", "x", "--json", "--max-tokens", "2000000"]):
        code, _, err = run(capsys, "repo-docs", *argv)
        assert code == 2 and "--max-tokens" in err, err
