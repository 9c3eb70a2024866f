"""Read beadloom graph files (YAML) into validated nodes and edges.

A graph file is a mapping with optional ``nodes:`` and ``edges:`` lists. A node is a mapping
with ``ref_id`` and ``kind`` (required, non-empty strings), ``summary`` (string, default "";
see ``summary_text`` for other YAML types), optional ``source`` and optional ``docs:``
(list of project-relative paths); any other keys are kept in ``extra``. An edge is a
mapping with ``src``, ``dst`` and ``kind``.

Graph files are untrusted input, read by the strict loader (``gitquarry.parsing``): YAML 1.2
core scalars, so identifiers (``ref_id``, ``kind``, ``src``, ``dst``, ``docs`` entries) are kept
exactly as written (``NO``, ``0010``, ``3.10`` stay text); duplicate keys in any mapping, tags,
and files over the size, depth or alias-expansion bounds are refused.

A file that is refused by the loader, or whose top level / ``nodes`` / ``edges`` has the wrong
type, raises ``GraphFileError`` naming the file (and line). Problems with single items are
warnings naming the file and line, and the item is skipped: a node without ref_id or kind, a
duplicate ref_id (the first wins), an edge missing a field or naming a node no file defines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from gitquarry.errors import FileRefusedError, GraphFileError, YamlInputError
from gitquarry.graph.models import GraphEdge, GraphNode, LoadedGraph
from gitquarry.graph.sources import relative
from gitquarry.parsing.bounded_read import read_capped
from gitquarry.parsing.strict_yaml import (
    DEFAULT_MAX_BYTES,
    YamlMapping,
    load_yaml,
    scalar_text,
    to_plain,
)

_NODE_KEYS = ("ref_id", "kind", "summary", "source", "docs")


def _text(value: Any, source: str | None = None) -> str | None:
    """A scalar identifier as written (numbers and booleans as their source text)."""
    text = scalar_text(value, source)
    return text.strip() if text is not None else None


def _field(raw: dict[str, Any], key: str) -> str | None:
    source = raw.source(key) if isinstance(raw, YamlMapping) else None
    return _text(raw.get(key), source)


def _line_of(container: Any, index: int) -> int:
    lines = getattr(container, "item_lines", None)
    return int(lines[index]) if lines and index < len(lines) else 0


def summary_text(value: Any, where: str, ref_id: str, warnings: list[str]) -> str:
    """A node's ``summary`` as stored and searched.

    A string is stripped; missing or null is "". Any other scalar (number, boolean, date) is
    kept as ``str(value)`` with a warning. A mapping or list is kept as its YAML flow text
    (``{owner: core, tier: 1}``), so its words stay searchable, with a warning.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict | list):
        text = yaml.safe_dump(
            to_plain(value), default_flow_style=True, allow_unicode=True, sort_keys=False,
            width=2**31 - 1,
        ).strip()
        warnings.append(
            f"{where}: node {ref_id!r} summary is not a string ({type(value).__name__}); "
            "stored as YAML text"
        )
        return text
    warnings.append(
        f"{where}: node {ref_id!r} summary is not a string ({type(value).__name__}); "
        "stored as text"
    )
    return str(getattr(value, "source", value))


def _json_safe(value: Any) -> Any:
    # YAML can hold dates and other types JSON cannot; keep them as text.
    return json.loads(json.dumps(to_plain(value), default=str))


