"""Session 8, the product as a careful user meets it: the rough edges the s7 users left, each
pinned on a real repository the test builds, the real CLI and real SQLite.

- ``repo-docs index --help`` at ``COLUMNS=80`` cut ``--source-registration-generation`` to
  ``--source-registration-generat…`` (rich narrowed the widest column first).
- ``repo-docs register`` needed an invented ``--repo owner/name`` for a local repository:
  now the name defaults to the origin remote's (a GitHub-style URL), else the directory's;
  the URL is repository content, so what it yields passes the explicit name's rules.
- A read (``history``, ``status``) on an index an older gitquarry wrote ran the schema
  migration, writing on the read path without the writer lease: now a typed
  ``index_schema_outdated`` error (rc 1) that says to run ``gitquarry index``, and nothing
  written.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from testkit import GitRepo, run_gitquarry
from testkit.cli import CLI

# -- help at 80 columns ------------------------------------------------------------------------


def _help(*argv: str, columns: int) -> str:
    env = dict(os.environ, COLUMNS=str(columns))
    env.pop("TERMINAL_WIDTH", None)
    proc = run_gitquarry(*argv, "--help", env=env, text=True)
    assert proc.returncode == 0, proc.stderr
    return str(proc.stdout)


@pytest.mark.parametrize("command", ["index", "rebind", "search", "status", "policy", "plan"])
def test_repo_docs_help_keeps_option_names_whole_at_80_columns(tmp_path: Path,
                                                               command: str) -> None:
    GitRepo(tmp_path / "r").commit({"README.md": "# r\n"}, "first")
    out = _help("repo-docs", command, columns=80)
    assert "--source-registration-generation" in out, out
    for line in out.splitlines():
        assert len(line) <= 80, line
        # every cut is a word wrap: no option name or help word ends in an ellipsis
        assert "…" not in line, line
    # the help text lost no word: each help word of the option is in the output
    if command == "index":
        words = " ".join(out.replace("│", " ").split())
        for phrase in ("Source generation.", "Overlay tracked working-tree", "never untracked",
                       "Submit the daemon job and print its id; do not wait."):
            assert phrase in words, phrase


def test_a_narrow_terminal_keeps_rich_s_own_layout() -> None:
    """At 50 columns whole option names would leave the help text no room: rich's layout
    (which may cut a name) is kept, and nothing is wider than the terminal."""
    out = _help("repo-docs", "index", columns=50)
    assert all(len(line) <= 50 for line in out.splitlines()), out
    assert "Opaque" in out  # the help text still has a column of its own


# -- repo-docs register without --repo ---------------------------------------------------------


def _register(cli: CLI, path: Path, *extra: str) -> tuple[int, dict[str, object] | None, str]:
    code, out, err = cli("repo-docs", "register", "--repository-path", str(path), "--json",
                         *extra)
    return code, (json.loads(out) if out.strip() else None), err


@pytest.mark.parametrize(("url", "expected"), [
    ("https://github.com/Pallets/Click.git", "pallets/click"),
    ("git@github.com:pallets/flask", "pallets/flask"),
    ("ssh://git@gitlab.example.com:2222/acme/widget.git/", "acme/widget"),
])
def test_register_defaults_to_the_origin_remote_s_name(tmp_path: Path, cli: CLI, url: str,
                                                       expected: str) -> None:
    repo = GitRepo(tmp_path / "checkout")
    repo.commit({"README.md": "# x\n"}, "first")
    repo.git("remote", "add", "origin", url)
    code, data, err = _register(cli, repo.path)
    assert code == 0, err
    assert data is not None and data["repo_id"] == expected, data
    assert f"repository name {expected} (from the origin remote" in err, err
    # the next step names it, and the registration answers to that name
    code, out, err = cli("repo-docs", "sources", "--repo", expected, "--json")
    assert code == 0, err
    assert len(json.loads(out)["sources"]) == 1


@pytest.mark.parametrize("url", [
    "/srv/git/../../etc/passwd",          # a local path, not a hosted URL
    "https://github.com/../../../etc",     # path traversal in a URL
    "https://example.com/only-one-part",  # no owner
    "https://github.com/a/b/c/d",          # more than owner/name
    "git@github.com:ow ner/na\x1b[31mme",  # spaces and an escape sequence
    "file:///home/me/repo.git",
])
def test_an_untrusted_origin_url_never_names_the_repository(tmp_path: Path, cli: CLI,
                                                            url: str) -> None:
    repo = GitRepo(tmp_path / "plain-dir")
    repo.commit({"README.md": "# x\n"}, "first")
    repo.git("config", "remote.origin.url", url)
    state = Path(os.environ.get("XDG_STATE_HOME", tmp_path))
    before = sorted(p.name for p in state.rglob("*")) if state.exists() else []
    code, data, err = _register(cli, repo.path)
    assert code == 0, err
    assert data is not None and data["repo_id"] == "plain-dir", (url, data)
    assert "from the directory name" in err, err
    assert "\x1b" not in err
    after = sorted(p.name for p in state.rglob("*")) if state.exists() else []
    assert set(after) - set(before) <= {"gitquarry", "repo-docs-registry.json",
                                        "repo-docs-registry.json.lock"}, after


def test_register_without_a_usable_name_says_what_to_pass(tmp_path: Path, cli: CLI) -> None:
    repo = GitRepo(tmp_path / "my checkout")  # a space: no valid name
    repo.commit({"README.md": "# x\n"}, "first")
    code, data, err = _register(cli, repo.path)
    assert code == 2, (code, err)
    assert data is not None
    error = data["error"]
    assert isinstance(error, dict)
    assert error["code"] == "repository_docs_registration_invalid"
    assert "pass --repo owner/name" in str(error["message"])
    code, _out, err = cli("repo-docs", "register", "--repository-path", str(repo.path))
    assert code == 2 and "pass --repo owner/name" in err and "Traceback" not in err, err
    # an explicit name still registers it
    code, data, err = _register(cli, repo.path, "--repo", "me/checkout")
    assert code == 0 and data is not None and data["repo_id"] == "me/checkout", err


def test_register_defaults_to_the_current_directory(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "here")
    repo.commit({"README.md": "# x\n"}, "first")
    proc = run_gitquarry("repo-docs", "register", "--json", cwd=repo.path, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["repo_id"] == "here"


# -- an older index opened by a read ---------------------------------------------------------


def _downgrade(db_path: Path) -> None:
    """Make ``db_path`` look like an index written before compact diffs (migration
    ``history_0007_compact_diffs`` not applied: diffs stored as text), as
    ``tests/history/test_history_tokenize.py`` builds an older index."""
    from gitquarry.retrieval.tokenize import register_functions
    from gitquarry.store.compression import register_functions as register_compression

    conn = sqlite3.connect(db_path, isolation_level=None)
    register_functions(conn)  # the FTS5 update trigger's
    register_compression(conn)
    conn.execute("BEGIN")
    conn.execute("UPDATE git_commits SET delta_truncated = gq_inflate(delta_truncated)")
    conn.execute("DELETE FROM _migrations WHERE name = 'history_0007_compact_diffs'")
    count = conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]
    conn.execute(f"PRAGMA user_version = {count}")
    conn.execute("COMMIT")
    conn.close()


def _snapshot(index_dir: Path) -> dict[str, str]:
    """Each file's hash; an empty write-ahead log (and its shared-memory index, which SQLite
    makes for any connection to a WAL database) is left out: nothing written."""
    wal = index_dir / "index.db-wal"
    empty_wal = not wal.exists() or wal.stat().st_size == 0
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(index_dir.iterdir()) if p.is_file()
            and not (empty_wal and p.name in ("index.db-wal", "index.db-shm"))}


def test_a_read_of_an_older_index_writes_nothing_and_says_run_index(tmp_path: Path,
                                                                     cli: CLI) -> None:
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "r")
    first = repo.commit({"retry.py": "RETRIES = 3\n"}, "Retry uploads three times")
    code, _out, err = cli("index", "--no-embed", "-q", str(ws))
    assert code == 0, err
    db = ws / ".gitquarry" / "index.db"
    _downgrade(db)
    before = _snapshot(db.parent)
    with sqlite3.connect(db) as conn:
        old_version = conn.execute("PRAGMA user_version").fetchone()[0]

    for argv in (("history", "retry uploads"), ("status",), ("show", first[:10])):
        code, out, err = cli(*argv, "--project", str(ws))
        assert code == 1, (argv, code, out, err)
        assert "older gitquarry" in err and "gitquarry index" in err, err
        assert "Traceback" not in err
        code, out, _err = cli(*argv, "--project", str(ws), "--json")
        assert code == 1
        assert json.loads(out)["error"]["code"] == "index_schema_outdated", out
        assert _snapshot(db.parent) == before, argv  # not one byte written

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == old_version
        names = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    assert "history_0007_compact_diffs" not in names

    # `gitquarry index` upgrades it, and the read answers
    code, _out, err = cli("index", "--no-embed", "-q", str(ws))
    assert code == 0, err
    code, out, err = cli("history", "retry uploads", "--project", str(ws), "--json")
    assert code == 0, err
    assert [r["hash"] for r in json.loads(out)["results"]] == [first]


# -- a glob that can match nothing ------------------------------------------------------------


def test_a_files_glob_with_a_dotdot_segment_is_a_usage_error_as_path_is(tmp_path: Path,
                                                                        cli: CLI) -> None:
    """``--path ../x`` was refused (no repository path holds ``..``) while ``--files-glob
    ../x`` answered "No commits found": now both are usage errors (rc 2)."""
    ws = tmp_path / "ws"
    GitRepo(ws / "r").commit({"src/a.py": "x = 1\n"}, "Add the retry loop")
    code, _out, err = cli("index", "--no-embed", "-q", str(ws))
    assert code == 0, err
    for glob in ("../src/*.py", "src/../a.py", "**/..", "/../x"):
        code, out, err = cli("history", "retry", "--project", str(ws), "--files-glob", glob)
        assert code == 2, (glob, code, out, err)
        assert "'..' segment" in err and "Traceback" not in err, err
        code, out, _err = cli("history", "retry", "--project", str(ws), "--files-glob", glob,
                              "--json")
        assert code == 2 and json.loads(out)["error"]["code"] == "invalid_glob", out
    # names with two dots that are not a segment still match
    for glob in ("src/*.py", "src/a..py", "**/*..*", "src/[.][.]"):
        code, _out, err = cli("history", "retry", "--project", str(ws), "--files-glob", glob)
        assert code == 0, (glob, err)


# -- show: the body under a blank line, as git show --------------------------------------------


def test_show_puts_a_blank_line_between_title_and_body(tmp_path: Path, cli: CLI) -> None:
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "r")
    sha = repo.commit({"a.txt": "a\n"}, "Fix Zsh completions\n\nResolves #2846.\n\n"
                      "Co-authored-by: A <a@example.com>")
    code, _out, err = cli("index", "--no-embed", "-q", str(ws))
    assert code == 0, err
    code, out, err = cli("show", sha[:10], "--project", str(ws), "--no-pager")
    assert code == 0, err
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Fix Zsh completions")
    assert lines[start + 1:start + 5] == ["", "    Resolves #2846.", "",
                                          "    Co-authored-by: A <a@example.com>"], lines


# -- index while the daemon builds the same docs ----------------------------------------------


def test_index_while_the_daemon_indexes_the_docs_is_a_warning_not_a_failure(
        tmp_path: Path, cli: CLI) -> None:
    """``gitquarry index --watch .`` right after ``daemon start`` exited 1 with "Error:
    repository docs ... not refreshed: another gitquarry process is writing ... (daemon
    job-000001)": the daemon was building those very docs. Held by a daemon job, it is now
    a warning (rc 0); held by another CLI run it stays an error."""
    from gitquarry.store.lease import writer_lease

    from .conftest import user_config

    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "r")
    repo.commit({"README.md": "# R\n\nUse a reverse proxy.\n"}, "Add the readme")
    code, _out, err = cli("repo-docs", "register", "--repo", "acme/r", "--repository-path",
                          str(repo.path))
    assert code == 0, err
    code, _out, err = cli("index", "--no-embed", "-q", str(ws))
    assert code == 0, err
    repo.commit({"docs/new.md": "# New\n"}, "Add docs")
    cache = repo.path / ".gitquarry"
    lock = cache / "repo_docs.lock"
    with writer_lease(lock, db_path=cache / "repo_docs.db", holder="daemon job-000042"):
        code, out, err = cli("index", "--no-embed", str(ws))
        assert code == 0, (out, err)
        assert "Error:" not in err, err
        assert "the daemon is indexing them now (daemon job-000042" in err, err
        code, out, err = cli("index", "--no-embed", "--json", str(ws))
        assert code == 0, err
        assert any("daemon job-000042" in w for w in json.loads(out)["warnings"]), out
    with writer_lease(lock, db_path=cache / "repo_docs.db", holder="cli index"):
        code, out, err = cli("index", "--no-embed", str(ws))
        assert code == 1, (out, err)
        assert "not refreshed: another gitquarry process is writing" in err, err
        code, out, err = cli("index", "--no-embed", "--json", str(ws))
        assert code == 1, err
        assert any("cli index" in e for e in json.loads(out)["errors"]), out  # in --json too
    # free again: this run refreshes them
    code, out, err = cli("index", "--no-embed", str(ws))
    assert code == 0 and "Docs: acme/r" in out + err, (out, err)


# -- show HEAD, show main --------------------------------------------------------------------


def test_show_takes_a_revision_as_git_show_does(tmp_path: Path, cli: CLI) -> None:
    """``gitquarry show HEAD`` (or ``main``, a tag, ``HEAD~1``) said "give a commit hash":
    now a revision is resolved with ``git rev-parse`` in the workspace's repositories, and it
    must name one indexed commit."""
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "r")
    first = repo.commit({"a.txt": "a\n"}, "Add the first file")
    repo.git("tag", "-a", "v1.0", "-m", "release")
    second = repo.commit({"b.txt": "b\n"}, "Add the second file")
    repo.git("branch", "cafe", first)  # a branch spelled in hexadecimal, no such hash
    code, _out, err = cli("index", "--no-embed", "-q", str(ws))
    assert code == 0, err
    p = ["--project", str(ws), "--json"]
    for revision, expected in (("HEAD", second), ("HEAD~1", first), ("v1.0", first),
                               (repo.git("symbolic-ref", "--short", "HEAD").strip(), second),
                               ("cafe", first), (second[:8], second)):
        code, out, err = cli("show", revision, *p)
        assert code == 0, (revision, err)
        assert json.loads(out)["hash"] == expected, revision
    # a name that is no revision stays a usage error; an option never reaches git
    for bad in ("not-a-revision", "-n1", "--output=/tmp/x", "HEAD x"):
        code, out, _err = cli("show", "--project", str(ws), "--json", "--", bad)
        assert code == 2, (bad, out)
        assert json.loads(out)["error"]["code"] == "commit_not_found"
    # a commit made after the index: found by git, not indexed yet (not found, rc 3)
    repo.commit({"c.txt": "c\n"}, "Add the third file")
    code, out, _err = cli("show", "HEAD", *p)
    assert code == 3 and "not indexed yet" in json.loads(out)["error"]["message"], out
    # two repositories whose HEADs differ: ambiguous, give a hash (rc 2)
    other = GitRepo(ws / "other")
    other.commit({"z.txt": "z\n"}, "Another repository")
    code, _out, err = cli("index", "--no-embed", "-q", str(ws))
    assert code == 0, err
    code, out, _err = cli("show", "HEAD", *p)
    assert code == 2 and "different commits" in json.loads(out)["error"]["message"], out
    code, out, err = cli("show", "v1.0", *p)  # only one repository has the tag
    assert code == 0 and json.loads(out)["hash"] == first, err


def test_index_of_a_directory_without_repositories_does_not_claim_up_to_date(
        tmp_path: Path, cli: CLI) -> None:
    """``gitquarry index /a/typo`` said "Commit history is up to date: 0 commits in 0
    repositories. Nothing to do." above "Warning: no Git repositories found": now only the
    warning, which says what to give."""
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    code, out, err = cli("index", "--no-embed", str(empty))
    assert code == 0, err
    assert "up to date" not in out + err, (out, err)
    assert "no Git repositories found" in err and "holds your repositories" in err, err
    # with a repository, the usual line
    GitRepo(empty / "r").commit({"a": "a\n"}, "first")
    code, out, err = cli("index", "--no-embed", str(empty))
    assert code == 0 and "Indexed 1 new commit" in out + err, (out, err)
    code, out, err = cli("index", "--no-embed", str(empty))
    assert code == 0 and "Commit history is up to date: 1 commit in 1 repository" in out + err


def test_register_again_without_repo_keeps_the_name_it_has(tmp_path: Path, cli: CLI) -> None:
    """A checkout registered as ``acme/widget`` and registered again without ``--repo`` kept
    one registration (not a second one named after the directory, which made every later
    ``repo-docs search`` without ``--repo`` ambiguous)."""
    repo = GitRepo(tmp_path / "widget-checkout")
    repo.commit({"README.md": "# x\n"}, "first")
    code, data, err = _register(cli, repo.path, "--repo", "acme/widget")
    assert code == 0, err
    code, data, err = _register(cli, repo.path)
    assert code == 0, err
    assert data is not None and data["repo_id"] == "acme/widget", data
    assert "from its registration" in err, err
    code, out, err = cli("repo-docs", "sources", "--json")
    assert code == 0, err
    assert [s["repo_id"] for s in json.loads(out)["sources"]] == ["acme/widget"]
