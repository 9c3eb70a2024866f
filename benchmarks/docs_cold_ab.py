"""Cold ``repo-docs search QUERY --mode fulltext --json`` of two gitquarry source trees,
alternated query by query, with ``rg -i`` and ``git grep -i`` over the same files as anchors
in the same run. Prints one JSON object.

    python benchmarks/docs_cold_ab.py --old OLD_SRC --new NEW_SRC --repo WORK_TREE \
        [--rounds 5] [--out benchmarks/results/NAME.json]

``OLD_SRC`` / ``NEW_SRC`` are folders holding a ``gitquarry`` package (``git archive main src``
unpacked, and this checkout's ``src``; compile both first: ``python -m compileall -q SRC``,
since a shell with ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile gitquarry in every
run). ``WORK_TREE`` is a Git work tree of docs (``bench_docs.make_repo``: the first 100 eligible
docs of fastapi). Each run is a fresh ``gitquarry`` process (this interpreter's console script)
with ``PYTHONPATH`` set to one tree, ``GITQUARRY_FAST=local`` (no daemon), a private state
directory and no user config. CPU is user + system of the process and its children (the git
processes it starts), from ``getrusage(RUSAGE_CHILDREN)`` around each run; the order of the two
trees alternates per query and per round; the two stdouts are compared for every query.
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
import time
from pathlib import Path
from typing import Any

QUERIES = ["dependency injection", "background tasks", "path parameters", "request body",
           "security oauth2", "cors middleware", "websockets", "upload files"]


def run(cmd: list[str], env: dict[str, str], cwd: str | None = None
        ) -> tuple[float, float, bytes, int]:
    """(wall s, CPU s of the process and its children, stdout, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, cwd=cwd, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, proc.stdout, proc.returncode


def summary(values: dict[str, list[float]]) -> dict[str, Any]:
    return {"cpu_p50_ms": round(statistics.median(values["cpu"]) * 1000, 1),
            "cpu_min_ms": round(min(values["cpu"]) * 1000, 1),
            "wall_p50_ms": round(statistics.median(values["wall"]) * 1000, 1),
            "runs": len(values["cpu"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--repo", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    exe = str(Path(sys.executable).parent / "gitquarry")
    sides = {"old": args.old, "new": args.new}
    state = Path(tempfile.mkdtemp(prefix="gq-cold-ab-"))
    base = dict(os.environ, XDG_STATE_HOME=str(state), GITQUARRY_CONFIG="/dev/null",
                GITQUARRY_FAST="local")
    try:
        subprocess.run([exe, "repo-docs", "register", "--repo", "bench/docs",
                        "--repository-path", str(args.repo)],
                       env=dict(base, PYTHONPATH=args.old), check=True, capture_output=True)
        got: dict[str, dict[str, list[float]]] = {
            k: {"wall": [], "cpu": []} for k in (*sides, "rg", "git_grep")}
        same, load = True, [os.getloadavg()[0]]
        for r in range(args.rounds):
            for i, query in enumerate(QUERIES):
                order = list(sides) if (r + i) % 2 == 0 else list(sides)[::-1]
                outs = {}
                for side in order:
                    wall, cpu, out, code = run(
                        [exe, "repo-docs", "search", query, "--mode", "fulltext", "--json"],
                        dict(base, PYTHONPATH=sides[side]))
                    if code != 0:
                        raise SystemExit(f"{side}: exit {code} for {query!r}")
                    got[side]["wall"].append(wall)
                    got[side]["cpu"].append(cpu)
                    outs[side] = out
                same = same and outs["old"] == outs["new"]
                for name, cmd in (("rg", ["rg", "-i", "-c", query, "."]),
                                  ("git_grep", ["git", "grep", "-i", "-c", query])):
                    if shutil.which(cmd[0]) is None:  # (an anchor not installed: left out)
                        continue
                    wall, cpu, _out, _code = run(cmd, base, cwd=str(args.repo))
                    got[name]["wall"].append(wall)
                    got[name]["cpu"].append(cpu)
            load.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(state, ignore_errors=True)
    result = {
        "docs_repo": str(args.repo), "queries": QUERIES, "rounds": args.rounds,
        "same_stdout_every_query": same, "load_1min": [round(x, 2) for x in load],
        "summary": {k: summary(v) for k, v in got.items() if v["cpu"]},
        "ratio_cpu_p50_new_over_old": round(statistics.median(got["new"]["cpu"])
                                            / statistics.median(got["old"]["cpu"]), 3),
        "raw_cpu_s": {k: [round(x, 4) for x in v["cpu"]] for k, v in got.items()},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
