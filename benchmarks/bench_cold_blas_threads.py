"""Cold CLI hybrid query with OpenBLAS on one thread vs two (s5-cold-hybrid, issue 21 §1).

The same source tree, the same command (``python -m gitquarry history Q --mode hybrid --json``
in a workspace holding ``benchmarks/_synthetic.build_repo(..., 300)`` indexed with vectors),
alternating ``OPENBLAS_NUM_THREADS=1`` and ``=2`` (``cli.entry`` keeps a preset value) for
``--rounds`` rounds; prints child CPU medians (ms, user + system), every figure and whether
the answers were equal.

Usage: ``python benchmarks/bench_cold_blas_threads.py --src src --workspace /tmp/hyb --rounds 10``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

QUERIES = ["fix cache", "timeout", "auth token", "parser error"]
_PER_CALL = (b'"checked_at"', b'"next_cursor"')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, required=True)
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITQUARRY_", "OPENBLAS_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(GITQUARRY_CONFIG="/dev/null", GITQUARRY_FAST="local",
               PYTHONPATH=str(args.src.resolve()))
    cpu: dict[str, list[float]] = {"1": [], "2": []}
    outs: dict[str, set[tuple[int, bytes]]] = {"1": set(), "2": set()}
    for r in range(args.rounds):
        for threads in (["1", "2"] if r % 2 == 0 else ["2", "1"]):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run(
                [sys.executable, "-m", "gitquarry", "history", QUERIES[r % 4], "--mode",
                 "hybrid", "--json"], cwd=args.workspace,
                env={**env, "OPENBLAS_NUM_THREADS": threads}, capture_output=True, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[threads].append((after.ru_utime - before.ru_utime + after.ru_stime
                                 - before.ru_stime) * 1000)
            kept = b"".join(line for line in proc.stdout.splitlines(True)
                            if not any(mark in line for mark in _PER_CALL))
            outs[threads].add((r % 4, kept))
    print(json.dumps({
        "load": os.getloadavg(),
        "median_ms": {t: round(statistics.median(v), 1) for t, v in cpu.items()},
        "all_ms": {t: [round(x) for x in v] for t, v in cpu.items()},
        "answers_equal": outs["1"] == outs["2"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
