"""Reindexing the graph corpus: counts, warnings, unlinked docs, staleness, status."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitquarry.config import GraphConfig
from gitquarry.errors import GraphFileError
from gitquarry.graph import (
    graph_status,
    is_stale,
    refresh_if_stale,
    reindex_graph,
    reindex_if_present,
    search_fts5,
)
from gitquarry.store import Store, open_store


def test_report_counts(store: Store, project: Path, config: GraphConfig) -> None:
    report = reindex_graph(store, project, config)
    assert (report.nodes, report.edges, report.docs) == (6, 3, 5)
    assert report.unlinked_docs == 1
    assert report.search_rows == 6 and report.fts5 is True
    assert report.chunks == store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert report.warnings == ()
    assert set(report.to_dict()) >= {"nodes", "edges", "docs", "chunks", "warnings"}


def test_rows_survive_reopen(tmp_path: Path, project: Path, config: GraphConfig) -> None:
    path = tmp_path / "i.db"
    with open_store(path) as s:
        reindex_graph(s, project, config)
    with open_store(path) as s:
        row = s.conn.execute(
            "SELECT kind, summary, source, extra, graph_file FROM nodes WHERE ref_id = 'search'"
        ).fetchone()
        assert row["kind"] == "feature"
        assert row["source"] == "src/beadloom/context_oracle/search.py"
        assert json.loads(row["extra"]) == {"owner": "core-team", "tags": ["fts", "bm25"]}
        assert row["graph_file"] == ".beadloom/_graph/graph.yml"
        doc = s.conn.execute(
            "SELECT ref_id FROM docs WHERE path = 'docs/features/search.md'"
        ).fetchone()
        assert doc["ref_id"] == "search"


def test_unlinked_docs_indexed_as_chunks_and_reported(indexed: Store) -> None:
    status = graph_status(indexed)
    assert status.unlinked_docs == ("docs/guides/onboarding.md",)
    n = indexed.conn.execute(
        "SELECT count(*) FROM chunks c JOIN docs d ON d.id = c.doc_id"
        " WHERE d.path = 'docs/guides/onboarding.md'"
    ).fetchone()[0]
    assert n == 2  # the '# Onboarding' preamble and '## First steps'
    data = status.to_dict()
    assert data["nodes"] == 6 and data["edges"] == 3 and data["docs"] == 5
    assert data["fts5"] is True and isinstance(data["last_indexed_at"], int)


def test_status_of_never_indexed_store(store: Store) -> None:
    status = graph_status(store)
    assert status.nodes == 0 and status.last_indexed_at is None and status.fts5 is False


def test_duplicate_ref_id_and_missing_edge_end_warn_rest_indexed(
    store: Store, make_project, config: GraphConfig
) -> None:
    graph = """\
nodes:
  - {ref_id: alpha, kind: service, summary: Alpha service}
  - {ref_id: alpha, kind: feature, summary: Duplicate alpha}
  - {ref_id: beta, kind: feature, summary: Beta feature, docs: [docs/beta.md, docs/gone.md]}
edges:
  - {src: alpha, dst: beta, kind: uses}
  - {src: beta, dst: nowhere, kind: uses}
