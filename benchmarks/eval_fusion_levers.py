"""Fusion levers side by side on one index, end to end (hybrid through the whole result
pipeline), one process: each variant swaps the lexical guard (``retrieval.fusion.LEXICAL_GUARD``),
the shape weights or RRF k, runs every query, and is scored like ``eval_history.py``.

Usage::

    python benchmarks/eval_fusion_levers.py --repo PATH --queries FILE --index-dir DIR \\
        [--variants NAME,...] [--model DIR]

The index must already hold vectors (build it with ``eval_history.py --index-dir DIR``).
Prints one JSON object: per variant, the metrics by kind and the per-query latency.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import load_queries, make_workspace, run_queries, summarise
from gitquarry.history.search import engine as history_search
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval import fusion
from gitquarry.retrieval.fusion import LexicalGuard, ShapeWeights
from gitquarry.workspace import Workspace

#: name -> (guard, shape weights, rrf_k or None for the configured one)
VARIANTS: dict[str, tuple[LexicalGuard, ShapeWeights, int | None]] = {
    "default (no guard)": (LexicalGuard(), fusion.SHAPE_WEIGHTS, None),
    "guard top1 slot2": (LexicalGuard(1, 2, 0), fusion.SHAPE_WEIGHTS, None),
    "guard top1 slot3": (LexicalGuard(1, 3, 0), fusion.SHAPE_WEIGHTS, None),
    "guard top2 slot2": (LexicalGuard(2, 2, 0), fusion.SHAPE_WEIGHTS, None),
    "guard top3 slot2": (LexicalGuard(3, 2, 0), fusion.SHAPE_WEIGHTS, None),
    "guard top3 slot3": (LexicalGuard(3, 3, 0), fusion.SHAPE_WEIGHTS, None),
    "guard top3 slot3 blind50": (LexicalGuard(3, 3, 50), fusion.SHAPE_WEIGHTS, None),
    "guard top5 slot2 blind20": (LexicalGuard(5, 2, 20), fusion.SHAPE_WEIGHTS, None),
    # issue 22 s3: lexical's top k/2 always in hybrid's top k (rank r at 2r or better)
    "guard top5 slot2": (LexicalGuard(5, 2, 0), fusion.SHAPE_WEIGHTS, None),
    "guard top5 slot2 blind10": (LexicalGuard(5, 2, 10), fusion.SHAPE_WEIGHTS, None),
    "guard top5 slot2 blind50": (LexicalGuard(5, 2, 50), fusion.SHAPE_WEIGHTS, None),
    "natural 1/1.5": (LexicalGuard(), ShapeWeights((1.0, 0.5), (1.0, 1.0), (1.0, 1.5)), None),
    "natural 1/1.5 + guard top3 slot3": (
        LexicalGuard(3, 3, 0), ShapeWeights((1.0, 0.5), (1.0, 1.0), (1.0, 1.5)), None),
    "rrf k=60 + guard top3 slot3": (LexicalGuard(3, 3, 0), fusion.SHAPE_WEIGHTS, 60),
    "rrf k=10 + guard top3 slot3": (LexicalGuard(3, 3, 0), fusion.SHAPE_WEIGHTS, 10),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--variants", default="", help="comma-separated names (default: all)")
    parser.add_argument("--model", type=Path, default=None, help="ONNX model directory")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)
    names = [n for n in args.variants.split(",") if n] or list(VARIANTS)
    queries = load_queries(args.queries)
    embedding = ("onnx", str(args.model.resolve())) if args.model else None
    workspace = make_workspace(args.repo, args.index_dir, embedding=embedding)
    searchers = {None: HistorySearcher(workspace)}
    report: dict[str, Any] = {"repo": str(args.repo), "queries": len(queries), "variants": {}}
    try:
        for name in names:
            guard, shapes, rrf_k = VARIANTS[name]
            fusion.LEXICAL_GUARD = guard
            history_search.SHAPE_WEIGHTS = shapes
            if rrf_k not in searchers:  # the config is frozen: one workspace per k
                searchers[rrf_k] = HistorySearcher(Workspace(
                    root=workspace.root,
                    config=workspace.config.replaced(search={"rrf_k": rrf_k})))
            searcher = searchers[rrf_k]
            rows, facts = run_queries(searcher, queries, k=args.k, modes=["hybrid"])
            report["variants"][name] = {"metrics": summarise(rows, ["hybrid"], args.k)["hybrid"],
                                        "latency_ms": facts["latency_ms"]["hybrid"],
                                        "ranks": [r["hybrid"]["rank"] for r in rows]}
            m = report["variants"][name]["metrics"]
            print(f"{name:40s} " + " ".join(
                f"{kind}:{v.get(f'recall@{args.k}')}/{v.get(f'mrr@{args.k}')}"
                for kind, v in m.items()), file=sys.stderr)
    finally:
        for each in searchers.values():
            each.close()
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
