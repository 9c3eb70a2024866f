"""Loading beadloom graph files: shapes, warnings, typed errors naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitquarry.errors import GraphError, GraphFileError
from gitquarry.graph import load_graph


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_loads_nodes_edges_and_extra_keys(tmp_path: Path) -> None:
    f = write(
        tmp_path / "g.yml",
        """\
nodes:
  - ref_id: billing
    kind: domain
    summary: Billing domain
    source: src/billing/
    docs: [docs/billing.md]
    owner: team-a
    since: 2024-05-01
  - {ref_id: invoice, kind: entity, summary: An invoice}
edges:
  - {src: invoice, dst: billing, kind: part_of}
""",
    )
    graph = load_graph(tmp_path, [f])
    billing, invoice = graph.nodes
    assert billing.ref_id == "billing" and billing.kind == "domain"
    assert billing.source == "src/billing/" and billing.docs == ("docs/billing.md",)
    assert billing.extra == {"owner": "team-a", "since": "2024-05-01"}
    assert billing.graph_file == "g.yml"
    assert invoice.summary == "An invoice" and invoice.docs == ()
    (edge,) = graph.edges
    assert (edge.src, edge.dst, edge.kind) == ("invoice", "billing", "part_of")
    assert graph.warnings == ()


def test_other_kinds_are_accepted(tmp_path: Path) -> None:
    f = write(tmp_path / "g.yaml", "nodes:\n  - {ref_id: q, kind: queue, summary: A queue}\n")
    (node,) = load_graph(tmp_path, [f]).nodes
    assert node.kind == "queue"


def test_duplicate_ref_id_and_dangling_edge_are_warnings(tmp_path: Path) -> None:
    a = write(
        tmp_path / "a.yml",
        "nodes:\n  - {ref_id: x, kind: service, summary: first}\n"
        "edges:\n  - {src: x, dst: ghost, kind: uses}\n",
    )
    b = write(
        tmp_path / "b.yml",
        "nodes:\n  - {ref_id: x, kind: feature, summary: second}\n"
        "  - {ref_id: y, kind: feature, summary: why}\n"
        "edges:\n  - {src: y, dst: x, kind: uses}\n",
    )
    graph = load_graph(tmp_path, [a, b])
    assert [(n.ref_id, n.summary) for n in graph.nodes] == [("x", "first"), ("y", "why")]
    assert [(e.src, e.dst) for e in graph.edges] == [("y", "x")]
    assert len(graph.warnings) == 2
    assert any("duplicate ref_id 'x'" in w and "b.yml" in w for w in graph.warnings)
    assert any("ghost" in w and "a.yml" in w for w in graph.warnings)


def test_nodes_without_ref_id_or_kind_are_skipped(tmp_path: Path) -> None:
    f = write(
        tmp_path / "g.yml",
        "nodes:\n  - {kind: service}\n  - {ref_id: k}\n  - just a string\n"
        "  - {ref_id: ok, kind: adr}\n"
        "edges:\n  - {src: ok}\n",
    )
    graph = load_graph(tmp_path, [f])
    assert [n.ref_id for n in graph.nodes] == ["ok"]
    assert len(graph.warnings) == 4


def test_empty_file_is_an_empty_graph(tmp_path: Path) -> None:
    f = write(tmp_path / "g.yml", "")
    graph = load_graph(tmp_path, [f])
    assert graph.nodes == () and graph.edges == ()


def test_malformed_yaml_raises_naming_the_file(tmp_path: Path) -> None:
    f = write(tmp_path / "bad.yml", "nodes: [\n  - {ref_id: a\n")
    with pytest.raises(GraphFileError) as info:
        load_graph(tmp_path, [f])
    assert info.value.path == f
    assert str(f) in str(info.value)
    assert isinstance(info.value, GraphError) and info.value.exit_code == 1


@pytest.mark.parametrize("text", ["- a list\n- at top\n", "nodes: a string\n", "edges: {src: a}\n"])
def test_wrong_shapes_raise(tmp_path: Path, text: str) -> None:
    f = write(tmp_path / "shape.yml", text)
    with pytest.raises(GraphFileError) as info:
        load_graph(tmp_path, [f])
    assert info.value.path == f


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    f = write(tmp_path / "evil.yml", "nodes: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(GraphFileError):
        load_graph(tmp_path, [f])
