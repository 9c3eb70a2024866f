"""Command-line start-up and cold-command latency, source trees side by side. Prints JSON.

Usage::

    python benchmarks/bench_cli_startup.py --tree before=/tmp/base/src --tree after=src \
        [--history-workspace WS] [--docs STATE_DIR:QUERY ...] [--runs 10] [--bytecode] \
        [--out benchmarks/results/cli-startup-DATE.json]

Each ``--tree LABEL=DIR`` is a ``src`` directory holding the ``gitquarry`` package; every
command runs as ``python -m gitquarry ...`` with ``PYTHONPATH=DIR`` (same interpreter, same
installed libraries), so the trees differ only in gitquarry's own code. Runs are interleaved
(run 1 of every tree and command, then run 2, ...) so load changes hit both trees alike; the
median and minimum wall time of each (tree, command) are reported, with the load average.

Commands: ``--version``, ``--help``; with ``--history-workspace`` an indexed workspace,
``history QUERY --mode lexical``; with ``--docs STATE:LABEL`` (an ``XDG_STATE_HOME`` holding one
repository-docs registration), ``repo-docs search QUERY --mode fulltext --json``.

``--bytecode``: let Python write and use ``.pyc`` files (a wheel install has them; an editable
install under ``PYTHONDONTWRITEBYTECODE=1`` compiles every module on every start). One warm-up
run per tree and command is not counted either way.

Also reported per tree: which heavy libraries ``import gitquarry.cli.app`` loads.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HEAVY = ("numpy", "onnxruntime", "markdown_it", "mcp", "pydantic", "yaml", "tokenizers",
         "pyromark", "rich.progress", "wcmatch")


def run(tree: Path, argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "gitquarry", *argv], env=env,
                          capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: gitquarry {' '.join(argv)} exited {proc.returncode}: "
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def heavy_modules(tree: Path, env: dict[str, str]) -> list[str]:
    code = ("import sys, gitquarry.cli.app; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          check=True, text=True)
    return proc.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, metavar="LABEL=DIR")
    parser.add_argument("--history-workspace", type=Path)
    parser.add_argument("--history-query", default="fix option parsing")
    parser.add_argument("--docs", action="append", default=[], metavar="STATE:LABEL")
    parser.add_argument("--docs-query", default="dependency injection")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--bytecode", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    trees = {}
    for spec in args.tree:
        label, _, directory = spec.partition("=")
        trees[label] = Path(directory).resolve()
    base_env = dict(os.environ)
    base_env.setdefault("GITQUARRY_CONFIG", "/dev/null")
    if args.bytecode:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        base_env["PYTHONDONTWRITEBYTECODE"] = "1"

    commands: dict[str, tuple[list[str], dict[str, str]]] = {
        "--version": (["--version"], {}),
        "--help": (["--help"], {}),
    }
    if args.history_workspace:
        commands["history --mode lexical"] = (
            ["history", args.history_query, "--mode", "lexical", "--project",
             str(args.history_workspace.resolve())], {})
    for spec in args.docs:
        state, _, label = spec.partition(":")
        commands[f"repo-docs search --mode fulltext ({label})"] = (
            ["repo-docs", "search", args.docs_query, "--mode", "fulltext", "--json"],
            {"XDG_STATE_HOME": str(Path(state).resolve())})

    def env_for(tree: Path, extra: dict[str, str]) -> dict[str, str]:
        return {**base_env, **extra, "PYTHONPATH": str(tree)}

    result: dict[str, Any] = {"load_start": os.getloadavg()[0], "runs": args.runs,
                              "bytecode": args.bytecode,
                              "trees": {k: str(v) for k, v in trees.items()}}
    result["heavy_modules_on_import"] = {
        label: heavy_modules(tree, env_for(tree, {})) for label, tree in trees.items()}
    for tree in trees.values():  # warm-up (and .pyc writing with --bytecode)
        for argv, extra in commands.values():
            run(tree, argv, env_for(tree, extra))
    times: dict[str, dict[str, list[float]]] = {
        name: {label: [] for label in trees} for name in commands}
    for _ in range(args.runs):
        for name, (argv, extra) in commands.items():
            for label, tree in trees.items():
                times[name][label].append(run(tree, argv, env_for(tree, extra)))
    summary: dict[str, Any] = {}
    for name, per_tree in times.items():
        entry: dict[str, Any] = {}
        for label, values in per_tree.items():
            entry[label] = {"median_ms": round(statistics.median(values) * 1000, 1),
                            "min_ms": round(min(values) * 1000, 1)}
        labels = list(per_tree)
        if len(labels) == 2:
            a, b = labels
            entry[f"median_ratio_{a}_over_{b}"] = round(
                entry[a]["median_ms"] / entry[b]["median_ms"], 2)
        summary[name] = entry
    result["commands"] = summary
    result["load_end"] = os.getloadavg()[0]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
