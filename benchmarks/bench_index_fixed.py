"""The fixed cost of ``gitquarry index``: a one-commit repository indexed from scratch
(``index --no-embed -q``, a new process per run) with two source trees, alternating.

CPU is the child's user+system (``RUSAGE_CHILDREN``: git children included). Each round
runs ``before`` then ``after`` (odd rounds the other way round). Prints one JSON object: every
round's CPU and wall, medians, load before/after. Usage::

    python benchmarks/bench_index_fixed.py --before /main/src --after src --rounds 7
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_all


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gq-fixed-") as tmp:
        ws = Path(tmp) / "ws"
        repo = ws / "one"
        repo.mkdir(parents=True)
        env_git = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com",
                   "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"}
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / "README.md").write_text("one\n", encoding="utf-8")
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(repo), "commit", "-qm", "one"], check=True, env=env_git)
        base = run_all.quiet_env(Path(tmp) / "state")
        envs = {name: {**base, "PYTHONPATH": str(src.resolve())}
                for name, src in (("before", args.before), ("after", args.after))}
        got: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
        loads = []
        for r in range(args.rounds):
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            load = os.getloadavg()[0]
            for name in order:
                shutil.rmtree(ws / ".gitquarry", ignore_errors=True)
                got[name].append(run_all.run_cpu(
                    [*run_all.gitquarry(), "index", "--no-embed", "-q", str(ws)],
                    env=envs[name]))
            loads.append({"round": r, "order": order, "load_before": round(load, 2),
                          "load_after": round(os.getloadavg()[0], 2)})
    med = {k: statistics.median(x[0] for x in v) for k, v in got.items()}
    print(json.dumps({
        "before": str(args.before), "after": str(args.after), "rounds": args.rounds,
        "cpu_s": {k: [round(x[0], 3) for x in v] for k, v in got.items()},
        "wall_s": {k: [round(x[1], 3) for x in v] for k, v in got.items()},
        "median_cpu_s": {k: round(v, 3) for k, v in med.items()},
        "after_minus_before_s": round(med["after"] - med["before"], 3),
        "loads": loads,
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
