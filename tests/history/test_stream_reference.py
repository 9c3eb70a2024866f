"""The one-process reading path (``gitio.log.stream_batches``) and the cheaper parse give
what the old path gave, commit for commit and row for row.

The reference is the old module, frozen in ``tests/history/reference_log.py``: one
``git log`` (and one ``git patch-id``) process per batch, the old parser. The repository is
made here and holds what the reader treats specially: branches and merges (a merge's
first-parent diff, an octopus), a rename, a mode change, a deletion, a
binary file, an empty commit, messages and identities in invalid UTF-8 (no encoding header),
a Latin-1 commit with its header, a ``.mailmap``, a diff longer than ``delta_max_lines``,
camelCase/CJK/version text, and a commit whose blob is missing (git fails mid-stream: the
restart path). Compared: every ``LogCommit`` field at several batchings, and every row of the
index (``benchmarks/index_rows.py``: commits, paths, membership, refs sets and the FTS5
index as ``fts5vocab`` instances) against an index written through the reference reader
whose FTS5 rows are rebuilt by SQL (``COMMIT_FTS_INSERT_SQL``: the SQL functions, no fast
path), so the FTS fast paths in ``fts_values`` are covered too.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from gitquarry.gitio import log as gitlog
from gitquarry.history.index import indexer as indexer_module
from gitquarry.store import open_store
from gitquarry.store.schema.history import rebuild_commit_fts

from . import reference_log
from .conftest import BASE_TIME, GitRepo, Indexer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from index_rows import digests, rows

DAY = 86_400


def _raw_commit(repo: GitRepo, parent: str, body: bytes, *, header: bytes = b"") -> str:
    raw = (
        f"tree {repo.tree(parent)}\nparent {parent}\n".encode()
        + b"author Jos\xe9 Mar\xeda <jose@example.com> 1704067200 +0000\n"
        + b"committer R\xf6b <rob@example.com> 1704067300 +0000\n"
        + header + b"\n" + body
    )
    return repo.hash_commit(raw)


def _build(repo: GitRepo) -> list[str]:
    """The history described in the module docstring; returns every commit, newest first."""
    t = BASE_TIME
    repo.git("config", "gc.auto", "0")
    repo.commit({"src/HttpAdapter.py": "class HttpAdapter:\n    def parseConfigFile(self): pass\n",
                 ".mailmap": "Ada Author <ada@example.com> <old-ada@example.com>\n"},
                "Add the HttpAdapter with parseConfigFile", t)
    repo.commit({"docs/说明.md": "修复数据库连接超时问题\n"},
                "修复数据库连接超时问题\n\n更新用户手册", t + DAY,
                author=("Old Ada", "old-ada@example.com"))
    repo.commit({"img/logo.png": bytes(range(256)) * 8 + b"\x00\x01binary"},
                "Add a binary logo", t + 2 * DAY)
    repo.commit({"long.txt": "".join(f"line {n} someCamelCase v1.{n}\n" for n in range(60))},
                "A long diff\n\nBody with getHTTPResponseCode and utf8Decode.", t + 3 * DAY)
    repo.commit({"bad.txt": b"caf\xe9 latin-1 bytes\n"}, "Latin-1 content", t + 4 * DAY)
    repo.git("mv", "src/HttpAdapter.py", "src/http_adapter.py")
    repo.commit(None, "Rename the adapter module", t + 5 * DAY)
    repo.commit(None, "An empty commit", t + 6 * DAY)
    (repo.path / "long.txt").chmod(0o755)
    repo.commit({"img/logo.png": None}, "Make long.txt executable, drop the logo", t + 7 * DAY)
    head = repo.head()
    broken = _raw_commit(repo, head, b"Caf\xe9 cr\xe8me fix\n\nD\xe9tails \xe0 suivre.\n")
    latin = _raw_commit(repo, broken, b"Caf\xe9 encod\xe9\n", header=b"encoding ISO-8859-1\n")
    repo.git("reset", "-q", "--hard", latin)
    repo.branch("topic")
    for n in range(5):
        repo.commit({f"topic/file{n}.py": f"def topicFunction{n}():\n    return {n}\n"},
                    f"Topic change number {n} with someIdentifier{n}", t + (8 + n) * DAY)
    repo.checkout("main")
    repo.commit({"main.txt": "on main\n"}, "Main moves on", t + 14 * DAY)
    repo.merge("topic", message="Merge branch 'topic'", date=t + 15 * DAY)
    repo.branch("side-a", "main~1")
    repo.commit({"a.txt": "a\n"}, "side a", t + 16 * DAY)
    repo.branch("side-b", "main~1")
    repo.commit({"b.txt": "b\n"}, "side b", t + 17 * DAY)
    repo.checkout("main")
    repo.merge("side-a", "side-b", message="Octopus merge", date=t + 18 * DAY)
    lost = repo.commit({"lost.txt": "this blob will vanish\n"}, "add lost file", t + 19 * DAY)
    repo.commit({"after.txt": "after the lost one\n"}, "after lost", t + 20 * DAY)
    blob = repo.git("rev-parse", f"{lost}:lost.txt")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    repo.git("tag", "v1.0", "main~2")
    return repo.git("rev-list", "--branches", "--tags", "--topo-order").split()


def _batches(hashes: Sequence[str], size: int) -> list[list[str]]:
    return [list(hashes[i : i + size]) for i in range(0, len(hashes), size)]


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, GitRepo, list[str]]:
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "repo")
    return ws, repo, _build(repo)


@pytest.mark.parametrize("size", [1, 3, 7, 1000])
@pytest.mark.parametrize("max_lines", [5, 200])
def test_stream_batches_equal_the_reference_commit_by_commit(
    history: tuple[Path, GitRepo, list[str]], size: int, max_lines: int
) -> None:
    _, repo, hashes = history
    git_dir = repo.path / ".git"
    mailmap = repo.path / ".mailmap"
    batches = _batches(hashes, size)
    batches.insert(1, [])  # an empty batch gives an empty list, in place
    got = list(gitlog.stream_batches(git_dir, batches, delta_max_lines=max_lines,
                                     mailmap=mailmap, patch_ids=True))
    assert [len(b) for b in got] == [len(b) for b in batches]
    want = [
        [dataclasses.asdict(c) for c in reference_log.stream_commits(
            git_dir, batch, delta_max_lines=max_lines, mailmap=mailmap, patch_ids=True)]
        for batch in batches
    ]
    assert [[dataclasses.asdict(c) for c in b] for b in got] == want
    flat = [c for b in want for c in b]
    # the history really holds what the docstring says (else the comparison proves less)
    assert any(c["delta_missing"] for c in flat)
    assert any(c["decode_errors"] for c in flat)
    assert any(len(c["parents"]) > 2 for c in flat)
    assert any(c["patch_id"] for c in flat)
    assert any("Binary files" in c["delta"] for c in flat)
    assert any(c["author_raw"] != f"{c['author_name']} <{c['author_email']}>" for c in flat)
    # and without patch-ids (no holding back): the same commits
    plain = [c for b in gitlog.stream_batches(git_dir, batches, delta_max_lines=max_lines,
                                              mailmap=mailmap) for c in b]
    assert [dataclasses.asdict(c) for c in plain] == [
        {**c, "patch_id": None} for c in flat]


def _reference_batches(
    git_dir: Path, batches: Sequence[Sequence[str]], *, delta_max_lines: int = 200,
    mailmap: Path | None = None, patch_ids: bool = False, diff_keys: object = None,
) -> Iterator[list[gitlog.LogCommit]]:
    """``stream_batches`` as the old indexer read: one reference ``stream_commits`` per batch
    (``diff_keys`` ignored: git diffs every commit)."""
    for batch in batches:
        yield [gitlog.LogCommit(**dataclasses.asdict(c)) for c in reference_log.stream_commits(
            git_dir, batch, delta_max_lines=delta_max_lines, mailmap=mailmap,
            patch_ids=patch_ids)]


def _reference_index(ws: Path, db: Path, batch_size: int, monkeypatch: pytest.MonkeyPatch,
                     tmp: Path) -> dict[str, list[tuple[object, ...]]]:
    """The index of ``ws`` read through the reference reader, FTS5 rebuilt in SQL."""
    with monkeypatch.context() as mp:
        mp.setattr(indexer_module, "stream_batches", _reference_batches)
        Indexer(ws).run(batch_size=batch_size)
    ref = tmp / f"reference-{batch_size}.db"
    ref.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(ref) as dest:
        src.backup(dest)
    with open_store(ref) as store, store.atomic() as conn:
        rebuild_commit_fts(conn)
    return rows(sqlite3.connect(ref))


@pytest.mark.parametrize("batch_size", [1, 3, 2000])
def test_index_rows_equal_the_reference(
    history: tuple[Path, GitRepo, list[str]], batch_size: int, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws, _repo, hashes = history
    indexer = Indexer(ws)
    report = indexer.run(batch_size=batch_size)
    assert report.repositories[0].missing_object_commits == 1
    fast = rows(sqlite3.connect(indexer.db_path))
    indexer.db_path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(indexer.db_path) + suffix).unlink(missing_ok=True)
    slow = _reference_index(ws, indexer.db_path, batch_size, monkeypatch, tmp_path)
    assert len(fast["git_commits"]) == len(hashes)
    assert fast["commit_fts"], "no terms: the comparison would prove nothing"
    for table in slow:
        assert fast[table] == slow[table], table
    assert digests(fast) == digests(slow)


@pytest.mark.parametrize("text", [
    "", "0", "1700000000", "253402300799", "253402300800", "9" * 20, "9" * 21, " 17", "17 ",
    "-5", "+5", "1e9", "١٢٣", "\u00a017", "12\x0b", "0001", "abc", "修复",
])
def test_time_text_equals_the_bytes_parser(text: str) -> None:
    assert gitlog._parse_time_text(text) == gitlog.parse_time(text.encode())
