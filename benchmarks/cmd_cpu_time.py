"""Wall and CPU time of a command run N times (cold-start checks). Prints one JSON object.

Usage::

    python benchmarks/cmd_cpu_time.py 7 gitquarry --version
    XDG_STATE_HOME=STATE python benchmarks/cmd_cpu_time.py 5 \\
        gitquarry repo-docs search "dependency injection" --mode fulltext --json

CPU time is user + system of the command and its children (``getrusage(RUSAGE_CHILDREN)``
around each run): on a loaded machine it tells the command's own cost from time spent waiting
for a core. Medians and minima in ms; the 1-minute load average at the end.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        raise SystemExit(__doc__)
    runs, cmd = int(sys.argv[1]), sys.argv[2:]
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    print(json.dumps({
        "cmd": " ".join(cmd), "runs": runs, "load": os.getloadavg()[0],
        "wall_median_ms": round(statistics.median(walls) * 1000, 1),
        "wall_min_ms": round(min(walls) * 1000, 1),
        "cpu_median_ms": round(statistics.median(cpus) * 1000, 1),
        "cpu_min_ms": round(min(cpus) * 1000, 1)}))


if __name__ == "__main__":
    main()
