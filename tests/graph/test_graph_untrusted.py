"""Issue 7 §5: graph files are untrusted input (identifiers as written, duplicate keys,
bounded expansion), through the real loader and indexer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gitquarry.config import GraphConfig
from gitquarry.errors import GraphFileError
from gitquarry.graph import load_graph, reindex_graph, search_graph
from gitquarry.workspace import resolve_workspace


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_ids_are_kept_exactly_as_written(tmp_path: Path) -> None:
    f = write(
        tmp_path / "g.yml",
        "nodes:\n"
        "  - {ref_id: NO, kind: service, summary: Norway}\n"
        "  - {ref_id: 0010, kind: service, summary: ten}\n"
        "  - {ref_id: 3.10, kind: feature, summary: version}\n"
        "  - {ref_id: on, kind: 1e3, docs: [0010.md]}\n"
        "edges:\n"
        "  - {src: NO, dst: 0010, kind: uses}\n"
        "  - {src: 3.10, dst: on, kind: yes}\n",
    )
    graph = load_graph(tmp_path, [f])
    assert [n.ref_id for n in graph.nodes] == ["NO", "0010", "3.10", "on"]
    assert graph.nodes[3].kind == "1e3" and graph.nodes[3].docs == ("0010.md",)
    assert [(e.src, e.dst, e.kind) for e in graph.edges] == [
        ("NO", "0010", "uses"), ("3.10", "on", "yes")
    ]
    assert graph.warnings == ()


def test_duplicate_top_level_block_names_file_line_and_key(tmp_path: Path) -> None:
    f = write(
        tmp_path / ".beadloom/_graph/g.yml",
        "nodes:\n  - {ref_id: a, kind: service}\n"
        "edges: []\n"
        "nodes:\n  - {ref_id: b, kind: service}\n",
    )
    with pytest.raises(GraphFileError) as info:
        load_graph(tmp_path, [f])
    message = str(info.value)
    assert "g.yml" in message and "line 4" in message and "duplicate key 'nodes'" in message


def test_duplicate_nested_key_is_reported(tmp_path: Path) -> None:
    f = write(tmp_path / "g.yml",
              "nodes:\n  - ref_id: a\n    kind: service\n    summary: x\n    kind: feature\n")
    with pytest.raises(GraphFileError, match=r"line 5: duplicate key 'kind'"):
        load_graph(tmp_path, [f])


def test_item_warnings_name_file_and_line(tmp_path: Path) -> None:
    f = write(tmp_path / "g.yml", "nodes:\n  - {kind: service}\n  - {ref_id: ok, kind: x}\n")
    graph = load_graph(tmp_path, [f])
    assert graph.warnings == ("g.yml:2: nodes[0]: node has no ref_id; skipped",)


def test_alias_bomb_graph_is_refused_by_search_quickly(tmp_path: Path) -> None:
    lines = ["x0: &x0 [a, a, a, a, a, a, a, a, a, a]"]
    lines += [f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * 10) + "]" for i in range(1, 9)]
    lines += ["nodes:", "  - {ref_id: bomb, kind: service, summary: *x8}"]
    write(tmp_path / ".beadloom/_graph/bomb.yml", "\n".join(lines) + "\n")
    write(tmp_path / "docs/readme.md", "# hello\n")
    started = time.perf_counter()
    with pytest.raises(GraphFileError, match=r"bomb\.yml") as info:
        search_graph(resolve_workspace(tmp_path), "bomb")
    assert time.perf_counter() - started < 5
    assert "more than" in str(info.value)


def test_oversized_graph_file_is_refused_without_reading_it_whole(tmp_path: Path,
                                                                   store) -> None:
    big = tmp_path / ".beadloom/_graph/big.yml"
    big.parent.mkdir(parents=True)
    with big.open("w") as handle:
        handle.write("nodes:\n")
        handle.write("  - {ref_id: n, kind: service, summary: " + "x" * (5 * 2**20) + "}\n")
    with pytest.raises(GraphFileError, match=r"big\.yml.*limit"):
        reindex_graph(store, tmp_path, GraphConfig())
