"""Merges that repeat results, measured on a real relevance set (issue 8 §4, issue 14).

    python benchmarks/relevance/click_set.py build /tmp/click
    python benchmarks/eval_merges.py --repo /tmp/click \\
        --queries benchmarks/relevance/click_queries.jsonl --index-dir DIR \\
        > benchmarks/results/merges-click-<date>.json

Variants (all with copies collapsed by patch-id, the default): ``none`` (no merge folding),
``fold-ancestry`` (``history.search.candidate_stream.MergeFolder(repeats=False)``: a merge is
folded only when every commit it brought in is shown), ``fold`` (the default: also a merge
whose diff repeats another result, ``history.search.merges``), and ``no-merges`` (the
``--no-merges`` filter, for reference). Each variant replaces the ``MergeFolder`` the search
engine builds (``history.search.engine.MergeFolder``) for its run. ``--no-embed`` indexes
without vectors (only ``--modes lexical`` then means anything): a quick check of the script.
Per variant and mode: Recall@k and MRR@k (``eval_history``'s scoring,
crediting a relevant commit listed among a result's copies at that result's rank), merge
slots among the top-5 results, and distinct topics in the top 5 judged from git
(``eval_pipeline.Topics``: same patch-id, or a merge bringing the other in).

The earlier alternative, demoting such merges below the other results instead of folding
them (the first shift's ``history/search/ordering.py``), was measured with this script at commit
``embedrel`` 2026-11-30 (raw: ``benchmarks/results/merges-click-2026-11-30.json``) and
removed: one mechanism is kept (docs/performance.md, "Merges").
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_history import build_index, load_queries, make_workspace, score_results
from eval_pipeline import Topics
from gitquarry.history.search import candidate_stream as pipeline_module
from gitquarry.history.search import engine as search_module
from gitquarry.history.search.searcher import HistorySearcher


class _NoFold(pipeline_module.MergeFolder):
    """A merge folder that folds no merge (the ``none`` variant)."""

    def host(self, merge_id: int, parents: Any, position: dict[int, int]) -> int | None:
        return None


VARIANTS: dict[str, dict[str, Any]] = {
    "none": {"fold": _NoFold, "merges": "include"},
    "fold-ancestry": {"fold": functools.partial(pipeline_module.MergeFolder, repeats=False),
                      "merges": "include"},
    "fold": {"fold": pipeline_module.MergeFolder, "merges": "include"},
    "no-merges": {"fold": pipeline_module.MergeFolder, "merges": "exclude"},
}


def run(searcher: HistorySearcher, queries: list[Any], mode: str, merges: str, k: int,
        topics: Topics) -> dict[str, Any]:
    mrr = recall = 0.0
    slots = merge_slots = distinct = 0
    seconds = 0.0
    for q in queries:
        t = time.perf_counter()
        response = searcher.search(q.query, top_n=k, files_glob=q.files_glob, after=q.after,
                                   before=q.before, mode=mode, merges=merges)
        seconds += time.perf_counter() - t
        groups = [[r.hash, *(c["hash"] for c in r.copies)] for r in response.results]
        rank = next((n for n, g in enumerate(groups, start=1)
                     if score_results(g, q.relevant)[0]), None)
        found = sum(1 for rel in q.relevant if any(score_results(g, [rel])[0] for g in groups))
        mrr += 1 / rank if rank else 0.0
        recall += found / len(q.relevant)
        top5 = response.results[:5]
        slots += len(top5)
        merge_slots += sum(r.is_merge for r in top5)
        distinct += topics.distinct([r.hash for r in top5])
    n = len(queries)
    return {f"recall@{k}": round(recall / n, 4), f"mrr@{k}": round(mrr / n, 4),
            "top5_slots": slots, "merge_slots_top5": merge_slots,
            "distinct_topics_top5": round(distinct / n, 3),
            "mean_query_ms": round(1000 * seconds / n, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--modes", default="hybrid,lexical")
    parser.add_argument("--index-dir", default=None)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--no-embed", action="store_true",
                        help="index without vectors (with --modes lexical: a quick check)")
    args = parser.parse_args()
    queries = load_queries(args.queries)
    workspace = make_workspace(args.repo, args.index_dir)
    index = build_index(workspace, embed=not args.no_embed)
    topics = Topics(workspace.root)
    out: dict[str, Any] = {"repo": str(args.repo), "queries": len(queries), "k": args.k,
                           "index": index, "loadavg": list(os.getloadavg()), "results": {}}
    shipped = search_module.MergeFolder
    for mode in args.modes.split(","):
        for name in args.variants.split(","):
            variant = VARIANTS[name]
            search_module.MergeFolder = variant["fold"]  # type: ignore[misc]
            searcher = HistorySearcher(workspace)
            try:
                result = run(searcher, queries, mode, variant["merges"], args.k, topics)
            finally:
                searcher.close()
                search_module.MergeFolder = shipped  # type: ignore[misc]
            out["results"][f"{mode}/{name}"] = result
            print(f"{mode}/{name}: {result}", file=sys.stderr, flush=True)
    out["loadavg_after"] = list(os.getloadavg())
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
