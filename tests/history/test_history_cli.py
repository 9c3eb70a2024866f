"""The history commands through ``gitquarry.cli.app.main``: output, JSON shape, exit codes."""

from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import BASE_TIME, GitRepo, Indexer, gitquarry_executable

DAY = 86_400
SEED_FIELDS = {"hash", "title", "author", "committer", "timestamp", "message", "files_changed",
               "delta_truncated", "score", "repo_path"}


def _build_project(workspace):
    """A workspace that is itself a repository, with a nested one (4 commits in all)."""
    repo = GitRepo(workspace)
    repo.commit({"src/auth/token.py": "def refresh(): ...\n"}, "Add token refresh",
                BASE_TIME)
    repo.commit({"docs/guide.md": "# Guide\n"}, "Write the guide", BASE_TIME + DAY)
    repo.commit({"src/auth/token.py": "def refresh(): return 1\n"}, "Fix token expiry",
                BASE_TIME + 2 * DAY)
    nested = GitRepo(workspace / "vendor" / "lib")
    nested.commit({"lib.c": "int x;\n"}, "Vendor library import", BASE_TIME + 3 * DAY)
    return repo


@pytest.fixture
def project(workspace):
    return _build_project(workspace)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """(repo, workspace) indexed once for the read-only command tests of this module."""
    ws = tmp_path_factory.mktemp("cli") / "ws"
    ws.mkdir()
    repo = _build_project(ws)
    Indexer(ws).run()
    return repo, ws


def test_index_then_up_to_date(cli, project, workspace):
    code, out, err = cli("index", "--no-embed", "--quiet", str(workspace))
    assert code == 0, err
    assert "Indexed 4 new commits" in out and "Total: 4 commits" in out
    code, out, _ = cli("index", "--no-embed", "--quiet", str(workspace))
    assert code == 0
    assert "up to date" in out


def test_index_json_report(cli, project, workspace):
    code, out, _ = cli("index", "--no-embed", "--json", str(workspace))
    assert code == 0
    data = json.loads(out)
    assert data["new_commits"] == 4 and data["total_commits"] == 4 and not data["up_to_date"]
    assert len(data["repositories"]) == 2
    code, out, _ = cli("index", "--no-embed", "--json", str(workspace))
    data = json.loads(out)
    assert data["up_to_date"] and data["new_commits"] == 0


def test_index_dir_is_excluded_and_status_clean(cli, project, workspace):
    code, _, err = cli("index", "--no-embed", "--quiet", str(workspace))
    assert code == 0, err
    assert (workspace / ".gitquarry" / "index.db").is_file()
    exclude = (workspace / ".git" / "info" / "exclude").read_text()
    assert "/.gitquarry/" in exclude.splitlines()
    # nested repository is untracked content of the outer one: add it to see only .gitquarry
    status = project.git("status", "--porcelain", "--ignored=no")
    assert status.splitlines() == ["?? vendor/"]
    cli("index", "--no-embed", "--quiet", str(workspace))
    assert exclude == (workspace / ".git" / "info" / "exclude").read_text()


def test_index_clean_status_for_plain_repo(cli, make_repo):
    repo = make_repo("solo")
    repo.commit({"a.txt": "a\n"}, "only")
    code, _, err = cli("index", "--no-embed", "--quiet", str(repo.path))
    assert code == 0, err
    assert repo.git("status", "--porcelain") == ""


def test_history_json_fields(cli, indexed):
    project, workspace = indexed
    code, out, err = cli("history", "token expiry", "--mode", "lexical", "--json",
                         "--project", str(workspace))
    assert code == 0, err
    data = json.loads(out)
    assert data["total_commits_indexed"] == 4
    assert data["effective_mode"] == "lexical"
    first = data["results"][0]
    assert set(first) >= SEED_FIELDS
    assert first["hash"] == project.head()
    assert first["title"] == "Fix token expiry"
    assert first["files_changed"] == ["src/auth/token.py"]
    assert first["timestamp"] == BASE_TIME + 2 * DAY
    assert first["repo_path"] == str(workspace.resolve())
    assert "bm25" not in first
    code, out, _ = cli("history", "token", "--mode", "lexical", "--json", "--explain",
                       "--project", str(workspace))
    assert "bm25" in json.loads(out)["results"][0]


def test_history_text_output_and_filters(cli, indexed):
    project, workspace = indexed
    code, out, _ = cli("history", "token", "--mode", "lexical", "--project", str(workspace),
                       "--files-glob", "src/**/*.py", "--after", "2024-01-02",
                       "--before", str(BASE_TIME + 2 * DAY))
    assert code == 0
    assert project.head()[:10] in out and "Fix token expiry" in out
    assert "Add token refresh" not in out
    code, out, _ = cli("history", "nothing-matches-this", "--mode", "lexical",
                       "--project", str(workspace))
    assert code == 0 and "No commits found (4 indexed)" in out


