"""Commit-history indexing and search performance on synthetic repositories (issue 2).

For each ``--commits N`` it builds a repository of N commits with one ``git fast-import``
stream (``benchmarks/_synthetic.py``), then measures, side by side in the same run:

1. ``raw_git``: ``git log --all --name-only -p`` to /dev/null, wall seconds (median), the
   issue's baseline; note that ``--name-only`` suppresses ``-p`` in git, so it prints no patch.
   ``raw_git_log_patch``: ``git log --all -p``, the baseline that does produce the diffs;
   ``git_as_gitquarry``: the exact ``git log`` gitquarry runs (``--no-walk=unsorted --stdin``,
   its format, ``-M --raw -z -p --diff-merges=first-parent``) over ``rev-list --all``, to
   /dev/null: the floor for gitquarry's own git work. The raw git, git-as-gitquarry and
   gitquarry runs are interleaved, so machine noise hits them alike;
2. ``full_index``: ``index_workspace`` (lexical only: no embeddings) into a fresh database,
   timed around the library call in a fresh child process (so peak RSS is the indexing's
   own), median of ``--index-runs``; ratio to raw git (target <= 3x). ``cli_index``: once,
   ``gitquarry index --no-embed -q`` end to end (interpreter start, imports, config, lock);
3. ``reindex_10``: add 10 commits (fast-import on ``main``) and re-index; median of 3 rounds
   (target < 2 s);
4. ``noop_reindex``: re-index with nothing new (median of 3), library call and CLI;
5. ``query``: ``--queries`` lexical searches, ``top_n=10``, store already open, after 20
   warm-up queries: 1-3 vocabulary words; 20 % with ``files_glob='src/**/*.py'``, 20 % with an
   after/before window, 10 % with both. p50/p95/max ms overall and per kind (target p95 < 50),
   and the process CPU time per query (``cpu_p50_ms``/``cpu_p95_ms``: the query's own cost,
   apart from waiting for a core on a loaded machine);
6. ``index_size``: database bytes (and per table where SQLite has ``dbstat``); peak RSS.

Prints one JSON object on stdout; progress goes to stderr. Usage::

    .venv/bin/python benchmarks/bench_history.py --commits 10000 [--commits 100000]
        [--workdir DIR] [--queries 200] [--index-runs 3] [--seed 0] [--keep]

The workdir (default: a new temporary directory) is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import NOUNS, VERBS, append_commits, build_repo

TARGET_RATIO = 3.0
TARGET_REINDEX_S = 2.0
TARGET_P95_MS = 50.0
T0 = time.monotonic()


def note(msg: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 4)


def pct(xs: list[float], p: int) -> float:
    if len(xs) < 2:
        return xs[0]
    return statistics.quantiles(xs, n=100, method="inclusive")[p - 1]


def git_env() -> dict[str, str]:
    return {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C", "GIT_PAGER": "cat"}


# --------------------------------------------------------------------------- child process


def child_index(repo: str, db: str) -> None:
    """Run in a fresh interpreter: open the store, index the workspace, print JSON."""
    from gitquarry.config import Config
    from gitquarry.history.index.indexer import index_workspace
    from gitquarry.store.connection import open_store

    t = time.perf_counter()
    store = open_store(Path(db))
    open_s = time.perf_counter() - t
    r0s = resource.getrusage(resource.RUSAGE_SELF)
    r0c = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    report = index_workspace(Path(repo), store, Config())
    index_s = time.perf_counter() - t
    r1s = resource.getrusage(resource.RUSAGE_SELF)
    r1c = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    store.close()  # checkpoints the WAL
    close_s = time.perf_counter() - t
    print(json.dumps({
        "open_s": open_s,
        "index_s": index_s,
        "close_s": close_s,
        "new_commits": report.new_commits,
        "total_commits": report.total_commits,
        "up_to_date": report.up_to_date,
        "errors": [r.error for r in report.failed],
        "python_user_s": r1s.ru_utime - r0s.ru_utime,
        "python_sys_s": r1s.ru_stime - r0s.ru_stime,
        "git_user_s": r1c.ru_utime - r0c.ru_utime,
        "git_sys_s": r1c.ru_stime - r0c.ru_stime,
        "peak_rss_mib": r1s.ru_maxrss / 1024,
        "git_peak_rss_mib": r1c.ru_maxrss / 1024,
    }))


def run_child_index(repo: Path, db: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--_child-index", str(repo), str(db)],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"index child failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["errors"]:
        raise RuntimeError(f"indexing reported errors: {out['errors']}")
    return out


# --------------------------------------------------------------------------- measurements


def time_raw_git(repo: Path, *opts: str) -> float:
    t = time.perf_counter()
    subprocess.run(
        ["git", "-C", str(repo), "log", "--all", *opts],
        stdout=subprocess.DEVNULL, check=True, env=git_env(),
    )
    return time.perf_counter() - t


def time_git_as_gitquarry(repo: Path) -> float:
    """rev-list + the git log invocation gitquarry's reader uses, output discarded."""
    from gitquarry.gitio import log as gqlog

    t = time.perf_counter()
    hashes = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--all"], capture_output=True, check=True,
        env=git_env(),
    ).stdout
    subprocess.run(
        ["git", "-C", str(repo), "log", "--no-walk=unsorted", "--stdin",
         f"--format={gqlog._FORMAT}", *gqlog._DIFF_OPTIONS, "-p"],
        input=hashes, stdout=subprocess.DEVNULL, check=True, env=git_env(),
    )
    return time.perf_counter() - t


