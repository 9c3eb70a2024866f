"""Node-first accuracy of architecture-graph search on a real beadloom project.

Usage::

    git clone -q /work/.mirror/zoologov+beadloom/repo /tmp/beadloom
    python benchmarks/eval_graph.py --project /tmp/beadloom \\
        --queries benchmarks/relevance/beadloom_graph_queries.jsonl [--heldout] [--verbose]

``FILE`` is JSON Lines ``{"query": "...", "relevant": ["ref-id", ...]}``: the nodes judged
to be what the query names (read from the project's ``.beadloom/_graph/*.yml``: ids and
summaries). Per query: the rank of the first relevant node in the top 10 of
``search_graph`` (None if absent). Reports node-first accuracy (share of queries whose
first result is relevant), Recall@3, Recall@10 and MRR@10, over the judged set split in two:
``dev`` (queries 1, 2, 4, 5, 7, ...) and ``heldout`` (every third query), since the ranking
rule was written looking at the dev part only. The project's index goes into a temporary
copy of the project, never into it. Prints one JSON object.

``--beadloom BIN --beadloom-project DIR`` also scores beadloom's own ``search --json`` on the
same queries (a peer: install it in a separate virtual environment, copy the project to
``DIR`` and run ``beadloom reindex`` there first; its results include documents, which count
as not relevant).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gitquarry.graph import search_graph  # noqa: E402
from gitquarry.workspace import resolve_workspace  # noqa: E402


def _metrics(ranks: list[int | None]) -> dict[str, Any]:
    n = len(ranks) or 1
    return {
        "queries": len(ranks),
        "node_first": round(sum(1 for r in ranks if r == 1) / n, 3),
        "recall@3": round(sum(1 for r in ranks if r and r <= 3) / n, 3),
        "recall@10": round(sum(1 for r in ranks if r) / n, 3),
        "mrr@10": round(sum(1 / r for r in ranks if r) / n, 3),
        "ranks": ranks,
    }


def evaluate(project: Path, queries: list[dict[str, Any]], *, heldout: bool,
             verbose: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "project"
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".git", ".gitquarry"))
        workspace = resolve_workspace(copy)
        parts: dict[str, list[int | None]] = {"dev": [], "heldout": []}
        for i, q in enumerate(queries):
            part = "heldout" if i % 3 == 2 else "dev"
            if part == "heldout" and not heldout:
                continue
            response = search_graph(workspace, q["query"], limit=10)
            ids = [r.ref_id for r in response.results]
            rank = next((n + 1 for n, ref in enumerate(ids) if ref in q["relevant"]), None)
            parts[part].append(rank)
            if verbose:
                print(f"{part:7} {rank!s:>4}  {q['query']}  {ids[:3]}", file=sys.stderr)
        return {"project": project.name, "parts": {k: _metrics(v) for k, v in parts.items()
                                                   if v}}


def evaluate_beadloom(binary: Path, project: Path, queries: list[dict[str, Any]],
                      *, heldout: bool, verbose: bool = False) -> dict[str, Any]:
    """The same scoring for beadloom's ``search --json --limit 10`` run in ``project``."""
    parts: dict[str, list[int | None]] = {"dev": [], "heldout": []}
    for i, q in enumerate(queries):
        part = "heldout" if i % 3 == 2 else "dev"
        if part == "heldout" and not heldout:
            continue
        proc = subprocess.run([str(binary), "search", "--json", "--limit", "10", q["query"]],
                              cwd=project, capture_output=True, text=True, check=True)
        ids = [r["ref_id"] for r in json.loads(proc.stdout or "[]")]
        rank = next((n + 1 for n, ref in enumerate(ids) if ref in q["relevant"]), None)
        parts[part].append(rank)
        if verbose:
            print(f"beadloom {part:7} {rank!s:>4}  {q['query']}  {ids[:3]}", file=sys.stderr)
    return {k: _metrics(v) for k, v in parts.items() if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--heldout", action="store_true", help="also score the held-out part")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--beadloom", type=Path, help="beadloom's executable (a peer)")
    parser.add_argument("--beadloom-project", type=Path,
                        help="a copy of the project where `beadloom reindex` was run")
    args = parser.parse_args()
    os.environ.setdefault("GITQUARRY_CONFIG", os.devnull)
    os.environ.setdefault("GITQUARRY_LOG", "error")
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line]
    result = evaluate(args.project.resolve(), queries, heldout=args.heldout,
                      verbose=args.verbose)
    if args.beadloom is not None:
        if args.beadloom_project is None:
            parser.error("--beadloom needs --beadloom-project")
        result["beadloom"] = evaluate_beadloom(args.beadloom, args.beadloom_project, queries,
                                               heldout=args.heldout, verbose=args.verbose)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
