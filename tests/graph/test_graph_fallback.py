"""LIKE fallback: a SQLite without FTS5 (simulated with an authorizer that refuses to create
FTS5 tables, so every statement still runs on real SQLite), and LIKE's own escaping."""

from __future__ import annotations

from pathlib import Path

from gitquarry.config import GraphConfig
from gitquarry.graph import graph_status, has_fts5, reindex_graph, search_like, search_nodes
from gitquarry.store import Store, open_store
from gitquarry.store.schema.graph import fts5_available

from .conftest import open_store_without_fts5


def test_schema_is_created_without_fts5(no_fts5_store: Store) -> None:
    conn = no_fts5_store.conn
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"nodes", "edges", "docs", "chunks", "doc_links", "graph_sources"} <= tables
    assert "search_index" not in tables
    assert fts5_available(conn) is False
    assert "graph_0001_init" in {r[0] for r in conn.execute("SELECT name FROM _migrations")}


def test_reindex_without_fts5_indexes_plain_tables(no_fts5_store: Store, project: Path) -> None:
    report = reindex_graph(no_fts5_store, project, GraphConfig())
    assert report.fts5 is False and report.search_rows == 0
    assert report.nodes == 6 and report.chunks > 0
    assert has_fts5(no_fts5_store.conn) is False
    assert graph_status(no_fts5_store).fts5 is False


def test_search_without_fts5_runs_like(no_fts5_store: Store, project: Path) -> None:
    reindex_graph(no_fts5_store, project, GraphConfig())
    statements: list[str] = []
    no_fts5_store.conn.set_trace_callback(statements.append)
    try:
        results, engine = search_nodes(no_fts5_store.conn, "zeppelin")
    finally:
        no_fts5_store.conn.set_trace_callback(None)
    assert engine == "like"
    assert [r.ref_id for r in results] == ["mcp-server"]
    assert any("LIKE" in s and "FROM nodes n" in s for s in statements)
    assert results[0].to_dict() == {
        "ref_id": "mcp-server",
        "kind": "service",
        "summary": "MCP server exposing tools to agents",
    }


def test_like_searches_ref_id_summary_and_chunks(no_fts5_store: Store, project: Path) -> None:
    reindex_graph(no_fts5_store, project, GraphConfig())
    conn = no_fts5_store.conn
    assert [r.ref_id for r in search_like(conn, "node-rec")] == ["node-record"]
    assert [r.ref_id for r in search_like(conn, "INTERFACE")] == ["cli"]
    assert [r.ref_id for r in search_like(conn, "breadth")] == ["context-oracle"]
    # every word must match somewhere in the node
    assert [r.ref_id for r in search_like(conn, "zeppelin stdio")] == ["mcp-server"]
    assert search_like(conn, "zeppelin breadth") == []


def test_like_kind_filter_and_limit(no_fts5_store: Store, project: Path) -> None:
    reindex_graph(no_fts5_store, project, GraphConfig())
    conn = no_fts5_store.conn
    services = search_like(conn, "search", kind="service")
    assert {r.ref_id for r in services} == {"cli", "mcp-server"}
    assert len(search_like(conn, "search", limit=1)) == 1
    assert search_like(conn, "search", kind="adr") == []


def test_like_treats_percent_and_underscore_literally(no_fts5_store: Store, make_project) -> None:
    graph = """\
nodes:
  - {ref_id: pct, kind: feature, summary: Covers 100% of cases}
  - {ref_id: thousand, kind: feature, summary: Handles 1000 cases}
  - {ref_id: snake_case, kind: entity, summary: Names in snake case}
  - {ref_id: snakeXcase, kind: entity, summary: Names without underscore}
  - {ref_id: backslash, kind: entity, summary: 'Path a\\b style'}
  - {ref_id: plainab, kind: entity, summary: Path ab style}
"""
    project = make_project(graph, {})
    reindex_graph(no_fts5_store, project, GraphConfig())
    conn = no_fts5_store.conn
    assert [r.ref_id for r in search_like(conn, "100%")] == ["pct"]
    assert [r.ref_id for r in search_like(conn, "%")] == ["pct"]
    assert [r.ref_id for r in search_like(conn, "snake_case")] == ["snake_case"]
    assert [r.ref_id for r in search_like(conn, "_")] == ["snake_case"]
    assert [r.ref_id for r in search_like(conn, "a\\b")] == ["backslash"]


def test_like_with_double_quote(no_fts5_store: Store, project: Path) -> None:
    reindex_graph(no_fts5_store, project, GraphConfig())
    assert search_like(no_fts5_store.conn, 'say "hi"') == []
    assert search_like(no_fts5_store.conn, 'a"b') == []


def test_fts5_table_is_created_once_fts5_is_available(tmp_path: Path, project: Path) -> None:
    path = tmp_path / "later.db"
    with open_store_without_fts5(path) as s:
        reindex_graph(s, project, GraphConfig())
        assert has_fts5(s.conn) is False
    with open_store(path) as s:  # a SQLite with FTS5 opens the same file
        results, engine = search_nodes(s.conn, "zeppelin")
        assert engine == "like" and [r.ref_id for r in results] == ["mcp-server"]
        report = reindex_graph(s, project, GraphConfig())
        assert report.fts5 is True and report.search_rows == 6
        results, engine = search_nodes(s.conn, "zeppelin")
        assert engine == "fts5" and results[0].snippet


def test_whole_index_opens_without_fts5_and_history_says_why(no_fts5_store: Store) -> None:
    """The shared index must open on a SQLite without FTS5 (so the graph's LIKE fallback can
    run); commit-history search, which needs FTS5, raises a typed error instead of crashing."""
    import pytest

    from gitquarry.config import Config
    from gitquarry.errors import Fts5UnavailableError
    from gitquarry.history import index_workspace, search_git_history

    tables = {r[0] for r in no_fts5_store.conn.execute("SELECT name FROM sqlite_master")}
    assert "git_commits" in tables and "commit_fts" not in tables
    with pytest.raises(Fts5UnavailableError):
        search_git_history(no_fts5_store, "anything")
    with pytest.raises(Fts5UnavailableError):
        index_workspace(Path(no_fts5_store.path).parent, no_fts5_store, Config())