def read_graph_file(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Any]:
    """Parse one graph file with the strict loader; an empty file is ``{}``.

    Only the first ``max_bytes + 1`` bytes are ever read, and only from a regular file
    (``parsing.bounded_read``: a FIFO, socket or device is never opened or read).
    :raises GraphFileError: not a regular file, unreadable, over ``max_bytes``, not UTF-8,
        not valid YAML, refused by the strict loader (duplicate key, tag, over a bound: the
        message names the line), or the top level is not a mapping.
    """
    try:  # regular files only, never blocking on a FIFO; at most max_bytes + 1 bytes
        got = read_capped(path, max_bytes, follow_symlinks=True)
    except FileRefusedError as exc:
        raise GraphFileError(path, exc.reason) from exc
    if got.over:
        raise GraphFileError(path, f"the file is {got.size:,} bytes; the limit is "
                             f"{max_bytes:,}")
    try:
        data = load_yaml(got.data, path.name, max_bytes=max_bytes)
    except YamlInputError as exc:
        where = f"line {exc.line}: " if exc.line else ""
        raise GraphFileError(path, f"{where}{exc.detail}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise GraphFileError(path, f"top level must be a mapping, got {type(data).__name__}")
    return data


def _list_of(data: dict[str, Any], key: str, path: Path) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise GraphFileError(path, f"'{key}' must be a list, got {type(value).__name__}")
    return value


def _parse_node(raw: Any, rel: str, where: str, warnings: list[str]) -> GraphNode | None:
    if not isinstance(raw, dict):
        warnings.append(f"{where}: node is not a mapping; skipped")
        return None
    ref_id = _field(raw, "ref_id")
    kind = _field(raw, "kind")
    if not ref_id:
        warnings.append(f"{where}: node has no ref_id; skipped")
        return None
    if not kind:
        warnings.append(f"{where}: node {ref_id!r} has no kind; skipped")
        return None
    docs_raw = raw.get("docs") or []
    if isinstance(docs_raw, str):
        docs_raw = [docs_raw]
    docs: list[str] = []
    if isinstance(docs_raw, list):
        sources = getattr(docs_raw, "sources", None) or [None] * len(docs_raw)
        for entry, source in zip(docs_raw, sources, strict=True):
            text = _text(entry, source)
            if text:
                docs.append(text)
            else:
                warnings.append(f"{where}: node {ref_id!r} has a docs entry that is not a path")
    else:
        warnings.append(f"{where}: node {ref_id!r} 'docs' is not a list; ignored")
    extra = {str(k): _json_safe(v) for k, v in raw.items() if k not in _NODE_KEYS}
    return GraphNode(
        ref_id=ref_id,
        kind=kind,
        summary=summary_text(raw.get("summary"), where, ref_id, warnings),
        source=_field(raw, "source") or None,
        docs=tuple(docs),
        extra=extra,
        graph_file=rel,
    )


def load_graph(project: Path, files: list[Path]) -> LoadedGraph:
    """Load and validate every graph file in ``files`` (absolute paths, in order).

    :raises GraphFileError: a file is malformed (see the module docstring).
    """
    warnings: list[str] = []
    nodes: dict[str, GraphNode] = {}
    raw_edges: list[tuple[GraphEdge, str]] = []
    for path in files:
        rel = relative(project, path)
        data = read_graph_file(path)
        node_list = _list_of(data, "nodes", path)
        for i, raw in enumerate(node_list):
            node = _parse_node(raw, rel, f"{rel}:{_line_of(node_list, i)}: nodes[{i}]", warnings)
            if node is None:
                continue
            if node.ref_id in nodes:
                first = nodes[node.ref_id].graph_file
                warnings.append(
                    f"{rel}:{_line_of(node_list, i)}: nodes[{i}]: duplicate ref_id {node.ref_id!r} "
                    f"(first defined in {first}); skipped"
                )
                continue
            nodes[node.ref_id] = node
        edge_list = _list_of(data, "edges", path)
        for i, raw in enumerate(edge_list):
            where = f"{rel}:{_line_of(edge_list, i)}: edges[{i}]"
            if not isinstance(raw, dict):
                warnings.append(f"{where}: edge is not a mapping; skipped")
                continue
            src, dst, kind = (_field(raw, k) for k in ("src", "dst", "kind"))
            if not src or not dst or not kind:
                warnings.append(f"{where}: edge needs src, dst and kind; skipped")
                continue
            raw_edges.append((GraphEdge(src=src, dst=dst, kind=kind, graph_file=rel), where))
    edges: dict[tuple[str, str, str], GraphEdge] = {}
    for edge, where in raw_edges:
        missing = [end for end in (edge.src, edge.dst) if end not in nodes]
        if missing:
            names = ", ".join(repr(m) for m in missing)
            warnings.append(
                f"{where}: edge {edge.src} -> {edge.dst} ({edge.kind}) names unknown node "
                f"{names}; skipped"
            )
            continue
        edges.setdefault((edge.src, edge.dst, edge.kind), edge)
    return LoadedGraph(
        nodes=tuple(nodes.values()),
        edges=tuple(edges.values()),
        files=tuple(str(p) for p in files),
        warnings=tuple(warnings),
    )
