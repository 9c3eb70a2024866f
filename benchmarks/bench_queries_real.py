"""Keyword query latency on a real repository's index (issue 8 §1 re-measurement).

Runs every query of ``--queries`` (JSON lines: ``query`` plus optional ``files_glob``,
``after``, ``before`` as accepted by ``gitquarry history``) ``--runs`` times in lexical mode,
``top_n`` 10, store open, after one warm-up pass, and prints one JSON object: p50/p95/max ms
over all runs, per query medians, the load average before and after, and the number of
queries that found nothing. Build the index first, e.g.::

    gitquarry index /work/.mirror/git+git --no-embed      # or any workspace
    python benchmarks/bench_queries_real.py --db WS/.gitquarry/index.db \\
        --queries benchmarks/queries/git-git.jsonl --runs 5

``--label`` names the run in the output (e.g. the code state measured).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def pct(xs: list[float], p: int) -> float:
    return xs[0] if len(xs) < 2 else statistics.quantiles(xs, n=100, method="inclusive")[p - 1]


def load_queries(path: Path) -> list[dict[str, Any]]:
    from gitquarry.retrieval.filters import parse_time

    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        for key in ("after", "before"):
            if key in item:  # as the CLI reads them: --before DATE includes that day
                item[key] = parse_time(str(item[key]), end_of_day=key == "before")
        out.append(item)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top-n", type=int, default=10)
    ap.add_argument("--label", default="")
    args = ap.parse_args(argv)

    from gitquarry.history.search.engine import search_git_history
    from gitquarry.store.connection import open_store

    queries = load_queries(args.queries)
    store = open_store(args.db)
    load_before = os.getloadavg()
    try:
        total = store.conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]
        per_query: dict[int, list[float]] = {i: [] for i in range(len(queries))}
        empty: set[int] = set()
        for run in range(args.runs + 1):  # run 0 warms the page cache
            for i, q in enumerate(queries):
                t = time.perf_counter()
                resp = search_git_history(store, mode="lexical", top_n=args.top_n, **q)
                ms = (time.perf_counter() - t) * 1000
                if run:
                    per_query[i].append(ms)
                if not resp.results:
                    empty.add(i)
    finally:
        store.close()
    every = [ms for xs in per_query.values() for ms in xs]
    medians = sorted(
        ((statistics.median(xs), queries[i]) for i, xs in per_query.items()),
        key=lambda x: -x[0],
    )
    print(json.dumps({
        "label": args.label,
        "db": str(args.db),
        "commits": total,
        "queries": len(queries),
        "runs": args.runs,
        "p50_ms": round(statistics.median(every), 2),
        "p95_ms": round(pct(every, 95), 2),
        "max_ms": round(max(every), 2),
        "queries_with_no_result": [queries[i]["query"] for i in sorted(empty)],
        "slowest_medians": [{"ms": round(ms, 2), **q} for ms, q in medians[:8]],
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "python": sys.version.split()[0],
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