def test_status_json_fields(cli, indexed):
    _, workspace = indexed
    code, out, _ = cli("status", "--json", "--project", str(workspace))
    assert code == 0
    data = json.loads(out)
    assert data["workspace"] == str(workspace.resolve())
    assert data["index"] == str(workspace.resolve() / ".gitquarry" / "index.db")
    assert data["index_bytes"] > 0
    assert data["total_commits"] == 4
    assert isinstance(data["last_indexed_at"], int)
    repos = {r["path"]: r for r in data["repositories"]}
    root = repos[str(workspace.resolve())]
    assert root == {
        "path": str(workspace.resolve()),
        "common_dir": str((workspace / ".git").resolve()),
        "is_bare": False,
        "object_format": "sha1",
        "last_indexed_at": root["last_indexed_at"],
        "run_in_progress": False,
        "commits": 3,
        "refs": 1,
        "exists": True,
        "error": None,
        "error_code": None,
        "problems": [],
    }
    assert data["skipped"] == []
    assert repos[str((workspace / "vendor" / "lib").resolve())]["commits"] == 1
    code, out, _ = cli("status", "--project", str(workspace))
    assert code == 0 and "Commits:   4" in out


def test_corrupt_database_then_rebuild(cli, project, workspace):
    cli("index", "--no-embed", "--quiet", str(workspace))
    db = workspace / ".gitquarry" / "index.db"
    for suffix in ("-wal", "-shm"):
        (workspace / ".gitquarry" / f"index.db{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"this is not a sqlite database at all" * 200)
    for argv in (("history", "token", "--mode", "lexical", "--project", str(workspace)),
                 ("status", "--project", str(workspace)),
                 ("index", "--no-embed", "--quiet", str(workspace))):
        code, out, err = cli(*argv)
        assert code == 1, argv
        assert err.startswith("Error:") and "rebuild-index" in err
        assert "Traceback" not in err + out
    code, _, err = cli("rebuild-index", "--no-embed", "--quiet", str(workspace))
    assert code == 0, err
    code, out, _ = cli("history", "token", "--mode", "lexical", "--json",
                       "--project", str(workspace))
    assert code == 0 and json.loads(out)["total_commits_indexed"] == 4


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--top-n", "0"), "--top-n: "),
        (("--top-n", "101"), "--top-n: "),
        (("--after", "notadate"), "notadate"),
        (("--before", "2024-99-99"), "2024-99-99"),
        (("--files-glob", "src/[a"), "src/[a"),
        (("--files-glob", "{a,b"), "{a,b"),
        (("--mode", "fuzzy"), "--mode: "),
        (("--after", "2024-02-01", "--before", "2024-01-01"),
         "--after/--before: the lower bound 2024-02-01T00:00:00Z is later than the upper bound "
         "2024-01-01T23:59:59Z"),
    ],
)
def test_user_mistakes_exit_2_without_traceback(cli, indexed, argv, needle):
    _, workspace = indexed
    code, out, err = cli("history", "token", "--project", str(workspace), *argv)
    assert code == 2, (out, err)
    assert err.startswith("Error:") and needle in err
    assert "Traceback" not in err + out


def test_nonexistent_project_is_a_usage_error(cli, tmp_path):
    for argv in (("history", "x", "--project", "/nonexistent/gq"),
                 ("status", "--project", "/nonexistent/gq")):
        code, out, err = cli(*argv)
        assert code == 2
        assert "Error" in err and "/nonexistent/gq" in err
        assert "Traceback" not in err + out


def test_no_index_yet(cli, workspace):
    code, _, err = cli("history", "x", "--project", str(workspace))
    assert code == 1 and err.startswith("Error:") and "gitquarry index" in err


def test_empty_query_warns(cli, indexed):
    _, workspace = indexed
    code, out, err = cli("history", "", "--mode", "lexical", "--project", str(workspace))
    assert code == 0
    assert "empty" in err and "No commits found" in out


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_console_script_smoke(project, workspace):
    """One real subprocess: the installed entry point indexes and searches."""
    exe = gitquarry_executable()
    subprocess.run([exe, "index", "--no-embed", "--quiet", str(workspace)], check=True,
                   capture_output=True)
    proc = subprocess.run([exe, "history", "guide", "--mode", "lexical", "--json",
                           "--project", str(workspace)], check=True, capture_output=True)
    data = json.loads(proc.stdout)
    assert data["results"][0]["title"] == "Write the guide"
    bad = subprocess.run([exe, "history", "x", "--top-n", "0", "--project", str(workspace)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("Error:")
