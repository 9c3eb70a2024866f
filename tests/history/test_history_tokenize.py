"""Issue 7 §4: commit search finds words the way developers write them — CJK, camelCase /
PascalCase parts, versions with and without ``v`` — in titles, messages, diffs and file
names, on a real repository; and an index built with the old tokenisation is rebuilt."""

from __future__ import annotations

import sqlite3

import pytest

from gitquarry.history.search.engine import search_git_history
from gitquarry.store import open_store
from gitquarry.store.compression import register_functions as register_compression
from gitquarry.store.migrations import run_script
from gitquarry.store.schema.history import _COMMIT_FTS_DDL_V1

from .conftest import BASE_TIME, GitRepo, Indexer

DAY = 86_400

COMMITS = {
    "zh": ({"db.py": "x = 1\n"}, "修复数据库连接超时问题"),
    "ja": ({"ja.txt": "a\n"}, "データベース接続のタイムアウトを修正"),
    "ko": ({"ko.txt": "a\n"}, "데이터베이스 연결 시간 초과 수정"),
    "zh_body": ({"zh.txt": "a\n"}, "Update docs\n\n更新用户手册中的安装说明"),
    "zh_diff": ({"docs/zh.md": "配置文件的默认路径已更改\n"}, "Add Chinese notes"),
    "zh_file": ({"文档/说明.md": "hello\n"}, "Add a document"),
    "camel": ({"cfg.py": "a = 1\n"}, "Refactor parseConfigFile to stream input"),
    "spaced": ({"notes.txt": "a\n"}, "Parse config file before start"),
    "pascal_file": ({"src/HttpAdapter.py": "class X: pass\n"}, "Add the transport"),
    "diff_ident": ({"app.js": "function loadUserProfile(id) {\n  return fetchJSON(id)\n}\n"},
                   "Add the loader"),
    "acronym": ({"net.js": "new XMLHttpRequest()\n"}, "Polyfill for old browsers"),
    "v201": ({"NEWS": "2.0.1\n"}, "release 2.0.1"),
    "v300": ({"CHANGES": "3.0.0\n"}, "release v3.0.0"),
    "diff_version": ({"setup.cfg": "version = v4.5.6\n"}, "Bump the package"),
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    ws = tmp_path_factory.mktemp("tok")
    repo = GitRepo(ws / "repo")
    hashes = {
        key: repo.commit(files, message, BASE_TIME + n * DAY)
        for n, (key, (files, message)) in enumerate(COMMITS.items())
    }
    indexer = Indexer(ws)
    indexer.run()
    return hashes, indexer


def found(indexer: Indexer, query: str) -> list[str]:
    with indexer.open() as store:
        response = search_git_history(store, query, mode="lexical", top_n=20)
    return [r.hash for r in response.results]


@pytest.mark.parametrize(
    ("query", "keys"),
    [
        # CJK in titles, messages, diffs and file names
        ("数据库", {"zh"}),
        ("超时", {"zh"}),
        ("连接超时", {"zh"}),
        ("データベース", {"ja"}),
        ("接続", {"ja"}),
        ("데이터", {"ko"}),
        ("연결", {"ko"}),
        ("安装说明", {"zh_body"}),
        ("配置文件", {"zh_diff"}),
        ("文档", {"zh_file"}),
        # camelCase / PascalCase parts in messages, diffs and file names
        ("config", {"camel", "spaced"}),
        ("parseConfigFile", {"camel", "spaced"}),
        ("adapter", {"pascal_file"}),
        ("HttpAdapter.py", {"pascal_file"}),
        ("profile", {"diff_ident"}),
        ("loadUserProfile", {"diff_ident"}),
        ("json", {"diff_ident"}),
        ("request", {"acronym"}),
        # versions with and without v
        ("v2.0.1", {"v201"}),
        ("2.0.1", {"v201"}),
        ("3.0.0", {"v300"}),
        ("v3.0.0", {"v300"}),
        ("4.5.6", {"diff_version"}),
    ],
)
def test_developer_words_are_found(indexed, query, keys):
    hashes, indexer = indexed
    assert set(found(indexer, query)) == {hashes[k] for k in keys}


def test_exact_identifier_ranks_first(indexed):
    hashes, indexer = indexed
    assert found(indexer, "parseConfigFile") == [hashes["camel"], hashes["spaced"]]
    assert found(indexer, "parse config file")[0] == hashes["spaced"]


def test_cli_finds_the_issue_inputs(indexed, cli):
    hashes, indexer = indexed
    for query, key in (("数据库", "zh"), ("config", "camel"), ("v2.0.1", "v201")):
        code, out, _ = cli("history", query, "--project", str(indexer.root), "--mode",
                           "lexical", "--json")
        assert code == 0 and hashes[key] in out


def _downgrade_to_v1(db_path) -> None:
    """Make ``db_path`` look like an index written before tokenisation v2: diffs stored as
    text, the old external-content FTS5 table over raw text, and migrations 0004 and 0007 not
    recorded."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    register_compression(conn)
    conn.execute("BEGIN")
    for trigger in ("git_commits_ad", "git_commits_au"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("UPDATE git_commits SET delta_truncated = gq_inflate(delta_truncated)")
    conn.execute("DROP TABLE commit_fts")
    run_script(conn, _COMMIT_FTS_DDL_V1)
    conn.execute("DROP TRIGGER git_commits_ai")
    conn.execute("INSERT INTO commit_fts (commit_fts) VALUES ('rebuild')")
    conn.execute("DELETE FROM _migrations WHERE name IN "
                 "('history_0004_tokenize_v2', 'history_0007_compact_diffs')")
    count = conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]
    conn.execute(f"PRAGMA user_version = {count}")
    conn.execute("COMMIT")
    conn.close()


def test_old_index_is_rebuilt_on_open(make_repo, indexer):
    repo = make_repo()
    zh = repo.commit({"a.txt": "a\n"}, "修复数据库连接超时问题")
    camel = repo.commit({"b.txt": "b\n"}, "Refactor parseConfigFile to stream input")
    indexer.run()
    _downgrade_to_v1(indexer.db_path)
    raw = sqlite3.connect(indexer.db_path)
    old = raw.execute("SELECT rowid FROM commit_fts WHERE commit_fts MATCH 'config'").fetchall()
    raw.close()
    assert old == []  # the old tokenisation really misses it
    assert found(indexer, "数据库") == [zh]
    assert found(indexer, "config") == [camel]
    with indexer.open() as store:
        names = [r[0] for r in store.conn.execute("SELECT name FROM _migrations")]
        assert {"history_0004_tokenize_v2", "history_0007_compact_diffs"} <= set(names)
        assert store.conn.execute("SELECT count(*) FROM commit_fts").fetchone()[0] == 2
        kinds = {r[0] for r in store.conn.execute(
            "SELECT typeof(delta_truncated) FROM git_commits")}
        assert kinds == {"blob"}  # diffs compressed by migration 0007
    assert indexer.row(zh)["delta_truncated"] == repo.show(zh)
    assert found(indexer, "a.txt") == [zh]  # paths found through files_changed


def test_delete_and_update_triggers_keep_the_index_exact(make_repo, indexer):
    """The contentless index is updated through triggers that recompute the index text: after
    a commit's text changes or it is deleted, no stale token still matches it."""
    repo = make_repo()
    keep = repo.commit({"a.txt": "a\n"}, "Keep getUserName here")
    gone = repo.commit({"b.txt": "b\n"}, "Drop fetchAccountList there")
    indexer.run()
    with open_store(indexer.db_path) as store, store.atomic() as conn:
        conn.execute("UPDATE git_commits SET title = 'Renamed loadOrderItems' WHERE hash = ?",
                     (keep,))
        conn.execute("DELETE FROM git_commits WHERE hash = ?", (gone,))
        conn.execute("INSERT INTO commit_fts (commit_fts) VALUES ('integrity-check')")
    assert found(indexer, "user") == []
    assert found(indexer, "account") == []
    assert found(indexer, "order") == [keep]
