"""CPU (process_time) of the cold docs path's imports in fresh interpreters, with the
compiled-dataclass file (``gitquarry.cli.dataclass_code``) installed and without, alternated.
Run from the repository root after one cold search has filled the file; prints one JSON
object.

    python benchmarks/docs_import_codecache_ab.py [--rounds 24] > benchmarks/results/NAME.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CODE = """
import time, sys
t = time.process_time()
if sys.argv[1] == 'file':
    from gitquarry.cli import dataclass_code
    dataclass_code.install()
import gitquarry.cli.plain, gitquarry.config, gitquarry.query.docs, gitquarry.repo_docs.api
import gitquarry.repo_docs.registry
print(time.process_time() - t)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=24)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH="src")
    res: dict[str, list[float]] = {"file": [], "no_file": []}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for side in (["file", "no_file"] if r % 2 == 0 else ["no_file", "file"]):
            out = subprocess.run([sys.executable, "-c", CODE, side], env=env,
                                 capture_output=True, text=True, check=True).stdout
            res[side].append(float(out))
    load.append(os.getloadavg()[0])
    summary = {k: {"p50_ms": round(statistics.median(v) * 1000, 1),
                   "min_ms": round(min(v) * 1000, 1)} for k, v in res.items()}
    print(json.dumps({"what": __doc__.split("\n\n")[0], "load_1min": load,
                      "summary": summary, "raw_s": res}))


if __name__ == "__main__":
    main()
