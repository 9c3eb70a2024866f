"""Benchmark the architecture-graph corpus: reindex time and query latency.

Generates, in a temporary directory, a beadloom project with ``--nodes`` nodes (default
5,000, split over 10 YAML files, ~2 edges per node) and one Markdown doc per node with
``--chunks-per-doc`` ``##`` sections (default 4, so 20,000 chunks). Measures:

- ``reindex_s``: ``reindex_graph`` into a fresh index (cold) and again (warm);
- ``is_stale_ms``: one staleness check (a ``stat`` per file);
- ``search_fts5_ms``: ``search_fts5`` latency over ``--queries`` random 1-2 word queries
  (a quarter filtered by kind);
- ``search_graph_ms``: the full CLI/MCP path (open the index, staleness check, search);
- ``search_like_ms``: the LIKE fallback on the same queries (first 50 only).

Latencies are milliseconds (p50, p95, max). Prints one JSON object on stdout.
Run: ``.venv/bin/python benchmarks/bench_graph.py [--nodes N] [--queries Q]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gitquarry.config import GraphConfig
from gitquarry.graph import is_stale, reindex_graph, search_fts5, search_graph, search_like
from gitquarry.graph.models import KNOWN_KINDS
from gitquarry.store import open_store
from gitquarry.workspace import resolve_workspace

WORDS = [
    f"{a}{b}"
    for a in ("auth", "bill", "cache", "data", "event", "feed", "graph", "index", "job", "key")
    for b in ("er", "ing", "store", "flow", "node", "sync", "gate", "plan", "map", "log")
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def generate(root: Path, nodes: int, chunks_per_doc: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    graph_dir = root / ".beadloom" / "_graph"
    graph_dir.mkdir(parents=True)
    docs_dir = root / "docs" / "nodes"
    docs_dir.mkdir(parents=True)
    per_file = max(1, nodes // 10)
    for start in range(0, nodes, per_file):
        lines = ["nodes:"]
        edges = ["edges:"]
        for i in range(start, min(start + per_file, nodes)):
            kind = KNOWN_KINDS[i % len(KNOWN_KINDS)]
            lines.append(f"  - ref_id: node-{i:05d}")
            lines.append(f"    kind: {kind}")
            lines.append(f"    summary: {_sentence(rng, 8)}")
            lines.append(f"    docs: [docs/nodes/node-{i:05d}.md]")
            for _ in range(2):
                dst = rng.randrange(nodes)
                edges.append(f"  - {{src: node-{i:05d}, dst: node-{dst:05d}, kind: uses}}")
        text = "\n".join(lines + edges) + "\n"
        (graph_dir / f"part-{start // per_file:02d}.yml").write_text(text, encoding="utf-8")
        for i in range(start, min(start + per_file, nodes)):
            sections = [
                f"## Section {s} {rng.choice(WORDS)}\n\n"
                f"{_sentence(rng, 60)}\n\n{_sentence(rng, 60)}"
                for s in range(chunks_per_doc)
            ]
            (docs_dir / f"node-{i:05d}.md").write_text("\n\n".join(sections) + "\n")


def _stats(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 3),
        "p95": round(p95, 3),
        "max": round(ordered[-1], 3),
    }


def _time(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--chunks-per-doc", type=int, default=4)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("GITQUARRY_CONFIG", os.devnull)
    rng = random.Random(11)
    with tempfile.TemporaryDirectory(prefix="gq-bench-graph-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        t0 = time.perf_counter()
        generate(project, args.nodes, args.chunks_per_doc)
        generate_s = time.perf_counter() - t0
        config = GraphConfig()
        workspace = resolve_workspace(project)
        store = open_store(workspace.db_path)
        t0 = time.perf_counter()
        report = reindex_graph(store, project, config)
        cold_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        reindex_graph(store, project, config)
        warm_s = time.perf_counter() - t0
        stale_ms = [_time(lambda: is_stale(store, project, config)) for _ in range(5)]
        queries: list[tuple[str, str | None]] = []
        for i in range(args.queries):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.choice((1, 2))))
            queries.append((words, KNOWN_KINDS[i % 5] if i % 4 == 0 else None))
        fts_ms: list[float] = []
        hits = 0
        for q, kind in queries:
            t0 = time.perf_counter()
            hits += len(search_fts5(store.conn, q, kind=kind, limit=10))
            fts_ms.append((time.perf_counter() - t0) * 1000)
        like_ms = [
            _time(lambda q=q, kind=kind: search_like(store.conn, q, kind=kind, limit=10))
            for q, kind in queries[:50]
        ]
        store.close()
        graph_ms = [
            _time(lambda q=q, kind=kind: search_graph(workspace, q, kind=kind, limit=10))
            for q, kind in queries
        ]
        result = {
            "benchmark": "graph",
            "nodes": report.nodes,
            "edges": report.edges,
            "docs": report.docs,
            "chunks": report.chunks,
            "fts5": report.fts5,
            "generate_s": round(generate_s, 2),
            "reindex_s": {"cold": round(cold_s, 3), "warm": round(warm_s, 3)},
            "index_bytes": workspace.db_path.stat().st_size,
            "is_stale_ms": _stats(stale_ms),
            "search_fts5_ms": _stats(fts_ms),
            "search_graph_ms": _stats(graph_ms),
            "search_like_ms": _stats(like_ms),
            "mean_hits_per_query": round(hits / len(queries), 2),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "cpus": os.cpu_count(),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
