"""CPU cost of the lexical floor (``retrieval.fusion.floor_lexical``): one call on an 800-item
fused list, and hybrid queries on the click set with the floor on and off, alternately in
one process (process CPU per query, p50 and mean). Prints one JSON object.

Usage::

    python benchmarks/eval_fusion_floor_cost.py --repo /tmp/click --index-dir DIR \\
        [--queries FILE] [--n 60]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import load_queries, make_workspace
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval import fusion
from gitquarry.retrieval.fusion import LexicalFloor, floor_lexical, rrf_fuse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--queries", type=Path,
                        default=Path("benchmarks/relevance/click_queries.jsonl"))
    parser.add_argument("--n", type=int, default=60)
    args = parser.parse_args(argv)
    lexical = [f"l{n}" for n in range(400)]
    semantic = [f"s{n}" for n in range(400)]
    fused = rrf_fuse([lexical, semantic], [1.0, 2.0], k=20)
    start = time.process_time()
    for _ in range(2000):
        floor_lexical(fused, lexical[:3], 10)
    micro = (time.process_time() - start) / 2000 * 1000
    queries = load_queries(args.queries)[: args.n]
    searcher = HistorySearcher(make_workspace(args.repo, args.index_dir))
    shipped = fusion.LEXICAL_FLOOR
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        searcher.search(queries[0].query, mode="hybrid", top_n=10)  # load the model
        for rep in range(2):
            for i, q in enumerate(queries):
                for on in ((False, True) if (i + rep) % 2 else (True, False)):
                    fusion.LEXICAL_FLOOR = shipped if on else LexicalFloor(keep=0)
                    start = time.process_time()
                    searcher.search(q.query, mode="hybrid", top_n=10, files_glob=q.files_glob,
                                    after=q.after, before=q.before)
                    times[on].append(time.process_time() - start)
    finally:
        fusion.LEXICAL_FLOOR = shipped
        searcher.close()
    print(json.dumps({
        "floor_lexical_cpu_ms_per_call_800_items": round(micro, 4),
        "hybrid_cpu_ms_p50": {"floor_on": round(statistics.median(times[True]) * 1000, 1),
                              "floor_off": round(statistics.median(times[False]) * 1000, 1)},
        "hybrid_cpu_ms_mean": {"floor_on": round(statistics.mean(times[True]) * 1000, 1),
                               "floor_off": round(statistics.mean(times[False]) * 1000, 1)},
        "queries": len(queries), "runs_per_arm": len(times[True]),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
