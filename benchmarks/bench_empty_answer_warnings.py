"""What the empty-answer warnings cost a search that found nothing (s7: the time bounds
outside every commit, a ``--path`` no commit changes; ``engine._no_match_warnings``).

On an existing index (read-only), alternately in one process: the anchor (an FTS5 MATCH
count of one word, the least a keyword search does), the oldest/newest commit time read in
one SELECT (``min()`` and ``max()`` together: SQLite scans the table) and in two
subqueries (one ``idx_timestamp`` probe each, what the engine runs), then the whole warning
function for each filter. Prints JSON: every round's wall and CPU microseconds per call, the
medians, and the load average before and after.

    python benchmarks/bench_empty_answer_warnings.py --db WS/.gitquarry/index.db \\
        > benchmarks/results/s7-s7-fixes-empty-answer-warnings.json
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitquarry.history.search.engine import _no_match_warnings


def _loadavg() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def _per_call_us(fn: Callable[[], Any], n: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        fn()
    return ((time.perf_counter() - wall) / n * 1e6, (time.process_time() - cpu) / n * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--word", default="blueprint", help="the anchor's MATCH word")
    args = parser.parse_args()
    conn = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    word = args.word.replace('"', "")
    cases: dict[str, Callable[[], Any]] = {
        "anchor_fts_match_count": lambda: conn.execute(
            f"SELECT count(*) FROM commit_fts WHERE commit_fts MATCH '\"{word}\"'").fetchone(),
        "minmax_one_select": lambda: conn.execute(
            "SELECT min(timestamp), max(timestamp) FROM git_commits").fetchone(),
        "minmax_two_subqueries": lambda: conn.execute(
            "SELECT (SELECT min(timestamp) FROM git_commits), "
            "(SELECT max(timestamp) FROM git_commits)").fetchone(),
        "warnings_bounds": lambda: _no_match_warnings(conn, None, -1, None),
        "warnings_path_missing": lambda: _no_match_warnings(conn, None, None, "no/such/dir"),
        "warnings_path_dir_present": lambda: _no_match_warnings(conn, None, None, "src"),
        "warnings_all_three": lambda: _no_match_warnings(conn, 2**40, -1, "no/such/dir"),
    }
    out: dict[str, Any] = {
        "db": args.db,
        "commits": conn.execute("SELECT count(*) FROM git_commits").fetchone()[0],
        "calls_per_measure": args.calls,
        "loadavg_before": _loadavg(),
        "rounds": [],
    }
    for _ in range(args.rounds):
        out["rounds"].append({name: _per_call_us(fn, args.calls) for name, fn in cases.items()})
    out["loadavg_after"] = _loadavg()
    out["median_us"] = {
        name: {"wall": round(statistics.median(r[name][0] for r in out["rounds"]), 2),
               "cpu": round(statistics.median(r[name][1] for r in out["rounds"]), 2)}
        for name in cases
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
