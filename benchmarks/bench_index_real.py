"""Index a real repository (keyword index only, no embeddings) and report throughput and size.

Issue 8 §4: index size against the repository's own ``.git`` and the commits/s real
histories get. Prints one JSON object: commits, wall seconds, commits/s, Python and git CPU
seconds, load average before/after, the index file size (after ``VACUUM``), size per table
(``dbstat``), KB per commit, the ``.git`` directory's size and the ratio. Usage::

    git clone --bare --no-local SOURCE /tmp/repo.git        # a plain clone: heads + tags
    python benchmarks/bench_index_real.py /tmp/repo.git --db /tmp/index.db

``--db`` must not exist (a fresh index is measured). The repository is the workspace root.
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
    ap.add_argument("--db", type=Path, required=True)
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    raise SystemExit(main())
