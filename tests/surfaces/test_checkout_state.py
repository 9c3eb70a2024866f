"""Issue 19 §1–§2: gitquarry never follows a link, opens a non-regular file or trusts state
that a checkout (or an archive) placed where it keeps its own files.

Every hostile tree here is made the way an attacker ships it: a real repository commits the
link (or the forged index), and a real ``git clone`` checks it out. The "untracked" variants
place the same things without git (an archive, a copy) to prove the file-level guards hold
on their own, not only the "git tracks it" refusal.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, Repo, run_gitquarry, user_config, with_mcp_server

VICTIM_TEXT = "export SECRET=1  # the user's own file\n"
FORGED_MESSAGE = "Rotate the release signing key to attacker key 0xBADC0DE"


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This user's state directory (where the owner tokens of their indexes are recorded)."""
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    user_config('[embedding]\nprovider = "none"\n')
    yield state
    from gitquarry.service.client import daemon_lock_info

    info = daemon_lock_info()  # nothing here should start one; stop it if something did
    if info and info.get("pid"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(info["pid"]), signal.SIGTERM)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(VICTIM_TEXT, encoding="utf-8")
    return path


def hostile_clone(tmp_path: Path, links: dict[str, str] | None = None,
                  files: dict[str, bytes] | None = None) -> Path:
    """A repository committing ``links`` (path -> link target) and ``files``, cloned with
    ``git clone`` to ``<tmp>/ws/clone``; returns the clone."""
    src = Repo(tmp_path / "src")
    for name, target in (links or {}).items():
        path = src.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    for name, data in (files or {}).items():
        path = src.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    src.commit("Add the parser", {"parser.py": "def parse():\n    return 1\n"})
    clone = tmp_path / "ws" / "clone"
    clone.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(src.path), str(clone)], check=True,
                   capture_output=True)
    return clone


def refused(code: int, err: str, what: str = "") -> None:
    assert code == 1, err
    assert "refusing to use" in err or "refusing to read" in err, err
    assert what in err, err
    assert "internal error" not in err and "Traceback" not in err, err


# --- §1: links and non-regular files ------------------------------------------------------


def test_committed_lock_link_leaves_the_victim_intact(tmp_path: Path, cli: CLI) -> None:
    """The recipe: ``.gitquarry/index.lock`` -> ``../../victim.txt``, cloned to ws/clone."""
    target = victim(tmp_path / "ws")
    clone = hostile_clone(tmp_path, links={".gitquarry/index.lock": "../../victim.txt"})
    assert (clone / ".gitquarry" / "index.lock").resolve() == target.resolve()
    code, _, err = cli("index", str(clone), "--no-embed")
    refused(code, err, "it came with the checkout")
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT
    assert not (clone / ".gitquarry" / "index.db").exists()


def test_committed_dangling_lock_link_creates_nothing(tmp_path: Path, cli: CLI) -> None:
    clone = hostile_clone(tmp_path, links={".gitquarry/index.lock": "../../planted.txt"})
    code, _, err = cli("index", str(clone), "--no-embed")
    refused(code, err)
    assert not (tmp_path / "ws" / "planted.txt").exists()
    assert not os.path.lexists(tmp_path / "ws" / "planted.txt")


@pytest.mark.parametrize("name", ["index.lock", "index.db", "index.db-wal", "index.db-shm",
                                  "index.db-journal"])
def test_untracked_links_in_the_index_dir_are_never_followed(
        tmp_path: Path, cli: CLI, name: str) -> None:
    """The same links placed without git (an archive): the file-level guards alone refuse
    them (``O_NOFOLLOW`` / ``lstat``), and the link's target is never written."""
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    target = victim(tmp_path)
    before = digest(target)
    (ws / ".gitquarry").mkdir()
    os.symlink(target, ws / ".gitquarry" / name)
    code, _, err = cli("index", str(ws), "--no-embed", "-q")
    refused(code, err, "a symbolic link")
    assert str(ws / ".gitquarry" / name) in err
    assert "remove it; it came with the checkout" in err
    assert digest(target) == before