"""
    project = make_project(graph, {"docs/beta.md": "## Beta\nbeta details\n"})
    report = reindex_graph(store, project, config)
    assert report.nodes == 2 and report.edges == 1 and report.docs == 1
    assert len(report.warnings) == 3
    assert any("duplicate ref_id 'alpha'" in w for w in report.warnings)
    assert any("nowhere" in w for w in report.warnings)
    assert any("docs/gone.md" in w and "does not exist" in w for w in report.warnings)
    (result,) = search_fts5(store.conn, "alpha")
    assert result.summary == "Alpha service"
    assert [r.ref_id for r in search_fts5(store.conn, "details")] == ["beta"]


def test_doc_outside_project_is_skipped(store: Store, make_project, config) -> None:
    graph = "nodes:\n  - {ref_id: a, kind: adr, summary: A, docs: [../../etc/passwd]}\n"
    project = make_project(graph, {})
    report = reindex_graph(store, project, config)
    assert report.docs == 0 and "outside the project" in report.warnings[0]


def test_doc_shared_by_two_nodes_reaches_both(store: Store, make_project, config) -> None:
    graph = (
        "nodes:\n"
        "  - {ref_id: a, kind: domain, summary: A, docs: [docs/shared.md]}\n"
        "  - {ref_id: b, kind: feature, summary: B, docs: [docs/shared.md]}\n"
    )
    project = make_project(graph, {"docs/shared.md": "## Shared\nmarmalade\n"})
    report = reindex_graph(store, project, config)
    assert report.docs == 1 and report.unlinked_docs == 0
    assert {r.ref_id for r in search_fts5(store.conn, "marmalade")} == {"a", "b"}


def test_malformed_graph_leaves_previous_index(
    indexed: Store, project: Path, config: GraphConfig
) -> None:
    (project / ".beadloom/_graph/broken.yaml").write_text("nodes: [oops\n", encoding="utf-8")
    with pytest.raises(GraphFileError) as info:
        reindex_graph(indexed, project, config)
    assert info.value.path.name == "broken.yaml"
    assert [r.ref_id for r in search_fts5(indexed.conn, "zeppelin")] == ["mcp-server"]


def test_reindex_replaces_everything(indexed: Store, project: Path, config: GraphConfig) -> None:
    (project / ".beadloom/_graph/graph.yml").write_text(
        "nodes:\n  - {ref_id: solo, kind: feature, summary: Only one}\n", encoding="utf-8"
    )
    report = reindex_graph(indexed, project, config)
    assert report.nodes == 1 and report.edges == 0
    assert search_fts5(indexed.conn, "zeppelin") == []
    assert [r.ref_id for r in search_fts5(indexed.conn, "only")] == ["solo"]


def _touch(path: Path, text: str | None = None) -> None:
    if text is not None:
        path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_staleness(indexed: Store, project: Path, config: GraphConfig) -> None:
    assert is_stale(indexed, project, config) is False
    _touch(project / "docs/features/search.md", "## Ranking\nnow with quokka\n")
    assert is_stale(indexed, project, config) is True
    report = refresh_if_stale(indexed, project, config)
    assert report is not None
    assert [r.ref_id for r in search_fts5(indexed.conn, "quokka")] == ["search"]
    assert refresh_if_stale(indexed, project, config) is None


@pytest.mark.parametrize(
    "change",
    ["new_doc", "delete_doc", "graph_edit", "new_graph_file", "missing_doc_appears", "config"],
)
def test_staleness_triggers(store: Store, make_project, config: GraphConfig, change: str) -> None:
    graph = "nodes:\n  - {ref_id: a, kind: feature, summary: A, docs: [extra/later.md]}\n"
    project = make_project(graph, {"docs/one.md": "## One\n"})
    reindex_graph(store, project, config)
    assert is_stale(store, project, config) is False
    if change == "new_doc":
        (project / "docs/sub").mkdir()
        (project / "docs/sub/two.md").write_text("## Two\n", encoding="utf-8")
    elif change == "delete_doc":
        (project / "docs/one.md").unlink()
    elif change == "graph_edit":
        _touch(project / ".beadloom/_graph/graph.yml", graph + "  - {ref_id: b, kind: adr}\n")
    elif change == "new_graph_file":
        (project / ".beadloom/_graph/more.yaml").write_text("nodes: []\n", encoding="utf-8")
    elif change == "missing_doc_appears":
        (project / "extra").mkdir()
        (project / "extra/later.md").write_text("## Later\n", encoding="utf-8")
    elif change == "config":
        config = GraphConfig(chunk_max_chars=500)
    assert is_stale(store, project, config) is True


def test_never_indexed_is_stale(store: Store, project: Path, config: GraphConfig) -> None:
    assert is_stale(store, project, config) is True


def test_reindex_if_present(store: Store, tmp_path: Path, config: GraphConfig) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert reindex_if_present(store, empty, config) is None


def test_reindex_if_present_empties_a_removed_graph(
    indexed: Store, project: Path, config: GraphConfig
) -> None:
    import shutil

    shutil.rmtree(project / ".beadloom")
    shutil.rmtree(project / "docs")
    report = reindex_if_present(indexed, project, config)
    assert report is not None and report.nodes == 0 and report.docs == 0
    assert graph_status(indexed).nodes == 0


def test_configured_directories(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "custom"
    (root / "arch").mkdir(parents=True)
    (root / "arch/g.yaml").write_text(
        "nodes:\n  - {ref_id: c, kind: service, summary: Custom}\n", encoding="utf-8"
    )
    (root / "handbook").mkdir()
    (root / "handbook/h.markdown").write_text("## H\nhandbook page\n", encoding="utf-8")
    config = GraphConfig(graph_dir="arch", docs_dir="handbook", chunk_max_chars=100)
    report = reindex_graph(store, root, config)
    assert report.nodes == 1 and report.docs == 1 and report.unlinked_docs == 1
