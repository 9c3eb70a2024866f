"""Index a real repository (keyword index only, no embeddings) and report throughput and size.

Issue 8 §4: index size against the repository's own ``.git`` and the commits/s real
histories get. Prints one JSON object: commits, wall seconds, commits/s, Python and git CPU
seconds, load average before/after, the index file size (after ``VACUUM``), size per table
(``dbstat``), KB per commit, the ``.git`` directory's size and the ratio. Usage::

    git clone --bare --no-local SOURCE /tmp/repo.git        # a plain clone: heads + tags
    python benchmarks/bench_index_real.py /tmp/repo.git --db /tmp/index.db

``--db`` must not exist (a fresh index is measured). The repository is the workspace root.

Issue 21 target 4 (keyword-ready index against ``git log -p``, fixed costs counted)::

    python benchmarks/bench_index_real.py WORKSPACE --versus-git-log 3

runs ``gitquarry index --no-embed -q WORKSPACE`` on a fresh index (a new process: imports,
the graph/docs pass and patch-ids included) and ``git log --all -p`` on the workspace's
repository alternately, ``3`` rounds each, and prints the CPU medians and their ratio (the
figure ``run_all.py`` reports); ``WORKSPACE`` is a folder holding one bare repository.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import sys
import time
from pathlib import Path


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", type=Path, help="repository (bare or with a work tree)")
    ap.add_argument("--db", type=Path)
    ap.add_argument("--versus-git-log", type=int, metavar="ROUNDS", default=0,
                    help="CLI index vs git log --all -p, alternating, ROUNDS each")
    args = ap.parse_args(argv)
    if args.versus_git_log:
        return versus_git_log(args.repo, args.versus_git_log)
    if args.db is None:
        ap.error("--db is required")
    if args.db.exists():
        ap.error(f"{args.db} exists; the benchmark measures a fresh index")

    from gitquarry.config import Config
    from gitquarry.history.index.indexer import index_workspace
    from gitquarry.store.connection import open_store

    git_dir = args.repo / ".git" if (args.repo / ".git").is_dir() else args.repo
    load_before = os.getloadavg()
    r0s = resource.getrusage(resource.RUSAGE_SELF)
    r0c = resource.getrusage(resource.RUSAGE_CHILDREN)
    store = open_store(args.db)
    t = time.perf_counter()
    report = index_workspace(args.repo, store, Config())
    wall = time.perf_counter() - t
    store.close()
    r1s = resource.getrusage(resource.RUSAGE_SELF)
    r1c = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_after = os.getloadavg()
    conn = sqlite3.connect(args.db)
    conn.execute("VACUUM")
    tables = {
        name: size for name, size in conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
        if size > 64 * 1024
    }
    conn.close()
    size = args.db.stat().st_size
    git_size = dir_bytes(git_dir)
    commits = report.total_commits
    print(json.dumps({
        "repo": str(args.repo),
        "commits": commits,
        "errors": [r.error for r in report.failed],
        "wall_s": round(wall, 1),
        "commits_per_s": round(report.new_commits / wall, 1),
        "python_cpu_s": round(r1s.ru_utime + r1s.ru_stime - r0s.ru_utime - r0s.ru_stime, 1),
        "git_cpu_s": round(r1c.ru_utime + r1c.ru_stime - r0c.ru_utime - r0c.ru_stime, 1),
        "load_before": load_before,
        "load_after": load_after,
        "index_mib": round(size / 2**20, 1),
        "index_kb_per_commit": round(size / 1024 / max(commits, 1), 2),
        "tables_mib": {k: round(v / 2**20, 1) for k, v in tables.items()},
        "git_dir_mib": round(git_size / 2**20, 1),
        "index_to_git_dir": round(size / git_size, 3),
        "python": sys.version.split()[0],
    }, indent=1))
    return 0


def versus_git_log(ws: Path, rounds: int) -> int:
    """The issue 21 target 4 figure: ``run_all.figure_index`` on ``ws``, with every round's
    CPU seconds (subject and anchor) kept, in a throw-away state directory."""
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import run_all

    with tempfile.TemporaryDirectory(prefix="gq-bench-index-") as tmp:
        env = run_all.quiet_env(Path(tmp) / "state")
        rounds_cpu: dict[str, list[float]] = {"index": [], "git_log": []}
        real_run_cpu = run_all.run_cpu

        def recording(cmd: list[str], **kw: object) -> tuple[float, float]:
            cpu, wall = real_run_cpu(cmd, **kw)  # type: ignore[arg-type]
            rounds_cpu["git_log" if cmd[0] == "git" else "index"].append(round(cpu, 2))
            return cpu, wall

        run_all.run_cpu = recording  # type: ignore[assignment]
        load_before = os.getloadavg()
        try:
            fig = run_all.figure_index(ws, rounds, env)
        finally:
            run_all.run_cpu = real_run_cpu
        print(json.dumps({"workspace": str(ws), **fig, "rounds_cpu_s": rounds_cpu,
                          "load_before": load_before, "load_after": os.getloadavg()},
                         indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
