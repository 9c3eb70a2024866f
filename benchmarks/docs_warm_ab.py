"""Warm full-text docs queries of two gitquarry source trees, alternated: one long-lived
``RepoDocsService`` per run (as the MCP server holds one), its first query apart, then 100
queries (``bench_docs.QUERIES``, 20 distinct, cycled). Prints one JSON object.

    python benchmarks/docs_warm_ab.py --old OLD_SRC --new NEW_SRC --repo WORK_TREE \
        [--rounds 3] [--out benchmarks/results/NAME.json]

Each run is its own interpreter with ``PYTHONPATH`` set to one tree (no revision set: the
full-text tables are built by the first query). Per query: wall and CPU (``process_time``,
this process only) in ms; p50/p95 per run, and of every run's queries together.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHILD = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from bench_docs import QUERIES
from gitquarry.config import Config
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Registry, Selector
state = Path(sys.argv[2])
with RepoDocsService(Config(), Registry(state / "registry.json")) as service:
    service.register("bench/docs", Path(sys.argv[1]))
    sel = Selector("bench/docs")
    t = time.perf_counter()
    service.search(sel, QUERIES[0], mode="fulltext")
    first = time.perf_counter() - t
    wall, cpu = [], []
    for i in range(100):
        t, c = time.perf_counter(), time.process_time()
        service.search(sel, QUERIES[i % len(QUERIES)], mode="fulltext")
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
print(json.dumps({"first_ms": first * 1000, "wall_ms": [w * 1000 for w in wall],
                  "cpu_ms": [c * 1000 for c in cpu]}))
"""


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[max(0, min(len(values) - 1, round(q * (len(values) - 1))))], 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent)
    sides = {"old": args.old, "new": args.new}
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in sides}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for side in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
            with tempfile.TemporaryDirectory(prefix="gq-warm-ab-") as state:
                env = dict(os.environ, PYTHONPATH=sides[side], XDG_STATE_HOME=state,
                           GITQUARRY_CONFIG="/dev/null")
                out = subprocess.run([sys.executable, "-c", CHILD, str(args.repo), state, here],
                                     env=env, capture_output=True, text=True, check=True)
                runs[side].append(json.loads(out.stdout))
        load.append(os.getloadavg()[0])
    result: dict[str, Any] = {"docs_repo": str(args.repo), "rounds": args.rounds,
                              "load_1min": [round(x, 2) for x in load]}
    for side, got in runs.items():
        result[side] = {
            "per_run": [{"wall_p50_ms": pct(g["wall_ms"], 0.5),
                         "wall_p95_ms": pct(g["wall_ms"], 0.95),
                         "cpu_p50_ms": pct(g["cpu_ms"], 0.5),
                         "cpu_p95_ms": pct(g["cpu_ms"], 0.95),
                         "first_query_ms": round(g["first_ms"], 1)} for g in got],
            "all_wall_p95_ms": pct([w for g in got for w in g["wall_ms"]], 0.95),
            "all_cpu_p95_ms": pct([c for g in got for c in g["cpu_ms"]], 0.95),
            "median_of_runs_wall_p95_ms": round(statistics.median(
                pct(g["wall_ms"], 0.95) for g in got), 2),
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
