"""Per-query cost of lexical, semantic and hybrid history search on an indexed database with
vectors (e.g. the 100k index ``bench_hybrid.py --workdir DIR`` leaves in
``DIR/repo-N/.gitquarry/index.db``). Prints one JSON object.

Usage: python benchmarks/bench_hybrid_per_query.py DB [--runs 5]

For each query of ``bench_hybrid.py`` (keywords and sentences) and each mode: median wall and
process CPU time (ms) over ``--runs`` calls, ``top_n=10``, model loaded and matrix cached.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hybrid import PARAPHRASES, WORDS
from gitquarry.config import Config
from gitquarry.history.search.engine import search_git_history
from gitquarry.history.search.semantic import load_semantic_ranker
from gitquarry.store import open_store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    store = open_store(args.db)
    ranker = load_semantic_ranker(Config(), store)
    search_git_history(store, "warm cache", mode="hybrid", semantic=ranker, top_n=10)
    out: dict = {"load_start": os.getloadavg()[0], "runs": args.runs, "queries": {}}
    for q in WORDS + PARAPHRASES:
        row = {}
        for mode in ("lexical", "semantic", "hybrid"):
            walls, cpus = [], []
            for _ in range(args.runs):
                t, c = time.perf_counter(), time.process_time()
                search_git_history(store, q, mode=mode, semantic=ranker, top_n=10)
                walls.append((time.perf_counter() - t) * 1000)
                cpus.append((time.process_time() - c) * 1000)
            row[mode] = {"wall_ms": round(statistics.median(walls), 1),
                         "cpu_ms": round(statistics.median(cpus), 1)}
        out["queries"][q] = row
        print(q, row, file=sys.stderr)
    out["load_end"] = os.getloadavg()[0]
    store.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
