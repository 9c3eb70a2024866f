"""Issue 7 §8: storage failures are typed errors at every surface; a read-only index answers.

- Corruption that appears after the file opens: every page except the schema's and the
  migrations table's is overwritten (the header and schema intact), then every CLI command
  and both MCP tools are run.
- Disk full: a real 1 MiB tmpfs holding the index (where mounting is allowed) and SQLite's
  ``PRAGMA max_page_count`` through the connection hook (everywhere).
- A read-only index directory: a read-only bind mount (as root) or ``chmod`` (otherwise).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitquarry.store.connection import add_connection_hook, remove_connection_hook

from .conftest import CLI, fast_import, run_gitquarry, user_config, with_mcp_server


def build_workspace(root: Path, commits: int = 150) -> Path:
    fast_import(root / "repo", [
        (f"Change number {i} to the parser",
         {f"src/mod{i % 7}.py": "".join(f"line {j} of {i}\n" for j in range(40))})
        for i in range(commits)
    ])
    graph = root / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text(
        "nodes:\n  - ref_id: parser\n    kind: service\n    summary: The parser service\n",
        encoding="utf-8")
    return root


@pytest.fixture
def indexed(tmp_path: Path, cli: CLI) -> Path:
    user_config('[embedding]\nprovider = "none"\n')
    ws = build_workspace(tmp_path / "ws")
    code, _, err = cli("index", str(ws), "-q")
    assert code == 0, err
    return ws


def corrupt_after_header(db: Path) -> int:
    """Overwrite every page not holding the schema or ``_migrations``; the count."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        keep = {p for (p,) in conn.execute(
            "SELECT pageno FROM dbstat WHERE name IN ('sqlite_schema', '_migrations')")}
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    finally:
        conn.close()
    targets = [p for p in range(2, pages + 1) if p not in keep]
    with open(db, "r+b") as handle:
        for page in targets:
            handle.seek((page - 1) * page_size)
            handle.write(b"\xa5" * page_size)
    return len(targets)


CORRUPT_COMMANDS = [
    ("status", "--project", "{ws}"),
    ("status", "--project", "{ws}", "--json"),
    ("history", "parser", "--project", "{ws}", "--mode", "lexical"),
    ("history", "parser", "--project", "{ws}", "--json"),
    ("index", "{ws}", "-q"),
    ("index", "{ws}", "--json"),
    ("search", "parser", "--project", "{ws}"),
    ("graph", "reindex", "--project", "{ws}"),
]


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_corruption_after_open_is_a_typed_error_on_every_surface(
    indexed: Path, cli: CLI, tmp_path: Path
) -> None:
    db = indexed / ".gitquarry" / "index.db"
    assert corrupt_after_header(db) > 20
    for argv in CORRUPT_COMMANDS:
        code, out, err = cli(*(a.replace("{ws}", str(indexed)) for a in argv))
        assert code == 1, (argv, out, err)
        assert "internal error" not in err, (argv, err)
        assert f"the index database {db} is corrupt" in err, (argv, err)
        assert "gitquarry rebuild-index" in err

    async def body(session: Any) -> Any:
        return (await session.call_tool("search_git_history", {"query": "parser"}),
                await session.call_tool("search", {"query": "parser"}))

    (history, graph), _ = with_mcp_server(indexed, body, tmp_path)
    for result in (history, graph):
        assert result.is_error
        text = result.content[0].text
        assert "index_corrupt: the index database" in text and "rebuild-index" in text, text
        assert "internal" not in text

    # the cure the message names works
    code, _, err = cli("rebuild-index", str(indexed), "-q")
    assert code == 0, err
    code, out, _ = cli("history", "parser", "--project", str(indexed), "--json")
    assert code == 0 and json.loads(out)["total_commits_indexed"] == 150


