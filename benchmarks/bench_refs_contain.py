"""Added latency of ``refs`` on every hit (issue 12): p95 of ``RefContainment.annotate`` for
5 random hits, warm (the MCP server's steady state), and the one-off rebuild after an index
change; the change check after a write that needs no rebuild (say, embeddings); against
``git for-each-ref --contains`` for comparison.

With ``--baseline REV`` the ``history/index/refs_contain.py`` of git revision REV (of this
checkout) is loaded too and timed side by side in the same run, sample by sample on the same
hits (alternating which goes first), and both answers are compared (``answers_equal``).

Usage: python benchmarks/bench_refs_contain.py WORKSPACE [--samples 200] [--baseline REV]
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
import sys
import time
import types
from pathlib import Path
from typing import Any

from gitquarry.history.index.refs_contain import RefContainment
from gitquarry.store import open_store


def _baseline(rev: str) -> Any:
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(
        ["git", "-C", str(root), "show", f"{rev}:src/gitquarry/history/index/refs_contain.py"],
        capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("refs_contain_baseline")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:refs_contain.py", "exec"), module.__dict__)
    return module.RefContainment()


def _summary(times: list[float], build: float) -> dict[str, float]:
    times = sorted(times)
    return {"warm_p50_ms": round(statistics.median(times), 3),
            "warm_p95_ms": round(times[int(len(times) * 0.95) - 1], 3),
            "warm_max_ms": round(times[-1], 3),
            "rebuild_s": round(build, 3)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--git-samples", type=int, default=3)
    ap.add_argument("--baseline", metavar="REV", help="also time refs_contain.py at REV")
    args = ap.parse_args()
    store = open_store(args.workspace / ".gitquarry" / "index.db")
    conn = store.conn
    hashes = [r[0] for r in conn.execute("SELECT hash FROM git_commits")]
    refs = int(conn.execute("SELECT count(*) FROM repo_refs").fetchone()[0])
    impls: dict[str, Any] = {"current": RefContainment()}
    if args.baseline:
        impls["baseline"] = _baseline(args.baseline)
    builds: dict[str, float] = {}
    for name, rc in impls.items():
        t0 = time.perf_counter()
        rc.refresh(conn)
        builds[name] = time.perf_counter() - t0
    rng = random.Random(1)
    times: dict[str, list[float]] = {name: [] for name in impls}
    equal = True
    for i in range(args.samples):
        sample = rng.sample(hashes, 5)
        order = list(impls) if i % 2 == 0 else list(reversed(impls))
        got: dict[str, list[Any]] = {}
        for name in order:
            hits = [{"hash": h} for h in sample]
            t = time.perf_counter()
            impls[name].annotate(conn, hits)
            times[name].append((time.perf_counter() - t) * 1000)
            got[name] = [(r["refs"], r["refs_total"]) for r in hits]
        equal = equal and len({json.dumps(v) for v in got.values()}) == 1
    fingerprint_ms = []  # the check after some write (e.g. embeddings) that needs no rebuild
    for _ in range(5):
        t = time.perf_counter()
        RefContainment._fingerprint(conn)
        fingerprint_ms.append((time.perf_counter() - t) * 1000)
    git_dir = conn.execute("SELECT common_dir FROM repositories LIMIT 1").fetchone()[0]
    git_ms = []
    for h in rng.sample(hashes, args.git_samples):
        t = time.perf_counter()
        subprocess.run(["git", f"--git-dir={git_dir}", "for-each-ref", "--contains", h,
                        "--format=%(refname)"], capture_output=True, check=True)
        git_ms.append((time.perf_counter() - t) * 1000)
    out: dict[str, Any] = {
        "commits": len(hashes), "refs": refs, "hits_per_answer": 5, "samples": args.samples,
        **_summary(times["current"], builds["current"]),
        "check_after_unrelated_write_median_ms": round(statistics.median(fingerprint_ms), 1),
    }
    if args.baseline:
        base = _summary(times["baseline"], builds["baseline"])
        out["baseline"] = {"revision": args.baseline, **base}
        out["answers_equal"] = equal
        out["p50_ratio_baseline_over_current"] = round(
            base["warm_p50_ms"] / max(out["warm_p50_ms"], 1e-6), 1)
        out["p95_ratio_baseline_over_current"] = round(
            base["warm_p95_ms"] / max(out["warm_p95_ms"], 1e-6), 1)
    if git_ms:
        out["git_for_each_ref_contains_median_ms_per_hit"] = round(statistics.median(git_ms), 1)
    out["load"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
