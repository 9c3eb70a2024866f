"""The fusion constants re-checked on a grid, end to end (issue 22 lever 4): RRF ``k``, the
(lexical, semantic) weight ratio, weights by query shape on or off, and the lexical floor,
each variant run through the whole hybrid search (result pipeline, introduction ordering,
floor) on one index that already holds vectors, in one process, scored like
``eval_history.py`` per kind.

Usage::

    python benchmarks/eval_fusion_grid.py --repo PATH --queries FILE --index-dir DIR \\
        [--grid kw|floor|all] [--variants NAME,...] > OUT.json

``--grid kw``: every RRF ``k`` x every weight setting, with the shipped floor. ``--grid
floor``: the shipped ``k`` and weights with each floor setting. The variant ``shipped`` (the
defaults as they ship) runs first and again last, so a run whose two ``shipped`` rows differ
carried state between variants (it never has). Prints one JSON object: per variant, the
metrics by kind, the ranks per query, and whether hybrid R@10 is at least lexical's on every
kind (``holds``); lexical is run once for that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import load_queries, make_workspace, run_queries, summarise
from gitquarry.config import Config
from gitquarry.history.search import engine as history_search
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval import fusion
from gitquarry.retrieval.fusion import LexicalFloor, ShapeWeights
from gitquarry.workspace import Workspace

#: the defaults as they ship (``shipped``); the grid's rows name their values explicitly
SHIPPED_K = Config().search.rrf_k
SHIPPED_FLOOR = fusion.LEXICAL_FLOOR
SHIPPED_SHAPES = fusion.SHAPE_WEIGHTS


def _flat(ratio: float) -> ShapeWeights:
    """Weights by shape off: one (1, ratio) for every query."""
    return ShapeWeights((1.0, ratio), (1.0, ratio), (1.0, ratio))


#: name -> (lexical, semantic) per shape (keyword, mixed, natural)
WEIGHTS: dict[str, ShapeWeights] = {
    # named "(shipped)" in the s7-fusion raw results: the default before them
    "shapes 0.5/1/2 (shipped)": ShapeWeights((1.0, 0.5), (1.0, 1.0), (1.0, 2.0)),
    "flat 1/1": _flat(1.0),
    "flat 1/1.5": _flat(1.5),
    "flat 1/2": _flat(2.0),
    "shapes 0.5/1/1.5": ShapeWeights((1.0, 0.5), (1.0, 1.0), (1.0, 1.5)),
    "shapes 0.5/1/3": ShapeWeights((1.0, 0.5), (1.0, 1.0), (1.0, 3.0)),
    "shapes 0.5/1.5/2": ShapeWeights((1.0, 0.5), (1.0, 1.5), (1.0, 2.0)),
    "shapes 1/1/2": ShapeWeights((1.0, 1.0), (1.0, 1.0), (1.0, 2.0)),
}
KS = (10, 20, 40, 60)
FLOORS: dict[str, LexicalFloor] = {
    "floor keep5 window10 (shipped)": LexicalFloor(5, 10),
    "floor off": LexicalFloor(0, 10),
    "floor keep3 window5": LexicalFloor(3, 5),
    "floor keep5 window5": LexicalFloor(5, 5),
    "floor keep10 window10": LexicalFloor(10, 10),
}

Variant = tuple[int, ShapeWeights, LexicalFloor]


def grid(which: str) -> dict[str, Variant]:
    """The variants of ``which`` ("kw", "floor" or "all"), ``shipped`` first."""
    out: dict[str, Variant] = {"shipped": (SHIPPED_K, SHIPPED_SHAPES, SHIPPED_FLOOR)}
    if which in ("kw", "all"):
        for k in KS:
            for wname, shapes in WEIGHTS.items():
                out[f"k={k}, {wname}"] = (k, shapes, SHIPPED_FLOOR)
    if which in ("floor", "all"):
        for fname, floor in FLOORS.items():
            out[f"k={SHIPPED_K}, shipped weights, {fname}"] = (SHIPPED_K, SHIPPED_SHAPES, floor)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--grid", choices=("kw", "floor", "all"), default="all")
    parser.add_argument("--variants", default="", help="names separated by ';' (default: the grid)")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)
    variants = grid(args.grid)
    if args.variants:
        variants = {n: variants[n] for n in args.variants.split(";")}
    order = [*variants, "shipped (again)"]
    variants["shipped (again)"] = variants.get(
        "shipped", (SHIPPED_K, SHIPPED_SHAPES, SHIPPED_FLOOR))
    queries = load_queries(args.queries)
    workspace = make_workspace(args.repo, args.index_dir)
    searchers: dict[int, HistorySearcher] = {}
    report: dict[str, Any] = {"repo": str(args.repo), "queries": len(queries), "variants": {}}

    def searcher_for(k: int) -> HistorySearcher:
        if k not in searchers:  # the config is frozen: one workspace per k
            searchers[k] = HistorySearcher(Workspace(
                root=workspace.root, config=workspace.config.replaced(search={"rrf_k": k})))
        return searchers[k]

    try:
        rows, _ = run_queries(searcher_for(SHIPPED_K), queries, k=args.k, modes=["lexical"])
        lexical = summarise(rows, ["lexical"], args.k)["lexical"]
        report["lexical"] = {"metrics": lexical, "ranks": [r["lexical"]["rank"] for r in rows]}
        for name in order:
            k, shapes, floor = variants[name]
            history_search.SHAPE_WEIGHTS = shapes  # type: ignore[misc]  # swapped per variant
            fusion.LEXICAL_FLOOR = floor
            rows, facts = run_queries(searcher_for(k), queries, k=args.k, modes=["hybrid"])
            m = summarise(rows, ["hybrid"], args.k)["hybrid"]
            holds = all(m[kind][f"recall@{args.k}"] >= v[f"recall@{args.k}"]
                        for kind, v in lexical.items() if kind in m)
            report["variants"][name] = {
                "rrf_k": k, "weights": {s: list(getattr(shapes, s))
                                        for s in ("keyword", "mixed", "natural")},
                "floor": {"keep": floor.keep, "window": floor.window},
                "metrics": m, "holds": holds,
                "latency_ms": facts["latency_ms"]["hybrid"],
                "ranks": [r["hybrid"]["rank"] for r in rows],
                "recall": [r["hybrid"]["recall"] for r in rows]}
            print(f"{name:52s} holds={holds!s:5s} " + " ".join(
                f"{kind}:{v.get(f'recall@{args.k}')}/{v.get(f'mrr@{args.k}')}"
                for kind, v in m.items()), file=sys.stderr, flush=True)
    finally:
        history_search.SHAPE_WEIGHTS = SHIPPED_SHAPES  # type: ignore[misc]  # swapped per variant
        fusion.LEXICAL_FLOOR = SHIPPED_FLOOR
        for each in searchers.values():
            each.close()
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
