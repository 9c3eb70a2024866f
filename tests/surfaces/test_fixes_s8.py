"""Defects a colleague found in s8 (2026-12-02), each reproduced on a real repository and a
real index, through the CLI and a real MCP client session:

- MCP ``blame_search`` (and ``gitquarry blame``) with a ``..`` path segment said "not found",
  while ``--path``/MCP ``path`` refuse one as a usage error: both now refuse it the same way
  (``invalid_argument: path``, exit 2); a real on-disk path with ``..`` still works on the
  command line;
- the MCP ``get_commit`` description said "full hash or a unique prefix" only, though it takes
  revisions (``HEAD``, ``main``, tags, ``HEAD~1``) as ``gitquarry show`` does: the tool's and
  its ``commit`` argument's descriptions say so, and what they promise works;
- ``gitquarry index`` of a directory holding no repository created ``.gitquarry/`` (an empty
  index and its lock) there: with nothing to index and no index yet it writes nothing, on
  the Typer path and the Typer-free one alike, and says what it said before;
- (break-it pass) ``gitquarry index`` of a workspace whose directory name is not UTF-8 failed
  with an internal error (the owner record encoded the path as UTF-8): it indexes, and
  ``history`` answers there;
- (break-it pass) ``gitquarry show``/MCP ``get_commit`` with bad revisions: each a typed
  ``commit_not_found`` (usage, exit 2, or not found, exit 3), never an option reaching git;
  a revision-shaped name that resolves nowhere says so (it used to read as malformed);
- a ``repo-docs search`` upgrades an older docs cache (by design, see
  ``RepoDocsService._open_cache``) without the docs writer lease: when another process
  applied the same step between the search's read of the steps done and its write lock,
  the step ran twice ("table already exists", read as a corrupt cache): each step is now
  checked again under the lock.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, fast_import, run_gitquarry, tool_json, user_config, with_mcp_server


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


DOTTED = ["../src/mod0.py", "src/../src/mod0.py", "..", "src/..", "src\\..\\mod0.py"]


def test_blame_with_a_dot_dot_segment_is_a_usage_error_on_every_surface(
        indexed: Path, cli: CLI, tmp_path: Path) -> None:
    async def body(session: Any) -> dict[str, Any]:
        out = {p: await session.call_tool("blame_search", {"path": p}) for p in DOTTED}
        out["plain"] = await session.call_tool("blame_search", {"path": "src/mod0.py"})
        out["missing"] = await session.call_tool("blame_search", {"path": "src/nope.py"})
        return out

    results, _ = with_mcp_server(indexed, body, tmp_path)
    for p in DOTTED:
        text = results[p].content[0].text
        assert results[p].is_error, (p, text)
        assert text.startswith(f"Error executing tool blame_search: invalid_argument: path: "
                               f"{p!r} has a '..' segment, which no "
                               "repository path holds"), (p, text)
    assert not results["plain"].is_error, results["plain"].content[0].text
    assert "path_not_found" in results["missing"].content[0].text  # still not found
    for p in DOTTED:
        code, out, err = cli("blame", p, "--no-pager", "--project", str(indexed))
        assert code == 2, (p, out, err)
        assert err.startswith(f"Error: PATH: {p!r} has a '..' segment"), (p, err)


def test_blame_of_a_real_file_reached_through_dot_dot_still_works(
        indexed: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(indexed / "repo" / "src")
    code, out, err = cli("blame", "../src/mod0.py", "--no-pager", "--project", str(indexed))
    assert code == 0, (out, err)
    assert out.startswith("src/mod0.py at "), out


def test_get_commit_says_it_takes_revisions_and_does(
        indexed: Path, cli: CLI, tmp_path: Path) -> None:
    async def body(session: Any) -> dict[str, Any]:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        answers = {rev: await session.call_tool("get_commit", {"commit": rev})
                   for rev in ("HEAD", "main", "HEAD~1")}
        return {"tool": tools["get_commit"], **answers}

    results, _ = with_mcp_server(indexed, body, tmp_path)
    tool = results["tool"]
    argument = tool.input_schema["properties"]["commit"]["description"]
    for text in (tool.description, argument):
        assert "revision" in text and "HEAD~1" in text and "main" in text, text
    head, main, parent = (tool_json(results[r]) for r in ("HEAD", "main", "HEAD~1"))
    code, out, err = cli("show", "HEAD~1", "--json", "--project", str(indexed))
    assert code == 0, err
    assert head["hash"] == main["hash"] != parent["hash"]
    assert parent["hash"] == json.loads(out)["hash"]
    assert parent["title"] == "Parser change 4"


def _snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every path under ``directory`` (directories as None) and each file's bytes."""
    return {str(p.relative_to(directory)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize("fast", ["1", "0"])
@pytest.mark.parametrize("flags", [(), ("-q",), ("--json",)])
def test_index_of_a_directory_without_repositories_writes_nothing(
        tmp_path: Path, fast: str, flags: tuple[str, ...]) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    empty = tmp_path / "nothing here"
    (empty / "notes" / ".hidden").mkdir(parents=True)
    (empty / "notes" / "todo.txt").write_text("not a repository\n", encoding="utf-8")
    before = _snapshot(empty)
    env = {**os.environ, "GITQUARRY_FAST": fast}
    done = run_gitquarry("index", str(empty), *flags, env=env, text=True)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert _snapshot(empty) == before  # no .gitquarry/, no index.db, no lock
    if "--json" in flags:
        data = json.loads(done.stdout)
        assert data["repositories"] == [] and data["total_commits"] == 0, data
    elif "-q" not in flags:
        assert "Warning: no Git repositories found under" in done.stderr, done.stderr
    # a repository appears: the next run indexes it as a first run would
    fast_import(empty / "notes" / "repo", [("First", {"a.py": "a = 1\n"})])
    done = run_gitquarry("index", str(empty), "-q", env=env, text=True)
    assert done.returncode == 0, done.stderr
    assert (empty / ".gitquarry" / "index.db").is_file()


def test_index_still_writes_when_there_is_a_graph_or_an_index(
        tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    graph_only = tmp_path / "graph-only"
    (graph_only / ".beadloom" / "_graph").mkdir(parents=True)
    (graph_only / ".beadloom" / "_graph" / "g.yml").write_text(
        "nodes:\n  - {ref_id: uploader, kind: service, summary: Uploads files}\n",
        encoding="utf-8")
    code, out, err = cli("index", str(graph_only))
    assert code == 0, err
    assert (graph_only / ".gitquarry" / "index.db").is_file()
    assert "Graph: 1 node" in out, out
    # an index whose only repository was deleted: the run records the removal
    ws = tmp_path / "ws"
    fast_import(ws / "repo", [("First", {"a.py": "a = 1\n"})])
    assert cli("index", str(ws), "-q")[0] == 0
    shutil.rmtree(ws / "repo")
    code, out, err = cli("index", str(ws), "--json")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)["removed"]] == [str(ws / "repo")], out


@pytest.mark.parametrize("fast", ["1", "0"])
def test_index_of_a_workspace_with_a_non_utf8_name(tmp_path: Path, fast: str) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws = tmp_path / os.fsdecode(b"caf\xe9 ws")  # Latin-1, not UTF-8
    fast_import(ws / "repo", [("Parser change", {"a.py": "a = 1\n"})])
    env = {**os.environ, "GITQUARRY_FAST": fast}
    done = run_gitquarry("index", str(ws), env=env)
    assert done.returncode == 0, done.stderr
    assert b"internal error" not in done.stderr
    assert b"Indexed 1 new commit" in done.stdout, done.stdout
    assert (ws / ".gitquarry" / "index.db").is_file()
    found = run_gitquarry("history", "parser", "--json", "--project", str(ws), env=env)
    assert found.returncode == 0, found.stderr
    assert [r["title"] for r in json.loads(found.stdout)["results"]] == ["Parser change"]


def _ambiguous_workspace(root: Path) -> tuple[Path, str, str, str]:
    """A repository of 600 commits (fixed identities and dates: fixed hashes) → (workspace,
    a 4-character prefix two commits share, a blob id, a tree id)."""
    repo = fast_import(root / "repo", [(f"Change {i}", {"a.py": f"a = {i}\n"})
                                       for i in range(600)])
    hashes = repo.git("rev-list", "--all").split()
    seen: dict[str, str] = {}
    prefix = next(h[:4] for h in hashes if seen.setdefault(h[:4], h) != h)
    blob = repo.git("rev-parse", "HEAD:a.py").strip()
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    return root, prefix, blob, tree


def test_show_with_bad_revisions_gives_typed_errors_and_passes_no_option_to_git(
        tmp_path: Path, cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n')
    ws, prefix, blob, tree = _ambiguous_workspace(tmp_path / "ws")
    assert cli("index", str(ws), "-q")[0] == 0
    marker = tmp_path / "git-ran-an-option"
    option = f"--upload-pack=touch {marker}"
    cases = {  # commit → (exit code, words of the message)
        "HEAD~999999": (2, "no indexed repository has a commit by this name"),
        option: (2, "give a commit hash"),
        "-n": (2, "give a commit hash"),
        "--output=" + str(marker): (2, "give a commit hash"),
        blob: (3, "no indexed commit has this hash"),
        tree: (3, "no indexed commit has this hash"),
        blob[:8]: (3, "no indexed commit has this hash"),
        "HEAD:a.py": (2, "no indexed repository has a commit by this name"),
        "HEAD^{tree}": (2, "no indexed repository has a commit by this name"),
        prefix: (2, "the prefix is ambiguous"),
    }
    for commit, (code, words) in cases.items():
        got, out, err = cli("show", "--json", "--no-pager", "--project", str(ws), "--", commit)
        assert got == code, (commit, out, err)
        error = json.loads(out)["error"]
        assert error["code"] == "commit_not_found" and words in error["message"], (commit, err)

    async def body(session: Any) -> dict[str, Any]:
        return {c: await session.call_tool("get_commit", {"commit": c}) for c in cases}

    results, _ = with_mcp_server(ws, body, tmp_path)
    for commit, (_, words) in cases.items():
        text = results[commit].content[0].text
        assert results[commit].is_error and "commit_not_found: " in text, (commit, text)
        assert words in text, (commit, text)
    assert not marker.exists()  # no option ever reached git
    assert cli("show", "--json", "--project", str(ws), "HEAD~1")[0] == 0  # still a revision


def test_two_processes_upgrading_one_docs_cache_at_once(tmp_path: Path) -> None:
    from gitquarry.repo_docs.cache import DocsCache
    from gitquarry.store.schema.repo_docs import REPO_DOCS_MIGRATIONS

    db = tmp_path / "cache" / "repo_docs.db"
    DocsCache(db, writer=True).close()
    last = "s4-docs-vec_0003_heading_vectors"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TABLE heading_vectors")  # as an older gitquarry left it
    conn.execute("DROP TABLE chunk_headings")
    conn.execute("DELETE FROM _migrations WHERE name = ?", (last,))
    conn.execute("PRAGMA user_version = 2")
    conn.execute("BEGIN IMMEDIATE")  # the other process holds the write lock ...
    outcome: dict[str, Any] = {}

    def search_opens() -> None:
        try:
            DocsCache(db).close()  # reads the steps done, then waits for the lock
            outcome["ok"] = True
        except Exception as exc:
            outcome["error"] = exc

    reader = threading.Thread(target=search_opens)
    reader.start()
    time.sleep(1.5)
    step = next(s for s in REPO_DOCS_MIGRATIONS._steps if s.name == last)
    step.fn(conn)  # ... and applies the step itself meanwhile
    conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, 0)", (last,))
    conn.execute("PRAGMA user_version = 3")
    conn.execute("COMMIT")
    conn.close()
    reader.join(30)
    assert outcome == {"ok": True}, outcome
    with DocsCache(db) as cache:
        assert cache.conn.execute("PRAGMA user_version").fetchone()[0] == 3
        assert cache.conn.execute("SELECT count(*) FROM _migrations WHERE name = ?",
                                  (last,)).fetchone()[0] == 1
