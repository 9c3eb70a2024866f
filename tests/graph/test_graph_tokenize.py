"""Issue 7 §4 on the architecture-graph corpus: the shared tokenisation finds CJK text,
identifier parts and versions in node ids, summaries and docs; snippets show the raw text;
an index built with the old tokenisation is rebuilt by the next search."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gitquarry.config import GraphConfig
from gitquarry.graph import reindex_graph, search_fts5
from gitquarry.graph.indexer import refresh_if_stale
from gitquarry.store import open_store

GRAPH = """\
nodes:
  - ref_id: config-loader
    kind: feature
    summary: Loads settings through parseConfigFile
    docs: [docs/loader.md]
  - ref_id: HttpAdapter
    kind: service
    summary: Transport layer
  - ref_id: zh-notes
    kind: domain
    summary: 修复数据库连接超时问题
  - ref_id: releases
    kind: domain
    summary: Release notes
    docs: [docs/releases.md]
"""

DOCS = {
    "docs/loader.md": """\
        # Loader

        ## Reading
        The loader calls readSettingsFromDisk once at start, then watches the file.
        """,
    "docs/releases.md": """\
        # Releases

        ## 2.0.1
        Fixed the データベース接続 timeout. Tagged v3.0.0 later.
        """,
}


@pytest.fixture
def graph_store(tmp_path: Path, make_project):
    project = make_project(GRAPH, DOCS)
    with open_store(tmp_path / "g" / "index.db") as store:
        reindex_graph(store, project, GraphConfig())
        yield store, project


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("config", ["config-loader"]),
        ("parseConfigFile", ["config-loader"]),
        ("settings", ["config-loader"]),
        ("disk", ["config-loader"]),
        ("adapter", ["HttpAdapter"]),
        ("数据库", ["zh-notes"]),
        ("接続", ["releases"]),
        ("v2.0.1", ["releases"]),
        ("3.0.0", ["releases"]),
    ],
)
def test_graph_search_uses_the_shared_tokenisation(graph_store, query, expected):
    store, _ = graph_store
    assert [r.ref_id for r in search_fts5(store.conn, query)] == expected


def test_snippets_show_the_raw_text(graph_store):
    store, _ = graph_store
    (result,) = search_fts5(store.conn, "watches")
    assert "<b>watches</b>" in result.snippet
    (result,) = search_fts5(store.conn, "disk")  # matches only inside readSettingsFromDisk
    assert "read Settings From Disk" not in result.snippet
    (result,) = search_fts5(store.conn, "3.0.0")
    assert "v3.0.0" in result.snippet or result.snippet == result.summary


def test_old_graph_index_is_rebuilt_by_the_next_search(tmp_path: Path, make_project):
    project = make_project(GRAPH, DOCS)
    db = tmp_path / "old" / "index.db"
    with open_store(db) as store:
        reindex_graph(store, project, GraphConfig())
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TABLE search_index")
    conn.execute("DROP TABLE search_docs")
    conn.execute(
        "CREATE VIRTUAL TABLE search_index USING fts5("
        "ref_id, kind UNINDEXED, summary, content, tokenize='porter unicode61')"
    )
    conn.execute(
        "INSERT INTO search_index SELECT ref_id, kind, summary, '' FROM nodes"
    )
    conn.execute("DELETE FROM _migrations WHERE name = 'graph_0002_tokenize_v2'")
    count = conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]
    conn.execute(f"PRAGMA user_version = {count}")
    conn.close()
    with open_store(db) as store:
        assert refresh_if_stale(store, project, GraphConfig()) is not None
        assert [r.ref_id for r in search_fts5(store.conn, "数据库")] == ["zh-notes"]
        assert [r.ref_id for r in search_fts5(store.conn, "config")] == ["config-loader"]
