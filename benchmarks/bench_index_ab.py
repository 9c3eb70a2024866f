"""Issue 21 target 4, before/after: ``gitquarry index --no-embed -q`` on a fresh index with
two source trees, and ``git log --all -p`` (the anchor), alternating in one run.

Each round runs the three subjects in a rotating order (``before``, ``after``, ``git``; then
``after``, ``git``, ``before``; ...), so load drifts hit each alike. Each index run is a new
process with ``PYTHONPATH`` set to that tree's ``src`` (imports, discovery, graph pass,
patch-ids counted: ``run_all.figure_index``'s figure); CPU is the child's user+system
(``RUSAGE_CHILDREN``, git children included). After the last round, ``--digest`` compares
``benchmarks/index_rows.py --digest`` of the two trees' indexes (every row, FTS5 included).
Prints one JSON object: per subject every round's CPU and wall, medians, ratios to git,
load before/after each round. Usage::

    python benchmarks/bench_index_ab.py WORKSPACE --before /main/src --after src --rounds 3
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
    ap.add_argument("workspace", type=Path, help="a folder holding one bare repository")
    ap.add_argument("--before", type=Path, required=True, help="src/ of the reference tree")
    ap.add_argument("--after", type=Path, required=True, help="src/ of the tree measured")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--digest", action="store_true",
                    help="compare the two trees' index digests after the last round")
    args = ap.parse_args(argv)
    ws = args.workspace.resolve()
    repo = run_all.git_dir(ws)
    rows_script = Path(__file__).resolve().parent / "index_rows.py"
    with tempfile.TemporaryDirectory(prefix="gq-bench-ab-") as tmp:
        base = run_all.quiet_env(Path(tmp) / "state")
        envs = {name: {**base, "PYTHONPATH": str(src.resolve())}
                for name, src in (("before", args.before), ("after", args.after))}
        digests: dict[str, str] = {}

        def index(name: str) -> tuple[float, float]:
            shutil.rmtree(ws / ".gitquarry", ignore_errors=True)
            got = run_all.run_cpu([*run_all.gitquarry(), "index", "--no-embed", "-q", str(ws)],
                                  env=envs[name])
            if args.digest:
                out = subprocess.run(
                    [sys.executable, str(rows_script), str(ws / ".gitquarry" / "index.db"),
                     "--digest"], env=envs["after"], capture_output=True, text=True,
                    check=True)
                digests[name] = json.loads(out.stdout)["all"]
            return got

        def git_log(_name: str) -> tuple[float, float]:
            return run_all.run_cpu(["git", "-C", str(repo), "log", "--all", "-p"], env=base)

        subjects = {"before": index, "after": index, "git": git_log}
        order = ["before", "after", "git"]
        got: dict[str, list[tuple[float, float]]] = {k: [] for k in order}
        loads = []
        for r in range(args.rounds):
            seq = order[r % 3:] + order[: r % 3]
            before_load = os.getloadavg()[0]
            for name in seq:
                got[name].append(subjects[name](name))
            loads.append({"round": r, "order": seq, "load_before": round(before_load, 2),
                          "load_after": round(os.getloadavg()[0], 2)})
        shutil.rmtree(ws / ".gitquarry", ignore_errors=True)
    med = {k: statistics.median(x[0] for x in v) for k, v in got.items()}
    result = {
        "workspace": str(ws),
        "rounds": args.rounds,
        "before": str(args.before), "after": str(args.after),
        "cpu_s": {k: [round(x[0], 3) for x in v] for k, v in got.items()},
        "wall_s": {k: [round(x[1], 3) for x in v] for k, v in got.items()},
        "median_cpu_s": {k: round(v, 3) for k, v in med.items()},
        "ratio_to_git": {k: round(med[k] / med["git"], 2) for k in ("before", "after")},
        "after_vs_before": round(med["after"] / med["before"], 3),
        "loads": loads,
        **({"digest_all": digests, "digests_equal": digests["before"] == digests["after"]}
           if args.digest else {}),
    }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