@contextlib.contextmanager
def max_pages(pages: int) -> Iterator[None]:
    def hook(conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA max_page_count = {pages}")

    add_connection_hook(hook)
    try:
        yield
    finally:
        remove_connection_hook(hook)


def test_disk_full_is_a_typed_error_and_keeps_earlier_batches(tmp_path: Path,
                                                               cli: CLI) -> None:
    user_config('[embedding]\nprovider = "none"\n[git_indexing]\nbatch_size = 20\n')
    ws = build_workspace(tmp_path / "ws")
    with max_pages(100):
        code, out, err = cli("index", str(ws), "-q")
    assert code == 1, (out, err)
    assert "internal error" not in err
    assert "no space left for the index" in err and "database or disk is full" in err
    assert "free space" in err
    with max_pages(120):
        code, out, err = cli("graph", "reindex", "--project", str(ws))
    assert code in (0, 1) and "internal error" not in err
    # once there is room again, a re-run completes
    code, out, err = cli("index", str(ws), "--json")
    assert code == 0, err
    assert json.loads(out)["total_commits"] == 150


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_disk_full_on_a_real_tiny_filesystem(tmp_path: Path) -> None:
    mount = tmp_path / "tiny"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        user_config(f'[embedding]\nprovider = "none"\n[indexing]\nindex_dir = "{mount / "gq"}"\n'
                    "[git_indexing]\nbatch_size = 50\n")
        ws = build_workspace(tmp_path / "ws", commits=400)
        proc = run_gitquarry("index", str(ws), "-q")
        err = proc.stderr.decode()
        assert proc.returncode == 1, err
        assert "internal error" not in err and "no space left for the index" in err, err
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """``directory`` read-only for this process: a read-only bind mount as root (root
    ignores permissions), else ``chmod a-w``."""
    if os.geteuid() == 0:
        steps = [["mount", "--bind", str(directory), str(directory)],
                 ["mount", "-o", "remount,ro,bind", str(directory)]]
        for step in steps:
            proc = subprocess.run(step, capture_output=True, check=False)
            if proc.returncode != 0:
                subprocess.run(["umount", str(directory)], capture_output=True, check=False)
                pytest.skip(f"cannot make a read-only mount: {proc.stderr.decode().strip()}")
        try:
            yield
        finally:
            subprocess.run(["umount", "-l", str(directory)], check=False)
    else:
        modes = {p: p.stat().st_mode for p in [directory, *directory.iterdir()]}
        for p in modes:
            p.chmod(modes[p] & ~0o222)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_read_only_index_still_answers(indexed: Path, cli: CLI, tmp_path: Path) -> None:
    index_dir = indexed / ".gitquarry"
    assert not (index_dir / "index.db-wal").exists()  # a clean close leaves no WAL files
    with read_only(index_dir):
        assert not os.access(index_dir, os.W_OK)
        code, out, err = cli("status", "--project", str(indexed), "--json")
        assert code == 0, err
        status = json.loads(out)
        assert status["read_only"] is True and status["total_commits"] == 150
        assert "is read-only here: searches work" in err

        code, out, err = cli("history", "parser", "--project", str(indexed), "--json")
        assert code == 0, err
        data = json.loads(out)
        assert data["results"] and "index_read_only" in {
            w["code"] for w in data["warning_details"]}

        code, out, err = cli("search", "parser", "--project", str(indexed))
        assert code == 0 and "[service] parser" in out, err

        code, out, err = cli("index", str(indexed), "-q")
        assert code == 1 and "internal error" not in err
        assert "can be searched but not updated" in err

        async def body(session: Any) -> Any:
            return await session.call_tool("search_git_history", {"query": "parser"})

        result, _ = with_mcp_server(indexed, body, tmp_path)
        assert not result.is_error, result.content[0].text
        data = json.loads(result.content[0].text)
        assert data["results"]
        assert "index_read_only" in {w["code"] for w in data["warning_details"]}
    code, out, err = cli("index", str(indexed), "-q")  # writable again
    assert code == 0, err