@pytest.mark.parametrize("name", ["index.lock", "index.db", "index.db-wal"])
def test_hard_links_in_the_index_dir_are_never_written_through(
        tmp_path: Path, cli: CLI, name: str) -> None:
    """A hard link passes ``lstat``/``fstat`` ``S_ISREG`` and ``O_NOFOLLOW``; an archive (or
    anyone who can write the directory) can place one to another file. The lease used to
    truncate the victim through ``index.lock``; another workspace's own index (``ours`` by
    its owner token) linked as ``index.db`` would be written into. gitquarry never makes a
    hard link there, so a file with more than one link is refused."""
    other = tmp_path / "other"
    Repo(other / "repo").commit("Other work", {"a.py": "a = 1\n"})
    code, _, err = cli("index", str(other), "--no-embed", "-q")
    assert code == 0, err
    target = other / ".gitquarry" / "index.db" if name == "index.db" else victim(tmp_path)
    before = digest(target)
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    (ws / ".gitquarry").mkdir()
    os.link(target, ws / ".gitquarry" / name)
    code, _, err = cli("index", str(ws), "--no-embed", "-q")
    refused(code, err, "hard link")
    assert str(ws / ".gitquarry" / name) in err
    assert digest(target) == before


def test_cursor_store_never_opens_a_linked_cursors_db(tmp_path: Path) -> None:
    from gitquarry.history.answers.cursor import CursorStore

    target = victim(tmp_path)
    index_dir = tmp_path / "idx"
    index_dir.mkdir()
    os.symlink(target, index_dir / "cursors.db")
    store = CursorStore(index_dir)
    try:
        assert store.persistent is False
        assert store.problem is not None and "symbolic link" in store.problem
    finally:
        store.close()
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT
    assert (index_dir / "cursors.db").is_symlink()  # not deleted through, not replaced


def test_workspace_marker_link_is_neither_read_nor_written(tmp_path: Path, cli: CLI) -> None:
    """An absolute ``index_dir`` records its workspace in ``WORKSPACE``: never through a link."""
    index_dir = tmp_path / "central"
    index_dir.mkdir()
    target = victim(tmp_path)
    os.symlink(target, index_dir / "WORKSPACE")
    user_config(f'[embedding]\nprovider = "none"\n[indexing]\nindex_dir = "{index_dir}"\n')
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    cli("index", str(ws), "--no-embed", "-q")
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT


