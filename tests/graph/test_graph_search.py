"""FTS5 search over graph nodes: the seed's library-level intents plus the issue's fixes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gitquarry.config import GraphConfig
from gitquarry.errors import InvalidArgumentError
from gitquarry.graph import (
    has_fts5,
    populate_search_index,
    reindex_graph,
    search_fts5,
    search_like,
    search_nodes,
)
from gitquarry.graph.search import clear_search_index, escape_like, fts5_sql, like_sql
from gitquarry.retrieval.fts import fts5_match_expression
from gitquarry.store import Store, open_store


def refs(results) -> list[str]:
    return [r.ref_id for r in results]


# --- basic search, fields, kind, limit ------------------------------------------------------


def test_basic_search_finds_node_by_doc_content(indexed: Store) -> None:
    results = search_fts5(indexed.conn, "zeppelin")
    assert refs(results) == ["mcp-server"]


def test_result_has_seed_fields(indexed: Store) -> None:
    (result,) = search_fts5(indexed.conn, "zeppelin")
    data = result.to_dict()
    assert list(data) == ["ref_id", "kind", "summary", "snippet", "rank"]
    assert data["kind"] == "service"
    assert data["summary"] == "MCP server exposing tools to agents"
    assert isinstance(data["rank"], float)
    assert "<b>zeppelin</b>" in data["snippet"].lower()


def test_search_matches_summary_and_ref_id(indexed: Store) -> None:
    assert refs(search_fts5(indexed.conn, "interface")) == ["cli"]
    assert "node-record" in refs(search_fts5(indexed.conn, "record"))


def test_results_ordered_by_rank(indexed: Store) -> None:
    results = search_fts5(indexed.conn, "search")
    assert len(results) >= 2
    ranks = [r.rank for r in results]
    assert ranks == sorted(ranks)
    assert results[0].ref_id == "search"


def test_kind_filter_restricts_results(indexed: Store) -> None:
    every = refs(search_fts5(indexed.conn, "search"))
    assert {"search", "mcp-server"} <= set(every)
    only_services = search_fts5(indexed.conn, "search", kind="service")
    assert only_services and all(r.kind == "service" for r in only_services)
    assert "search" not in refs(only_services)


def test_unknown_kind_returns_empty_list(indexed: Store) -> None:
    assert search_fts5(indexed.conn, "search", kind="galaxy") == []
    assert search_like(indexed.conn, "search", kind="galaxy") == []


def test_limit_caps_results(indexed: Store) -> None:
    assert len(search_fts5(indexed.conn, "search", limit=10)) >= 2
    assert len(search_fts5(indexed.conn, "search", limit=1)) == 1


@pytest.mark.parametrize("limit", [0, -1, 101, 1000])
def test_limit_out_of_range_raises(indexed: Store, limit: int) -> None:
    for fn in (search_fts5, search_like, search_nodes):
        with pytest.raises(InvalidArgumentError) as info:
            fn(indexed.conn, "search", limit=limit)
        assert info.value.argument == "limit"
        assert info.value.exit_code == 2


def test_limit_bounds_accepted(indexed: Store) -> None:
    assert len(search_fts5(indexed.conn, "search", limit=1)) == 1
    assert search_fts5(indexed.conn, "search", limit=100)


# --- empty queries and escaping -------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_query_returns_empty_list(indexed: Store, query: str) -> None:
    assert search_fts5(indexed.conn, query) == []
    assert search_like(indexed.conn, query) == []


def test_empty_query_runs_no_sql(indexed: Store) -> None:
    statements: list[str] = []
    indexed.conn.set_trace_callback(statements.append)
    try:
        assert search_fts5(indexed.conn, "   ") == []
    finally:
        indexed.conn.set_trace_callback(None)
    assert statements == []


def test_escape_quotes_each_word() -> None:
    assert fts5_match_expression("mcp-server status") == '"mcp-server" AND "status"'
    assert fts5_match_expression("  ") == ""
    assert fts5_match_expression('say "hi"') == '"say" AND """hi"""'
    assert fts5_match_expression('a"b') == '"a""b"'


@pytest.mark.parametrize(
    "query",
    ["search*", "mcp-server", "kind:service", "(ranking", "NOT ranking", "a AND", "-", "*", ":"],
)
def test_special_characters_do_not_raise(indexed: Store, query: str) -> None:
    search_fts5(indexed.conn, query)  # no sqlite3.OperationalError


def test_hyphenated_query_matches(indexed: Store) -> None:
    assert "mcp-server" in refs(search_fts5(indexed.conn, "mcp-server"))


@pytest.mark.parametrize("query", ['say "hi"', 'a"b', '"', '"zeppelin"', 'zeppelin"'])
def test_double_quote_in_query_does_not_raise(indexed: Store, query: str) -> None:
    search_fts5(indexed.conn, query)
    search_like(indexed.conn, query)


def test_quoted_word_still_matches(indexed: Store) -> None:
    assert refs(search_fts5(indexed.conn, '"zeppelin"')) == ["mcp-server"]


def test_operator_words_are_literal(indexed: Store) -> None:
    # "OR" is a word here, not an operator: nothing holds both "zeppelin" and "or".
    assert search_fts5(indexed.conn, "zeppelin OR ranking") == []


# --- snippets -------------------------------------------------------------------------------


def test_snippet_marks_matched_terms(indexed: Store) -> None:
    (result,) = search_fts5(indexed.conn, "zeppelin")
    assert "<b>" in result.snippet and "</b>" in result.snippet
    assert result.snippet.count("<b>") == result.snippet.count("</b>")
    assert "\n" not in result.snippet


def test_snippet_is_bounded_to_32_tokens(store: Store, make_project) -> None:
    long_doc = "# Long\n\n## Body\n" + " ".join(f"word{i}" for i in range(300)) + " needle\n"
    graph = "nodes:\n  - {ref_id: big, kind: feature, summary: Big, docs: [docs/big.md]}\n"
    project = make_project(graph, {"docs/big.md": long_doc})
    reindex_graph(store, project, _config())
    (result,) = search_fts5(store.conn, "needle")
    assert "<b>needle</b>" in result.snippet
    assert result.snippet.startswith("...")
    plain = result.snippet.replace("<b>", "").replace("</b>", "").replace("...", " ")
    assert len(plain.split()) <= 32


def test_summary_only_match_snippet_falls_back_to_highlighted_summary(indexed: Store) -> None:
    (result,) = search_fts5(indexed.conn, "interface")  # cli: no docs, summary only
    assert result.snippet == "Command line <b>interface</b> to search"
    (result,) = search_fts5(indexed.conn, "agents", kind="service")
    # mcp-server has docs, but "agents" appears in its summary and its doc: content wins.
    assert "<b>agents</b>" in result.snippet


def test_summary_match_with_docs_uses_highlighted_summary(indexed: Store) -> None:
    # "resolving" is only in context-oracle's summary, not in its doc.
    (result,) = search_fts5(indexed.conn, "resolving")
    assert result.ref_id == "context-oracle"
    assert result.snippet == "Context oracle <b>resolving</b> architecture questions"


def test_ref_id_only_match_snippet_is_summary(indexed: Store) -> None:
    (result,) = search_fts5(indexed.conn, "adr-001-sqlite")
    assert result.ref_id == "adr-001-sqlite"
    assert result.snippet  # never empty
    assert result.snippet.startswith("Use SQLite") or "<b>" in result.snippet


def test_literal_b_tags_in_docs_are_not_markers(store: Store, make_project) -> None:
    graph = "nodes:\n  - {ref_id: html, kind: feature, summary: Html, docs: [docs/h.md]}\n"
    project = make_project(graph, {"docs/h.md": "## Tags\nuse <b>bold</b> markup wisely\n"})
    reindex_graph(store, project, _config())
    (result,) = search_fts5(store.conn, "wisely")
    assert "<b>wisely</b>" in result.snippet


def test_heading_only_match(indexed: Store) -> None:
    # "traversal" appears only in a ## heading of the context-oracle doc.
    (result,) = search_fts5(indexed.conn, "traversal")
    assert result.ref_id == "context-oracle"
    assert "## Graph <b>traversal</b>" in result.snippet


def test_searching_word_service_does_not_match_every_service(indexed: Store) -> None:
    # kind is UNINDEXED: the word "service" in a query is not matched against kind.
    assert search_fts5(indexed.conn, "service") == []
    assert search_fts5(indexed.conn, "domain") == []


def test_unlinked_docs_are_not_returned_as_nodes(indexed: Store) -> None:
    # "quasar" only occurs in docs/guides/onboarding.md, which no node lists.
    assert search_fts5(indexed.conn, "quasar") == []
    assert search_like(indexed.conn, "quasar") == []


# --- has_fts5 and populate ------------------------------------------------------------------


def test_has_fts5_true_when_populated(indexed: Store) -> None:
    assert has_fts5(indexed.conn) is True


def test_has_fts5_false_when_empty(store: Store) -> None:
    assert store.conn.execute("SELECT count(*) FROM search_index").fetchone()[0] == 0
    assert has_fts5(store.conn) is False


def test_has_fts5_false_when_table_missing() -> None:
    conn = sqlite3.connect(":memory:")
    assert has_fts5(conn) is False


def test_populate_is_idempotent(indexed: Store) -> None:
    first = populate_search_index(indexed.conn)
    second = populate_search_index(indexed.conn)
    assert first == second == 6
    count = indexed.conn.execute("SELECT count(*) FROM search_index").fetchone()[0]
    assert count == 6


def test_every_node_gets_a_row_even_without_docs(indexed: Store) -> None:
    row = indexed.conn.execute("SELECT content FROM search_index WHERE ref_id = 'cli'").fetchone()
    assert row is not None and row[0] == ""


def test_content_joins_the_nodes_chunks(indexed: Store) -> None:
    (content,) = indexed.conn.execute(
        "SELECT content FROM search_index WHERE ref_id = 'search'"
    ).fetchone()
    assert "## Ranking" in content and "## Query escaping" in content
    assert content.index("Ranking") < content.index("Query escaping")


def test_populate_survives_reopen(tmp_path: Path, project: Path) -> None:
    path = tmp_path / "reopen.db"
    with open_store(path) as s:
        reindex_graph(s, project, _config())
    with open_store(path) as s:
        assert refs(search_fts5(s.conn, "zeppelin")) == ["mcp-server"]


def test_search_nodes_uses_fts5_when_populated(indexed: Store) -> None:
    results, engine = search_nodes(indexed.conn, "zeppelin")
    assert engine == "fts5" and refs(results) == ["mcp-server"]


def test_search_nodes_uses_like_when_index_empty(indexed: Store) -> None:
    clear_search_index(indexed.conn)
    results, engine = search_nodes(indexed.conn, "zeppelin")
    assert engine == "like" and refs(results) == ["mcp-server"]
    assert results[0].snippet is None and results[0].rank is None
    assert list(results[0].to_dict()) == ["ref_id", "kind", "summary"]


# --- SQL built by pure functions ------------------------------------------------------------


def test_fts5_sql_verbatim() -> None:
    # issue 22 (lever 5): ordered by name tier first, then BM25 (was: ORDER BY rank, ref_id)
    assert fts5_sql(with_kind=False) == (
        "SELECT ref_id, kind, summary,"
        " snippet(search_index, 3, char(2), char(3), '...', 32) AS snippet,"
        " highlight(search_index, 2, char(2), char(3)) AS summary_hl,"
        " bm25(search_index, 1, 0, 1, 1) AS score,"
        " CASE WHEN rowid IN (SELECT rowid FROM search_index WHERE search_index MATCH ?)"
        " THEN 0 WHEN rowid IN (SELECT rowid FROM search_index WHERE search_index MATCH ?)"
        " THEN 1 ELSE 2 END AS tier"
        " FROM search_index WHERE search_index MATCH ? ORDER BY tier, score, ref_id LIMIT ?"
    )
    assert " WHERE search_index MATCH ? AND kind = ? ORDER BY" in fts5_sql(with_kind=True)


def test_like_sql_shape() -> None:
    sql = like_sql(words=2, with_kind=True)
    assert sql.startswith("SELECT n.ref_id, n.kind, n.summary FROM nodes n WHERE n.kind = ? AND (")
    assert sql.count("LIKE ? ESCAPE '\\'") == 6
    assert sql.endswith(" ORDER BY n.ref_id LIMIT ?")


def test_escape_like() -> None:
    assert escape_like("100%") == "100\\%"
    assert escape_like("snake_case") == "snake\\_case"
    assert escape_like("a\\b") == "a\\\\b"


def _config():
    from gitquarry.config import GraphConfig

    return GraphConfig()


# --- issue 22, lever 5: a node whose id or summary names the query comes first ---------------

NAMED_GRAPH = """\
nodes:
  - ref_id: context-oracle
    kind: domain
    summary: Bundle building by graph traversal
    docs: [docs/oracle.md]
  - ref_id: context-builder
    kind: component
    summary: Builds bundles for the context oracle
    docs: [docs/builder.md]
  - ref_id: overview
    kind: service
    summary: The whole product
    docs: [docs/overview.md]