def gitquarry_cli() -> list[str]:
    exe = Path(sys.executable).parent / "gitquarry"
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "from gitquarry.cli.app import main; main()"]


def time_cli_index(repo: Path, index_dir: Path, cfg: Path) -> float:
    cfg.write_text(f'[indexing]\nindex_dir = "{index_dir}"\n', encoding="utf-8")
    env = {**os.environ, "GITQUARRY_CONFIG": str(cfg)}
    t = time.perf_counter()
    proc = subprocess.run(
        [*gitquarry_cli(), "index", "--no-embed", "-q", str(repo)],
        capture_output=True, text=True, env=env, check=False,
    )
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"gitquarry index failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def db_bytes(db: Path) -> int:
    return sum(
        Path(str(db) + s).stat().st_size for s in ("", "-wal") if Path(str(db) + s).exists()
    )


def table_sizes(db: Path) -> dict[str, int] | None:
    conn = sqlite3.connect(str(db))
    try:
        rows = conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    # one-page tables (the empty ones) are left out
    return {name: int(size) for name, size in rows if size > 4096}


def make_queries(n: int, seed: int, t_min: int, t_max: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    words = VERBS + NOUNS
    span = t_max - t_min
    out: list[dict[str, Any]] = []
    for i in range(n):
        q = " ".join(rng.sample(words, rng.choice((1, 1, 2, 2, 3))))
        kind = ("plain",) * 5 + ("glob",) * 2 + ("time",) * 2 + ("glob+time",)
        k = kind[i % 10]
        item: dict[str, Any] = {"query": q, "kind": k}
        if "glob" in k:
            item["files_glob"] = "src/**/*.py"
        if "time" in k:
            width = int(span * rng.uniform(0.05, 0.5))
            start = t_min + int(rng.random() * (span - width))
            shape = rng.random()
            if shape < 0.6:
                item["after"], item["before"] = start, start + width
            elif shape < 0.8:
                item["after"] = start
            else:
                item["before"] = start + width
        out.append(item)
    rng.shuffle(out)
    return out


def bench_queries(db: Path, n: int, seed: int) -> dict[str, Any]:
    from gitquarry.history.search.engine import search_git_history
    from gitquarry.store.connection import open_store

    store = open_store(db)
    try:
        t_min, t_max = store.conn.execute(
            "SELECT min(timestamp), max(timestamp) FROM git_commits"
        ).fetchone()
        warm = make_queries(20, seed + 1, t_min, t_max)
        for q in warm:
            args = {k: v for k, v in q.items() if k != "kind"}
            search_git_history(store, mode="lexical", top_n=10, **args)
        queries = make_queries(n, seed, t_min, t_max)
        by_kind: dict[str, list[float]] = {}
        all_ms: list[float] = []
        cpu_ms: list[float] = []
        empty = 0
        slowest: list[tuple[float, dict[str, Any]]] = []
        for q in queries:
            args = {k: v for k, v in q.items() if k != "kind"}
            t, c = time.perf_counter(), time.process_time()
            resp = search_git_history(store, mode="lexical", top_n=10, **args)
            ms = (time.perf_counter() - t) * 1000
            cpu_ms.append((time.process_time() - c) * 1000)
            all_ms.append(ms)
            by_kind.setdefault(q["kind"], []).append(ms)
            empty += not resp.results
            slowest.append((ms, q))
        slowest.sort(key=lambda x: -x[0])
    finally:
        store.close()

    def stats(xs: list[float]) -> dict[str, float]:
        return {
            "n": len(xs),
            "p50_ms": round(statistics.median(xs), 2),
            "p95_ms": round(pct(xs, 95), 2),
            "max_ms": round(max(xs), 2),
        }

    return {
        **stats(all_ms),
        "cpu_p50_ms": round(statistics.median(cpu_ms), 2),
        "cpu_p95_ms": round(pct(cpu_ms, 95), 2),
        "queries_with_no_result": empty,
        "by_kind": {k: stats(v) for k, v in sorted(by_kind.items())},
        "slowest": [{"ms": round(ms, 2), **q} for ms, q in slowest[:3]],
        "meets_target_p95": pct(all_ms, 95) < TARGET_P95_MS,
    }


def bench_one(n: int, workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    repo = workdir / f"repo-{n}"
    if repo.exists():
        shutil.rmtree(repo)
    note(f"N={n}: building synthetic repository")
    info = build_repo(repo, n, seed=args.seed)
    note(f"N={n}: built in {info.build_s:.1f} s ({info.git_dir_bytes / 2**20:.1f} MiB .git)")

    raw: list[float] = []
    raw_p: list[float] = []
    as_gq: list[float] = []
    full: list[dict[str, Any]] = []
    db = workdir / f"index-{n}.db"
    rounds = max(3, args.index_runs)
    load_before = os.getloadavg()
    for i in range(rounds):
        raw.append(time_raw_git(repo, "--name-only", "-p"))
        raw_p.append(time_raw_git(repo, "-p"))
        as_gq.append(time_git_as_gitquarry(repo))
        msg = (f"N={n} round {i + 1}/{rounds}: raw git {raw[-1]:.2f} s, "
               f"git log -p {raw_p[-1]:.2f} s, git-as-gq {as_gq[-1]:.2f} s")
        if i < args.index_runs:
            for s in ("", "-wal", "-shm"):
                Path(str(db) + s).unlink(missing_ok=True)
            full.append(run_child_index(repo, db))
            assert full[-1]["new_commits"] == n, full[-1]
            msg += f", gitquarry full index {full[-1]['index_s']:.2f} s"
        note(msg)
    raw_med = median(raw)
    raw_p_med = median(raw_p)
    full_med = median([r["index_s"] for r in full])
    size = db_bytes(db)
    tables = table_sizes(db)

    note(f"N={n}: CLI full index (end to end)")
    cli_dir = workdir / f"cli-index-{n}"
    cli_cfg = workdir / f"cli-config-{n}.toml"
    cli_s = time_cli_index(repo, cli_dir, cli_cfg)
    cli_noop_s = time_cli_index(repo, cli_dir, cli_cfg)
    note(f"N={n}: CLI full {cli_s:.2f} s, CLI no-op {cli_noop_s:.2f} s")
    shutil.rmtree(cli_dir, ignore_errors=True)

    reindex: list[dict[str, Any]] = []
    for i in range(3):
        append_commits(repo, 10, seed=10_000 + i)
        r = run_child_index(repo, db)
        assert r["new_commits"] == 10, r
        reindex.append(r)
        note(f"N={n}: +10 commits re-index {r['index_s']:.3f} s")
    noop = []
    for _ in range(3):
        r = run_child_index(repo, db)
        assert r["up_to_date"], r
        noop.append(r)
    note(f"N={n}: no-op re-index {median([r['index_s'] for r in noop]):.3f} s")

    note(f"N={n}: {args.queries} queries")
    queries = bench_queries(db, args.queries, args.seed)
    note(f"N={n}: query p50 {queries['p50_ms']} ms, p95 {queries['p95_ms']} ms")
    load_after = os.getloadavg()

    last = full[-1]
    return {
        "commits": n,
        "repo": {k: v for k, v in vars(info).items() if k != "path"},
        "raw_git_log_s": {
            "command": "git log --all --name-only -p",
            "note": "--name-only suppresses -p (git diff_setup_done): no patch is produced",
            "median": raw_med, "runs": [round(x, 4) for x in raw],
        },
        "raw_git_log_patch_s": {
            "command": "git log --all -p",
            "median": raw_p_med, "runs": [round(x, 4) for x in raw_p],
        },
        "git_as_gitquarry_s": {"median": median(as_gq), "runs": [round(x, 4) for x in as_gq]},
        "full_index": {
            "median_s": full_med,
            "runs_s": [round(r["index_s"], 4) for r in full],
            "ratio_vs_raw_git": round(full_med / raw_med, 2),
            "ratio_vs_git_log_patch": round(full_med / raw_p_med, 2),
            "ratio_vs_git_as_gitquarry": round(full_med / median(as_gq), 2),
            "ratio_per_round": [
                round(r["index_s"] / g, 2) for r, g in zip(full, raw, strict=False)
            ],
            "ratio_per_round_vs_git_log_patch": [
                round(r["index_s"] / g, 2) for r, g in zip(full, raw_p, strict=False)
            ],
            "meets_target_ratio": full_med / raw_med <= TARGET_RATIO,
            "meets_target_ratio_vs_git_log_patch": full_med / raw_p_med <= TARGET_RATIO,
            "commits_per_s": round(n / full_med),
            "open_store_s": round(last["open_s"], 4),
            "close_s": round(last["close_s"], 4),
            "cpu_s": {
                "python_user": round(last["python_user_s"], 2),
                "python_sys": round(last["python_sys_s"], 2),
                "git_user": round(last["git_user_s"], 2),
                "git_sys": round(last["git_sys_s"], 2),
            },
            "peak_rss_mib": round(max(r["peak_rss_mib"] for r in full), 1),
            "git_peak_rss_mib": round(max(r["git_peak_rss_mib"] for r in full), 1),
        },
        "cli_index": {
            "full_s": round(cli_s, 3),
            "ratio_vs_raw_git": round(cli_s / raw_med, 2),
            "ratio_vs_git_log_patch": round(cli_s / raw_p_med, 2),
            "noop_s": round(cli_noop_s, 3),
        },
        "reindex_10": {
            "median_s": median([r["index_s"] for r in reindex]),
            "runs_s": [round(r["index_s"], 4) for r in reindex],
            "meets_target": median([r["index_s"] for r in reindex]) < TARGET_REINDEX_S,
        },
        "noop_reindex": {
            "median_s": median([r["index_s"] for r in noop]),
            "runs_s": [round(r["index_s"], 4) for r in noop],
        },
        "query": queries,
        "index_size": {
            "db_bytes": size,
            "db_mib": round(size / 2**20, 1),
            "bytes_per_commit": round(size / n),
            "vs_git_dir": round(size / info.git_dir_bytes, 2),
            "tables_bytes": tables,
        },
        "loadavg_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
    }


def _tree_state() -> str | None:
    """HEAD of the checkout that holds this script, with ``+dirty`` when src/ is modified."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def machine_info() -> dict[str, Any]:
    git_version = subprocess.run(
        ["git", "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        from importlib.metadata import version

        gq_version = version("gitquarry")
    except Exception:
        gq_version = None
    return {
        "cpu_count": os.cpu_count(),
        "affinity_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "git": git_version,
        "sqlite": sqlite3.sqlite_version,
        "gitquarry": gq_version,
        "gitquarry_tree": _tree_state(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_child-index"]:
        child_index(argv[1], argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commits", type=int, action="append", required=True,
                    help="repository size; repeat for several (e.g. 10000 and 100000)")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--index-runs", type=int, default=3,
                    help="full-index runs per size (median reported); raw git runs max(3, this)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", action="store_true", help="keep the workdir")
    args = ap.parse_args(argv)
    if args.queries < 1 or args.index_runs < 1:
        ap.error("--queries and --index-runs must be >= 1")

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gq-bench-history-"))
    workdir = workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    note(f"workdir {workdir}")
    out: dict[str, Any] = {
        "benchmark": "bench_history",
        "machine": machine_info(),
        "targets": {
            "full_index_vs_raw_git_max_ratio": TARGET_RATIO,
            "reindex_10_max_s": TARGET_REINDEX_S,
            "query_p95_max_ms": TARGET_P95_MS,
        },
        "params": {"queries": args.queries, "index_runs": args.index_runs, "seed": args.seed,
                   "mode": "lexical", "top_n": 10, "embeddings": False},
        "results": [],
    }
    try:
        for n in args.commits:
            out["results"].append(bench_one(n, workdir, args))
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
        elif not args.keep:
            for n in args.commits:
                shutil.rmtree(workdir / f"repo-{n}", ignore_errors=True)
                for s in ("", "-wal", "-shm"):
                    Path(str(workdir / f"index-{n}.db") + s).unlink(missing_ok=True)
                (workdir / f"cli-config-{n}.toml").unlink(missing_ok=True)
    out["total_s"] = round(time.monotonic() - T0, 1)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
