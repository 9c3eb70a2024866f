"""Fusion defaults on several relevance sets in one run: RRF constant and weighting by query
shape, through the real search (result pipeline included), plus ``eval_history``'s fusion
study (eleven fusion methods on the same two candidate lists per query).

    python benchmarks/eval_fusion.py \\
        --set shop=/tmp/shop:benchmarks/relevance/queries.jsonl:/tmp/idx-shop \\
        --set click=/tmp/click:benchmarks/relevance/click_queries.jsonl:/tmp/idx-click \\
        > benchmarks/results/fusion-<date>.json

``--set NAME=REPO:QUERIES[:INDEX_DIR]`` (INDEX_DIR: kept and reused; default: the
repository's workspace index). Every set is indexed (with vectors) first, then every variant
runs on every set, hybrid mode. A variant wins when it is at least as good as the others on
Recall@k *and* MRR@k on every set; the report lists, per set, the variants ordered by MRR.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_history import (
    build_index,
    fusion_study,
    load_queries,
    make_workspace,
    run_queries,
    summarise,
)
from gitquarry.history.search.searcher import HistorySearcher

#: (rrf_k, weight_by_shape, lexical weight, semantic weight)
VARIANTS: dict[str, tuple[int, bool, float, float]] = {
    "rrf k=60 1/1": (60, False, 1.0, 1.0),
    "rrf k=20 1/1": (20, False, 1.0, 1.0),
    "rrf k=60 by shape": (60, True, 1.0, 1.0),
    "rrf k=20 by shape": (20, True, 1.0, 1.0),
    "rrf k=20 1/2": (20, False, 1.0, 2.0),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, dest="sets",
                        help="NAME=REPO:QUERIES[:INDEX_DIR]")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--no-study", action="store_true",
                        help="skip the eleven-method fusion study")
    args = parser.parse_args()
    sets: dict[str, tuple[Any, list[Any]]] = {}
    out: dict[str, Any] = {"k": args.k, "loadavg": list(os.getloadavg()), "sets": {},
                           "variants": {n: dict(zip(("rrf_k", "weight_by_shape",
                                                     "lexical_weight", "semantic_weight"), v,
                                                    strict=True))
                                        for n, v in VARIANTS.items()}}
    for spec in args.sets:
        name, _, rest = spec.partition("=")
        repo, queries_path, *index = rest.split(":")
        workspace = make_workspace(Path(repo), index[0] if index else None)
        queries = load_queries(Path(queries_path))
        out["sets"][name] = {"repo": repo, "queries": len(queries),
                             "index": build_index(workspace, embed=True), "results": {}}
        sets[name] = (workspace, queries)
    for variant, (rrf_k, by_shape, lw, sw) in VARIANTS.items():
        for name, (workspace, queries) in sets.items():
            cfg = workspace.config.search
            cfg.rrf_k, cfg.weight_by_shape = rrf_k, by_shape
            cfg.lexical_weight, cfg.semantic_weight = lw, sw
            searcher = HistorySearcher(workspace)
            try:
                rows, facts = run_queries(searcher, queries, k=args.k, modes=["hybrid"])
            finally:
                searcher.close()
            metrics = summarise(rows, ["hybrid"], args.k)["hybrid"]
            out["sets"][name]["results"][variant] = {**metrics, **facts}
            print(f"{name} {variant}: {metrics['all']}", file=sys.stderr, flush=True)
    if not args.no_study:
        for name, (workspace, queries) in sets.items():
            searcher = HistorySearcher(workspace)
            try:
                out["sets"][name]["fusion_study"] = fusion_study(searcher, queries, args.k)
            finally:
                searcher.close()
    k = args.k
    for name in sets:
        results = out["sets"][name]["results"]
        out["sets"][name]["by_mrr"] = sorted(
            results, key=lambda v: -results[v]["all"][f"mrr@{k}"])
    out["winners"] = [
        v for v in VARIANTS
        if all(
            out["sets"][s]["results"][v]["all"][m] >= max(
                out["sets"][s]["results"][w]["all"][m] for w in VARIANTS) - 1e-9
            for s in sets for m in (f"recall@{k}", f"mrr@{k}")
        )
    ]
    out["loadavg_after"] = list(os.getloadavg())
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