"""
NAMED_DOCS = {
    "docs/oracle.md": "# Oracle\n\nWalks the graph.\n",
    "docs/builder.md": "# Builder\n\nThe context oracle asks the context oracle builder; "
                       "context oracle, context oracle, context oracle.\n",
    "docs/overview.md": "# Overview\n\n" + "The context oracle answers. " * 30 + "\n",
}


def test_node_named_by_the_query_ranks_first(make_project, store: Store,
                                             config: GraphConfig) -> None:
    reindex_graph(store, make_project(NAMED_GRAPH, NAMED_DOCS), config)
    results = search_fts5(store.conn, "context oracle")
    # id names the query, then the summary does, then a node whose docs only mention it
    assert refs(results) == ["context-oracle", "context-builder", "overview"]
    ranks = [r.rank for r in results]
    assert ranks == sorted(ranks)  # ranks never decrease down the list
    # BM25 alone put the documents' mentions first (the previous ordering)
    plain = [ref for (ref,) in store.conn.execute(
        "SELECT ref_id FROM search_index WHERE search_index MATCH ? ORDER BY rank",
        (fts5_match_expression("context oracle"),))]
    assert plain[0] != "context-oracle"


def test_name_tiers_respect_kind_filter_and_limit(make_project, store: Store,
                                                  config: GraphConfig) -> None:
    reindex_graph(store, make_project(NAMED_GRAPH, NAMED_DOCS), config)
    assert refs(search_fts5(store.conn, "context oracle", kind="component")) == [
        "context-builder"]
    assert refs(search_fts5(store.conn, "context oracle", limit=1)) == ["context-oracle"]
