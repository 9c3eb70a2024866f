"""Dump each query's lexical and semantic rankings (hashes, best first, top ``--depth``,
with the query's filters, through the whole result pipeline) and its relevant commits, so
fusion rules can be compared offline on the same lists (``benchmarks/fusion_offline.py``).

Usage::

    python benchmarks/dump_rankings.py --repo PATH --queries FILE --index-dir DIR OUT.json \\
        [--depth 50]

The index must hold vectors. Prints nothing; writes ``{"rows": [{"query", "kind",
"relevant", "lexical": [hash...], "semantic": [hash...], "shape": ...}]}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import load_queries, make_workspace
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval.fusion import introduction_subject, query_shape


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--depth", type=int, default=50)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    searcher = HistorySearcher(make_workspace(args.repo, args.index_dir))
    rows = []
    try:
        for q in load_queries(args.queries):
            row = {"query": q.query, "kind": q.kind, "relevant": q.relevant,
                   "shape": query_shape(introduction_subject(q.query) or q.query)}
            for mode in ("lexical", "semantic", "hybrid"):
                response = searcher.search(q.query, top_n=args.depth if mode != "hybrid" else 10,
                                           files_glob=q.files_glob, after=q.after,
                                           before=q.before, mode=mode)
                row[mode] = [r.hash for r in response.results]
                # each result's score in its mode: lexical 0.5 x every word + 0.5 x bm25 /
                # bm25_max; semantic the cosine; hybrid the normalised fused score
                row[f"{mode}_scores"] = [round(r.score, 6) for r in response.results]
            rows.append(row)
    finally:
        searcher.close()
    args.out.write_text(json.dumps({"repo": str(args.repo), "depth": args.depth,
                                    "rows": rows}), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
