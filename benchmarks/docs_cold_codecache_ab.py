"""Cold ``repo-docs search QUERY --mode fulltext --json`` of one source tree with the
compiled-dataclass file (``gitquarry.cli.dataclass_code``) readable and filled, and with it
unreachable (``XDG_CACHE_HOME`` under ``/proc``: every process compiles as before), alternated
run by run. Prints one JSON object.

    python benchmarks/docs_cold_codecache_ab.py --src SRC --repo WORK_TREE [--rounds 16] \
        [--out benchmarks/results/NAME.json]

``WORK_TREE`` as for ``docs_cold_ab.py``. CPU is user + system of the process and its git
children (``getrusage(RUSAGE_CHILDREN)`` around each run); the two stdouts are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

QUERY = ["repo-docs", "search", "request body", "--repo", "bench/docs", "--mode", "fulltext",
         "--json"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", required=True)
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    exe = str(Path(sys.executable).parent / "gitquarry")
    state = Path(tempfile.mkdtemp(prefix="gq-codecache-"))
    base = dict(os.environ, XDG_STATE_HOME=str(state / "state"), GITQUARRY_CONFIG="/dev/null",
                GITQUARRY_FAST="local", PYTHONPATH=args.src,
                XDG_CACHE_HOME=str(state / "cache"))
    sides = {"file": base, "no_file": dict(base, XDG_CACHE_HOME="/proc/gq-no-such-dir")}
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    outs: dict[str, set[bytes]] = {k: set() for k in sides}
    try:
        subprocess.run([exe, "repo-docs", "register", "--repo", "bench/docs",
                        "--repository-path", str(args.repo)], env=base, check=True,
                       capture_output=True)
        subprocess.run([exe, *QUERY], env=base, check=True, capture_output=True)  # fills it
        load = [os.getloadavg()[0]]
        for r in range(args.rounds):
            for side in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                proc = subprocess.run([exe, *QUERY], env=sides[side], check=True,
                                      capture_output=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[side].append(after.ru_utime + after.ru_stime - before.ru_utime
                                 - before.ru_stime)
                outs[side].add(proc.stdout)
            load.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(state, ignore_errors=True)
    result = {
        "query": QUERY, "rounds": args.rounds, "load_1min": [round(x, 2) for x in load],
        "same_stdout": len(outs["file"] | outs["no_file"]) == 1,
        "summary": {k: {"cpu_p50_ms": round(statistics.median(v) * 1000, 1),
                        "cpu_min_ms": round(min(v) * 1000, 1), "runs": len(v)}
                    for k, v in cpu.items()},
        "raw_cpu_s": {k: [round(x, 4) for x in v] for k, v in cpu.items()},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
