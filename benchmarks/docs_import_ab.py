"""CPU of importing what a cold ``repo-docs search … --json`` imports before it searches (the
fast path's modules, config, the docs API), for two gitquarry source trees alternated, each
in a fresh interpreter. Prints one JSON object.

    python benchmarks/docs_import_ab.py --old OLD_SRC --new NEW_SRC [--rounds 20] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CODE = ("import time\nt = time.process_time()\n"
        "import gitquarry.cli.fast_docs, gitquarry.cli.fast, gitquarry.cli.plain, "
        "gitquarry.config, gitquarry.query.docs, gitquarry.repo_docs.api, "
        "gitquarry.repo_docs.registry\n"
        "print(time.process_time() - t)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sides = {"old": args.old, "new": args.new}
    got: dict[str, list[float]] = {k: [] for k in sides}
    load = [os.getloadavg()[0]]
    for i in range(args.rounds):
        for side in (list(sides) if i % 2 == 0 else list(sides)[::-1]):
            out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                                 check=True, env=dict(os.environ, PYTHONPATH=sides[side]))
            got[side].append(float(out.stdout) * 1000)
    load.append(os.getloadavg()[0])
    result = {"rounds": args.rounds, "load_1min": [round(x, 2) for x in load],
              **{side: {"median_ms": round(statistics.median(v), 1),
                        "min_ms": round(min(v), 1), "raw_ms": [round(x, 2) for x in v]}
                 for side, v in got.items()}}
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
