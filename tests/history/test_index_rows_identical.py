"""Issue 21 §4: the indexing speed-ups change cost, never the index.

The indexer writes each batch's ``commit_fts`` rows from the texts in memory
(``store.schema.history.fts_values``) instead of ``COMMIT_FTS_INSERT_SQL`` over the stored rows
(which decompresses every diff again and calls back into Python per column). The reference
here is that statement: the same index rebuilt from the stored rows (``rebuild_commit_fts``),
compared term by term, commit by commit, column by column and offset by offset
(``fts5vocab`` instance rows), with every other table of the index (``benchmarks/index_rows.py``).
The repository holds what the tokenisation treats specially (camelCase, CJK, versions,
invalid UTF-8, a rename, a merge with a first-parent diff, an empty commit) and spans several
batches, plus an incremental run and a commit whose copy is completed later.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from gitquarry.store import open_store
from gitquarry.store.schema.history import COMMIT_FTS_INSERT_SQL, fts_values, rebuild_commit_fts

from .conftest import BASE_TIME, GitRepo, Indexer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from index_rows import digests, rows

DAY = 86_400


def _build(repo: GitRepo) -> None:
    t = BASE_TIME
    repo.commit({"src/HttpAdapter.py":
                 "class HttpAdapter:\n    def parseConfigFile(self): pass\n"},
                "Add the HttpAdapter with parseConfigFile", t)
    repo.commit({"docs/说明.md": "修复数据库连接超时问题\n"},
                "修复数据库连接超时问题\n\n更新用户手册", t + DAY)
    repo.commit({"NEWS": "v2.0.1 released; see V3.1 and XMLHttpRequest\n"},
                "release v2.0.1\n\nBody with getHTTPResponseCode and utf8Decode.", t + 2 * DAY)
    repo.commit({"bad.txt": b"caf\xe9 latin-1 bytes\n"}, "Latin-1 content", t + 3 * DAY)
    repo.git("mv", "src/HttpAdapter.py", "src/http_adapter.py")
    repo.commit(None, "Rename the adapter module", t + 4 * DAY)
    repo.commit(None, "An empty commit", t + 5 * DAY)
    repo.branch("topic")
    repo.checkout("topic")
    for n in range(7):
        repo.commit({f"topic/file{n}.py": f"def topicFunction{n}():\n    return {n}\n"},
                    f"Topic change number {n} with someIdentifier{n}", t + (6 + n) * DAY)
    repo.checkout("main")
    repo.commit({"main.txt": "on main\n"}, "Main moves on", t + 14 * DAY)
    repo.merge("topic", message="Merge branch 'topic'", date=t + 15 * DAY)


def _same_as_rebuilt(db: Path, tmp: Path) -> None:
    ref = tmp / "reference.db"
    ref.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(ref) as dest:
        src.backup(dest)  # the WAL's pages too
    with open_store(ref) as store, store.atomic() as conn:
        rebuild_commit_fts(conn)
    fast = rows(sqlite3.connect(db))
    slow = rows(sqlite3.connect(ref))
    assert fast["commit_fts"], "the index holds no terms: the comparison would prove nothing"
    for table in slow:
        assert fast[table] == slow[table], table
    assert digests(fast) == digests(slow)


@pytest.mark.parametrize("batch_size", [1, 3, 2000])
def test_fts_rows_written_from_memory_equal_the_sql_reference(tmp_path: Path,
                                                               batch_size: int) -> None:
    ws = tmp_path / "ws"
    repo = GitRepo(ws / "repo")
    _build(repo)
    indexer = Indexer(ws)
    indexer.run(batch_size=batch_size)
    _same_as_rebuilt(indexer.db_path, tmp_path)
    # an incremental run over new commits appends to the same index
    repo.commit({"later.py": "def laterCall(): pass\n"}, "Later laterCall v9.9",
                BASE_TIME + 30 * DAY)
    indexer.run(batch_size=batch_size)
    _same_as_rebuilt(indexer.db_path, tmp_path)


def test_fts_values_equal_the_sql_functions_on_stored_rows(tmp_path: Path) -> None:
    """``fts_values`` of each stored row's texts equals the SQL of ``COMMIT_FTS_INSERT_SQL``
    (the same functions, here compared value by value rather than through FTS5)."""
    ws = tmp_path / "ws"
    _build(GitRepo(ws / "repo"))
    indexer = Indexer(ws)
    indexer.run()
    select = COMMIT_FTS_INSERT_SQL.split("SELECT", 1)[1].replace("c.id >= ?", "1")
    with indexer.open() as store:
        conn = store.conn
        sql_rows = {r[0]: tuple(r[1:]) for r in conn.execute(f"SELECT {select}")}
        stored = conn.execute(
            "SELECT id, title, message, author, committer, files_changed, "
            "gq_inflate(delta_truncated) FROM git_commits").fetchall()
    assert len(stored) == len(sql_rows) >= 10
    for row in stored:
        assert fts_values(*row[1:]) == sql_rows[row[0]]


@pytest.mark.parametrize("header", [
    b"a" * 40 + b"\x00" + b"b" * 40 + b" " + b"c" * 40 + b"\x00Ann\x00ann@x\x00Ann M\x00am@x"
    b"\x001700000000\x00Cy\x00cy@x\x00Cy\x00cy@x\x001700000001\x00Title\n\nBody text\n",
    ("d" * 40 + "\x00\x00Zoë 修复\x00z@x\x00Zoë\x00z@x\x00\x00C\x00c@x\x00C\x00c@x\x00"
     "99999999999999999999999\x00修复数据库\n").encode(),
    b"e" * 40 + b"\x00\x00A\x00a@x\x00A\x00a@x\x00-5\x00C\x00c@x\x00C\x00c@x\x00"
    b"1\x00msg\x00with\x00nul",
])
def test_header_decoded_at_once_equals_field_by_field(header: bytes) -> None:
    """The one-call decode of a valid UTF-8 header gives the commit the field-by-field
    parser gives (the reference, still used for headers holding invalid UTF-8)."""
    from gitquarry.gitio.log import _parse_header, _parse_header_fields

    assert _parse_header(header) == _parse_header_fields(header)


def test_header_with_invalid_utf8_takes_the_field_parser() -> None:
    from gitquarry.gitio.log import _parse_header

    header = (b"f" * 40 + b"\x00\x00Caf\xe9\x00a@x\x00Caf\xe9\x00a@x\x001\x00C\x00c@x\x00C"
              b"\x00c@x\x002\x00ok")
    commit = _parse_header(header)
    assert commit.author_name == "Caf\ufffd" and commit.decode_errors == ["author"]
