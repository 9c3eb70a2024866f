"""Added latency of ``refs`` on every hit (issue 12): p95 of ``RefContainment.annotate`` for
5 random hits, warm (the MCP server's steady state), and the one-off rebuild after an index
change; against ``git for-each-ref --contains`` for comparison.

Usage: python benchmarks/bench_refs_contain.py WORKSPACE [--samples 200]
(WORKSPACE already indexed: `gitquarry index --no-embed WORKSPACE`). Prints JSON.
A synthetic 100,000-commit / 1,000-tag repository: see benchmarks/make_tagged_repo.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import time
from pathlib import Path

from gitquarry.history.refs_contain import RefContainment
from gitquarry.store import open_store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--git-samples", type=int, default=3)
    args = ap.parse_args()
    store = open_store(args.workspace / ".gitquarry" / "index.db")
    conn = store.conn
    hashes = [r[0] for r in conn.execute("SELECT hash FROM git_commits")]
    refs = int(conn.execute("SELECT count(*) FROM repo_refs").fetchone()[0])
    rc = RefContainment()
    t0 = time.perf_counter()
    rc.refresh(conn)
    build = time.perf_counter() - t0
    rng = random.Random(1)
    times = []
    for _ in range(args.samples):
        hits = [{"hash": h} for h in rng.sample(hashes, 5)]
        t = time.perf_counter()
        rc.annotate(conn, hits)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    git_dir = conn.execute("SELECT common_dir FROM repositories LIMIT 1").fetchone()[0]
    git_ms = []
    for h in rng.sample(hashes, args.git_samples):
        t = time.perf_counter()
        subprocess.run(["git", f"--git-dir={git_dir}", "for-each-ref", "--contains", h,
                        "--format=%(refname)"], capture_output=True, check=True)
        git_ms.append((time.perf_counter() - t) * 1000)
    print(json.dumps({
        "commits": len(hashes), "refs": refs, "hits_per_answer": 5,
        "warm_p50_ms": round(statistics.median(times), 3),
        "warm_p95_ms": round(times[int(len(times) * 0.95) - 1], 3),
        "rebuild_s": round(build, 3),
        "git_for_each_ref_contains_median_ms_per_hit": round(statistics.median(git_ms), 1),
        "load": os.getloadavg(),
    }, indent=2))


if __name__ == "__main__":
    main()