def test_fifo_lock_is_refused_without_hanging(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    (ws / ".gitquarry").mkdir()
    os.mkfifo(ws / ".gitquarry" / "index.lock")
    proc = run_gitquarry("index", str(ws), "--no-embed", "-q", timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "it is a FIFO" in err, err


def test_committed_gitquarry_dir_link_is_refused_for_index_and_rebuild(
        tmp_path: Path, cli: CLI) -> None:
    """The recipe: ``.gitquarry`` itself -> ``../outside``: nothing is created there."""
    outside = tmp_path / "ws" / "outside"
    outside.mkdir(parents=True)
    clone = hostile_clone(tmp_path, links={".gitquarry": "../outside"})
    for argv in (("index", str(clone), "--no-embed"), ("rebuild-index", str(clone), "-q")):
        code, _, err = cli(*argv)
        refused(code, err)
    code, _, err = cli("history", "parser", "--project", str(clone))
    assert code == 1, err
    assert list(outside.iterdir()) == []


def test_untracked_gitquarry_dir_link_is_refused(tmp_path: Path, cli: CLI) -> None:
    """Without git: ``<ws>/.gitquarry`` a link to a directory holding a real index of another
    workspace (its schema and contents are never migrated or rebuilt)."""
    other = tmp_path / "other"
    Repo(other / "repo").commit("Other work", {"o.txt": "o\n"})
    code, _, err = cli("index", str(other), "--no-embed", "-q")
    assert code == 0, err
    before = {p.name: digest(p) for p in (other / ".gitquarry").iterdir() if p.is_file()}
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    os.symlink(other / ".gitquarry", ws / ".gitquarry")
    for argv in (("index", str(ws), "--no-embed"), ("rebuild-index", str(ws), "-q"),
                 ("history", "work", "--project", str(ws))):
        code, _, err = cli(*argv)
        refused(code, err, "a symbolic link")
    after = {p.name: digest(p) for p in (other / ".gitquarry").iterdir() if p.is_file()}
    assert after == before


def test_link_in_a_nested_index_dir_component_is_refused(tmp_path: Path, cli: CLI) -> None:
    """``index_dir = "state/idx"``: every component below the workspace is checked."""
    user_config('[embedding]\nprovider = "none"\n[indexing]\nindex_dir = "state/idx"\n')
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    os.symlink(outside, ws / "state")
    code, _, err = cli("index", str(ws), "--no-embed")
    refused(code, err, str(ws / "state"))
    assert list(outside.iterdir()) == []


def make_sqlite(path: Path) -> str:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE precious (v TEXT)")
    conn.execute("INSERT INTO precious VALUES ('keep me')")
    conn.commit()
    conn.close()
    return digest(path)


def test_committed_index_db_link_to_another_database_is_not_migrated(
        tmp_path: Path, cli: CLI) -> None:
    other = tmp_path / "ws" / "other.db"
    other.parent.mkdir(parents=True)
    before = make_sqlite(other)
    clone = hostile_clone(tmp_path, links={".gitquarry/index.db": "../../other.db"})
    for argv in (("index", str(clone), "--no-embed"), ("history", "parser", "--project",
                                                        str(clone))):
        code, _, err = cli(*argv)
        refused(code, err)
    assert digest(other) == before
    conn = sqlite3.connect(other)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["precious"]
    conn.close()


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_committed_wal_and_shm_links_are_refused(tmp_path: Path, cli: CLI, suffix: str) -> None:
    target = victim(tmp_path / "ws")
    clone = hostile_clone(tmp_path, links={f".gitquarry/index.db{suffix}": "../../victim.txt"})
    code, _, err = cli("index", str(clone), "--no-embed")
    refused(code, err)
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT


def test_info_exclude_link_is_not_appended_through(tmp_path: Path, cli: CLI) -> None:
    """``.git/info/exclude`` a link (a workspace unpacked from an archive): the entry is best
    effort, so indexing works, and the link's target is untouched."""
    ws = tmp_path / "ws"
    repo = Repo(ws)
    repo.commit("Add the parser", {"parser.py": "x = 1\n"})
    exclude = ws / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    target = victim(tmp_path)
    os.symlink(target, exclude)
    code, _, err = cli("index", str(ws), "--no-embed", "-q")
    assert code == 0, err
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT


def test_ensure_info_exclude_refuses_a_linked_exclude_file(tmp_path: Path) -> None:
    from gitquarry.errors import IndexPathUnsafeError
    from gitquarry.gitio.exclude import ensure_info_exclude

    repo = Repo(tmp_path / "r")
    repo.commit("one", {"a": "a\n"})
    exclude = repo.path / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    target = victim(tmp_path)
    os.symlink(target, exclude)
    with pytest.raises(IndexPathUnsafeError) as caught:
        ensure_info_exclude(repo.path / ".gitquarry")
    assert caught.value.code == "index_path_unsafe"
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT


# --- the repository-docs cache and its lock -----------------------------------------------


def register(cli: CLI, repo: Path, name: str = "o/docs") -> None:
    code, _, err = cli("repo-docs", "register", "--repo", name, "--repository-path", str(repo))
    assert code == 0, err


@pytest.mark.parametrize("name", ["repo_docs.lock", "repo_docs.db", "repo_docs.db-wal"])
def test_committed_docs_cache_links_are_refused(tmp_path: Path, cli: CLI, name: str) -> None:
    target = victim(tmp_path / "ws")
    clone = hostile_clone(tmp_path, links={f".gitquarry/{name}": "../../victim.txt"},
                          files={"docs/guide.md": b"# Guide\n\nThe parser guide.\n"})
    register(cli, clone)
    for argv in (("repo-docs", "index", "--repo", "o/docs", "--foreground"),
                 ("repo-docs", "search", "parser", "--repo", "o/docs", "--mode", "fulltext")):
        code, out, err = cli(*argv)
        assert code != 0, (out, err)
        assert "refusing to use" in err and "Traceback" not in err, err
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT


@pytest.mark.parametrize("name", ["repo_docs.lock", "repo_docs.db", "repo_docs.db-shm"])
def test_untracked_docs_cache_links_are_refused(tmp_path: Path, cli: CLI, name: str) -> None:
    repo = Repo(tmp_path / "docsrepo")
    repo.commit("Docs", {"docs/guide.md": "# Guide\n\nThe parser guide.\n"})
    target = victim(tmp_path)
    (repo.path / ".gitquarry").mkdir()
    os.symlink(target, repo.path / ".gitquarry" / name)
    register(cli, repo.path)
    code, out, err = cli("repo-docs", "index", "--repo", "o/docs", "--foreground")
    assert code != 0, (out, err)
    assert "refusing to use" in err and "a symbolic link" in err, err
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT


def test_docs_checkpoint_helpers_never_follow_links(tmp_path: Path) -> None:
    import numpy as np

    from gitquarry.errors import IndexPathUnsafeError
    from gitquarry.repo_docs.indexer import drop_checkpoint, read_checkpoint, write_checkpoint

    cache = tmp_path / "cache"
    (cache / "checkpoints").mkdir(parents=True)
    target = victim(tmp_path)
    set_id = "a" * 16
    os.symlink(target, cache / "checkpoints" / f"{set_id}.vec")
    row = ("ab" * 16, "cd" * 16, np.ones(4, dtype=np.float32))
    with pytest.raises(IndexPathUnsafeError):
        write_checkpoint(cache, set_id, "ns", [row])
    assert read_checkpoint(cache, set_id, "ns") == []
    drop_checkpoint(cache, set_id)
    assert (cache / "checkpoints" / f"{set_id}.vec").is_symlink()
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT
    # a linked checkpoints directory
    (cache / "checkpoints" / f"{set_id}.vec").unlink()
    (cache / "checkpoints").rmdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, cache / "checkpoints")
    with pytest.raises(IndexPathUnsafeError):
        write_checkpoint(cache, set_id, "ns", [row])
    assert list(outside.iterdir()) == []


# --- §2: state gitquarry did not write ----------------------------------------------------


def forged_index(tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A plausible ``index.db`` built on the attacker's machine (another state directory)
    from a repository that exists nowhere else; returns (its path, the forged commit)."""
    mine = os.environ["XDG_STATE_HOME"]
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "attacker-state"))
    evil = Repo(tmp_path / "evil" / "repo")
    evil.commit("Add the parser", {"parser.py": "def parse():\n    return 1\n"})
    forged = evil.commit(FORGED_MESSAGE, {"keys.txt": "0xBADC0DE\n"})
    code, _, err = cli("index", str(tmp_path / "evil"), "--no-embed", "-q")
    assert code == 0, err
    monkeypatch.setenv("XDG_STATE_HOME", mine)
    db = tmp_path / "evil" / ".gitquarry" / "index.db"
    assert not Path(f"{db}-wal").exists()
    return db, forged


def shows_forged(out: str, forged: str) -> bool:
    return "0xBADC0DE" in out or "attacker key" in out or forged[:10] in out


@pytest.mark.slow  # issue 24: ~3 s each (subprocess CLI and MCP sessions); CI runs it
def test_committed_forged_index_is_refused_by_history_and_mcp(
        tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    db, forged = forged_index(tmp_path, cli, monkeypatch)
    clone = hostile_clone(tmp_path, files={".gitquarry/index.db": db.read_bytes()})
    code, out, err = cli("history", "signing key", "--project", str(clone))
    refused(code, err, "tracked by git")
    assert not shows_forged(out, forged)
    code, out, err = cli("history", "signing key", "--project", str(clone), "--json")
    assert code == 1 and not shows_forged(out + err, forged)
    code, out, err = cli("show", forged[:12], "--project", str(clone))
    assert code == 1 and FORGED_MESSAGE not in out, out

    async def body(session: Any) -> Any:
        return [await session.call_tool("search_git_history", {"query": "signing key"}),
                await session.call_tool("get_commit", {"commit": forged})]

    results, _ = with_mcp_server(clone, body, tmp_path)
    for result in results:
        text = result.content[0].text
        assert result.is_error, text
        assert not shows_forged(text, forged) and "refusing" in text, text
    # nor does `index` write into it or adopt it
    code, _, err = cli("index", str(clone), "--no-embed")
    refused(code, err, "tracked by git")
    assert digest(clone / ".gitquarry" / "index.db") == digest(db)


@pytest.mark.slow  # issue 24: ~3 s each (subprocess CLI and MCP sessions); CI runs it
def test_untracked_forged_index_is_refused_then_set_aside_by_index(
        tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unpacked from an archive (git tracks nothing): not created here, so readers refuse
    it and ``index`` sets it aside and builds a new one from the real repositories."""
    db, forged = forged_index(tmp_path, cli, monkeypatch)
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the lexer", {"lexer.py": "x = 1\n"})
    (ws / ".gitquarry").mkdir()
    (ws / ".gitquarry" / "index.db").write_bytes(db.read_bytes())
    code, out, err = cli("history", "signing key", "--project", str(ws))
    refused(code, err, "this installation did not create it")
    assert "`gitquarry index`" in err and not shows_forged(out, forged)

    async def body(session: Any) -> Any:
        return await session.call_tool("search_git_history", {"query": "signing key"})

    result, _ = with_mcp_server(ws, body, tmp_path)
    assert result.is_error and not shows_forged(result.content[0].text, forged)

    code, _, err = cli("index", str(ws), "--no-embed")
    assert code == 0, err
    assert "set it aside" in err, err
    aside = [p for p in (ws / ".gitquarry").iterdir() if ".untrusted-" in p.name]
    assert len(aside) == 1 and digest(aside[0]) == digest(db)
    code, out, err = cli("history", "signing key lexer", "--project", str(ws), "--json")
    assert code == 0, err
    assert not shows_forged(out, forged)
    assert "Add the lexer" in out


@pytest.mark.slow  # issue 24: ~3 s each (subprocess CLI and MCP sessions); CI runs it
def test_mcp_server_started_before_the_first_index_never_serves_a_forged_one(
        tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server starts on an empty workspace; the forged index appears (a checkout of a
    branch that commits one) while it runs: still refused."""
    db, forged = forged_index(tmp_path, cli, monkeypatch)
    ws = tmp_path / "ws"
    repo = Repo(ws)
    repo.commit("Add the lexer", {"lexer.py": "x = 1\n"})
    repo.git("checkout", "-q", "-b", "forged")
    repo.commit("Ship an index", {".gitquarry/index.db": db.read_bytes()})
    repo.git("checkout", "-q", "main")
    assert not (ws / ".gitquarry" / "index.db").exists()

    async def body(session: Any) -> Any:
        first = await session.call_tool("search_git_history", {"query": "signing key"})
        repo.git("checkout", "-q", "forged")
        second = await session.call_tool("search_git_history", {"query": "signing key"})
        return first, second

    (first, second), _ = with_mcp_server(ws, body, tmp_path)
    for result in (first, second):
        assert result.is_error, result.content[0].text
        assert not shows_forged(result.content[0].text, forged)
    assert "refusing" in second.content[0].text


def test_legacy_index_is_refused_by_readers_and_adopted_by_index_without_loss(
        tmp_path: Path, cli: CLI) -> None:
    """An index made by a gitquarry older than owner tokens (the table removed) is kept: the
    first ``index`` adopts it in place (same file, same rows, same migration records)."""
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    code, _, err = cli("index", str(ws), "--no-embed", "-q")
    assert code == 0, err
    db = ws / ".gitquarry" / "index.db"
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE _gitquarry_owner")
    conn.commit()
    migrations = conn.execute("SELECT name, applied_at FROM _migrations ORDER BY name").fetchall()
    commits = conn.execute("SELECT id, hash FROM git_commits ORDER BY 1").fetchall()
    conn.close()
    inode = db.stat().st_ino
    code, _, err = cli("history", "parser", "--project", str(ws))
    refused(code, err, "older gitquarry")
    code, _, err = cli("index", str(ws), "--no-embed")
    assert code == 0, err
    assert "adopted" in err, err
    assert db.stat().st_ino == inode
    assert not [p for p in db.parent.iterdir() if ".untrusted-" in p.name]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT name, applied_at FROM _migrations ORDER BY name"
                        ).fetchall() == migrations
    assert conn.execute("SELECT id, hash FROM git_commits ORDER BY 1").fetchall() == commits
    conn.close()
    code, out, err = cli("history", "parser", "--project", str(ws), "--json")
    assert code == 0 and "Add the parser" in out, err


def test_moved_workspace_keeps_its_index(tmp_path: Path, cli: CLI) -> None:
    """The owner record is keyed by the token, so ``mv`` of a workspace keeps it ours."""
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    code, _, err = cli("index", str(ws), "--no-embed", "-q")
    assert code == 0, err
    moved = tmp_path / "moved"
    ws.rename(moved)
    code, out, err = cli("history", "parser", "--project", str(moved), "--json")
    assert code == 0 and "Add the parser" in out, err


def test_index_made_by_another_user_state_is_not_ours(
        tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch, state_home: Path) -> None:
    """Same file, another state directory (another user, a wiped state): refused, with the
    remedy; the owner record is what makes it ours."""
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    code, _, err = cli("index", str(ws), "--no-embed", "-q")
    assert code == 0, err
    records = list((state_home / "gitquarry" / "owned-indexes").iterdir())
    assert len(records) == 1 and oct(records[0].stat().st_mode & 0o777) == "0o600"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "elsewhere"))
    code, _, err = cli("history", "parser", "--project", str(ws))
    refused(code, err, "this installation did not create it")
    # the message names the state directory it looked in and how to match it (an MCP
    # client's reduced environment is the usual cause)
    flat = " ".join(err.split())
    assert str(tmp_path / "elsewhere" / "gitquarry" / "owned-indexes") in flat, err
    assert "XDG_STATE_HOME" in flat, err


@pytest.mark.slow  # issue 24: 3-4 s (a real MCP session or subprocesses); CI runs it
def test_forged_docs_cache_is_refused_by_search_and_set_aside_by_index(
        tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    """A docs cache built elsewhere (another state) and shipped next to the repository."""
    mine = os.environ["XDG_STATE_HOME"]
    docs = b"# Guide\n\nThe parser guide.\n"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "attacker-state"))
    evil = Repo(tmp_path / "evil")
    evil.commit("Docs", {"docs/guide.md": docs.decode()})
    register(cli, evil.path, "o/evil")
    code, _, err = cli("repo-docs", "index", "--repo", "o/evil", "--foreground")
    assert code == 0, err
    monkeypatch.setenv("XDG_STATE_HOME", mine)
    cache = (evil.path / ".gitquarry" / "repo_docs.db").read_bytes()

    repo = Repo(tmp_path / "mine")
    repo.commit("Docs", {"docs/guide.md": docs.decode()})
    (repo.path / ".gitquarry").mkdir()
    (repo.path / ".gitquarry" / "repo_docs.db").write_bytes(cache)
    register(cli, repo.path)
    code, out, err = cli("repo-docs", "search", "parser", "--repo", "o/docs",
                         "--mode", "fulltext")
    assert code != 0 and "this installation did not create it" in err, (out, err)
    code, out, err = cli("repo-docs", "index", "--repo", "o/docs", "--json", "--foreground")
    assert code == 0, err
    data = json.loads(out)
    assert "docs_cache_replaced" in json.dumps(data), data
    assert [p for p in (repo.path / ".gitquarry").iterdir() if ".untrusted-" in p.name]
    code, out, err = cli("repo-docs", "search", "parser", "--repo", "o/docs",
                         "--mode", "fulltext", "--json")
    assert code == 0, err


def test_committed_forged_docs_cache_is_refused(
        tmp_path: Path, cli: CLI, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = os.environ["XDG_STATE_HOME"]
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "attacker-state"))
    evil = Repo(tmp_path / "evil")
    evil.commit("Docs", {"docs/guide.md": "# Guide\n\nThe parser guide.\n"})
    register(cli, evil.path, "o/evil")
    assert cli("repo-docs", "index", "--repo", "o/evil", "--foreground")[0] == 0
    monkeypatch.setenv("XDG_STATE_HOME", mine)
    cache = (evil.path / ".gitquarry" / "repo_docs.db").read_bytes()
    clone = hostile_clone(tmp_path, files={".gitquarry/repo_docs.db": cache,
                                           "docs/guide.md": b"# Guide\n\nThe parser guide.\n"})
    register(cli, clone)
    for argv in (("repo-docs", "search", "parser", "--repo", "o/docs", "--mode", "fulltext"),
                 ("repo-docs", "index", "--repo", "o/docs", "--foreground")):
        code, out, err = cli(*argv)
        assert code != 0, (out, err)
        assert "tracked by git" in err, err
    assert (clone / ".gitquarry" / "repo_docs.db").read_bytes() == cache


def test_subprocess_cli_refuses_the_recipe(tmp_path: Path) -> None:
    """The recipe as a user runs it: ``python -m gitquarry index <clone> --no-embed``."""
    target = victim(tmp_path / "ws")
    clone = hostile_clone(tmp_path, links={".gitquarry/index.lock": "../../victim.txt"})
    proc = run_gitquarry("index", str(clone), "--no-embed", "--json", timeout=120)
    text = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 1, text
    assert "refusing to use" in text and "tracked by git" in text, text
    assert target.read_text(encoding="utf-8") == VICTIM_TEXT
    assert sys.executable  # the CLI ran as the user would run it


@pytest.mark.slow  # issue 24: ~3 s each (subprocess CLI and MCP sessions); CI runs it
def test_readers_never_adopt_a_legacy_index(tmp_path: Path, cli: CLI) -> None:
    """Only a command that builds the index adopts: ``search`` (which may refresh the graph),
    ``history``, ``status`` and an MCP server all refuse and leave the file as it was."""
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    assert cli("index", str(ws), "--no-embed", "-q")[0] == 0
    db = ws / ".gitquarry" / "index.db"
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE _gitquarry_owner")
    conn.commit()
    conn.close()
    for argv in (("search", "parser", "--project", str(ws)),
                 ("history", "parser", "--project", str(ws)),
                 ("status", "--project", str(ws))):
        code, _, err = cli(*argv)
        refused(code, err, "older gitquarry")

    async def body(session: Any) -> Any:
        return await session.call_tool("search_git_history", {"query": "parser"})

    result, _ = with_mcp_server(ws, body, tmp_path)
    assert result.is_error and "older gitquarry" in result.content[0].text
    conn = sqlite3.connect(db)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "_gitquarry_owner" not in tables


def test_an_empty_index_file_is_treated_as_new(tmp_path: Path, cli: CLI) -> None:
    """An empty ``index.db`` (or one another process has just created) holds nothing that
    could be forged: indexing fills and stamps it, and readers then use it."""
    ws = tmp_path / "ws"
    Repo(ws / "repo").commit("Add the parser", {"parser.py": "x = 1\n"})
    (ws / ".gitquarry").mkdir()
    (ws / ".gitquarry" / "index.db").write_bytes(b"")
    code, _, err = cli("index", str(ws), "--no-embed", "-q")
    assert code == 0, err
    code, out, err = cli("history", "parser", "--project", str(ws), "--json")
    assert code == 0 and "Add the parser" in out, err


def test_tracked_under_matches_the_directory_literally(tmp_path: Path) -> None:
    from gitquarry.gitio.tracked import tracked_under

    repo = Repo(tmp_path / "r")
    repo.commit("one", {"ab/file": "a\n", "other.txt": "o\n"})
    assert tracked_under(repo.path, repo.path / "ab") == ["ab/file"]
    assert tracked_under(repo.path, repo.path / "a*") == []  # a glob is not expanded
    assert tracked_under(repo.path, repo.path / ".gitquarry") == []
    assert tracked_under(repo.path, tmp_path / "elsewhere") == []  # outside the work tree
    plain = tmp_path / "plain"
    plain.mkdir()
    assert tracked_under(plain, plain / ".gitquarry") == []  # not a work tree at all


def test_guarded_open_refuses_every_non_regular_kind(tmp_path: Path) -> None:
    import socket

    from gitquarry.errors import IndexPathUnsafeError
    from gitquarry.store import safe_paths

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    os.symlink(tmp_path / "dir", tmp_path / "dirlink")
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        for name, what in (("fifo", "a FIFO"), ("dir", "a directory"), ("sock", "a socket"),
                           ("dirlink", "a symbolic link"), ("dangling", "a symbolic link")):
            with pytest.raises(IndexPathUnsafeError, match=what):
                fd = safe_paths.open_regular(tmp_path / name, os.O_RDWR | os.O_CREAT)
                os.close(fd)
            assert safe_paths.read_small(tmp_path / name) is None
        with pytest.raises(IndexPathUnsafeError, match="a device"):
            safe_paths.check_regular(Path("/dev/null"))
        with pytest.raises(IndexPathUnsafeError, match="a symbolic link"):
            safe_paths.ensure_state_dir(tmp_path / "dirlink" / "sub", tmp_path)
        assert not (tmp_path / "dir" / "sub").exists()
        assert not (tmp_path / "missing").exists()
    finally:
        server.close()
