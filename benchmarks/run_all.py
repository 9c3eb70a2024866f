"""Issue 21's table in one run: every figure this script can measure beside its anchor,
alternating, several rounds; prints one table (stderr: progress) and writes
``benchmarks/results/<date>-all.json``.

Usage::

    .venv/bin/python benchmarks/run_all.py [--quick] [--repo PATH ...] [--query Q ...]
        [--rounds N] [--out FILE]

Workspaces: a synthetic repository (``_synthetic.build_repo``: 3,000 commits with
``--quick``, 20,000 without) and each ``--repo`` (a git directory or clone, cloned bare into a
temporary workspace, e.g. ``--repo /work/.mirror/pallets+flask/repo``). Each is indexed with
``gitquarry index --no-embed`` (keyword index only), then per workspace:

- ``index``: that indexing run's CPU (interpreter start, graph/docs pass and patch-ids
  included) against ``git log --all -p`` over the same refs (target ≤ 2× flask, 1.5× git.git);
- ``cold_lexical``: ``gitquarry history Q --mode lexical --json`` (a fresh process per query)
  against ``git log --all -i --all-match --grep W…`` (target ≤ 0.25 s CPU, ≤ 5× git);
- ``refs``: a fresh process's refs-per-hit cost on the persisted sets (a new
  ``RefContainment``, refresh, 10 hits' names) against the in-memory rebuild it replaced
  (``build_sets``), answers compared (target: no rebuild per query);
- ``warm_keyword``: ``bench_warm.run`` (the store open; lexical top-10 searches with globs and
  time windows, each once with FTS5 alone, the anchor, and once with the phrase terms kept
  as the MCP server keeps them, after a first pass that fills them; answers compared), CPU
  p50/p95 beside wall (target p95 ≤ 30 ms at 100k, ≤ 20 ms on git.git);
- ``mcp`` (with ``--mcp``; loads the model): ``bench_mcp_warm`` on the workspace with random
  vectors: server RSS idle and after 100 keyword / hybrid calls, hybrid server CPU per call.

And once: ``version``: ``gitquarry --version`` against ``python -c pass`` (target ≤ 0.08 s).
CPU seconds are user + system of the child (``getrusage(RUSAGE_CHILDREN)``) or of this
process (``time.process_time``), which on a shared machine tell cost from waiting; medians of
alternating rounds, with the load average before and after. Figures of the issue this script
does not measure are listed under ``skipped`` with the benchmark that does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SKIPPED = {
    "cold_hybrid": "needs an embedded index and the model: benchmarks/bench_cli_startup.py, "
                   "bench_hybrid.py",
    "mcp_warm_hybrid": "with --mcp (loads the model): bench_mcp_warm.py",
    "hybrid_p95_100k": "needs embeddings at 100k: bench_hybrid.py",
    "repo_docs": "bench_docs.py (cold CLI full-text, warm p95, chunking)",
    "embedding": "bench_embedding_runtime.py / bench_embedding_profiles.py",
    "memory": "MCP server RSS with --mcp (bench_mcp_warm.py); web/daemon: bench_web.py, "
              "bench_daemon.py",
}
DEFAULT_QUERIES = ["fix cache", "timeout", "auth token", "parser error"]


def note(msg: str) -> None:
    print(f"[run_all {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_cpu(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
            stdout: Any = subprocess.DEVNULL) -> tuple[float, float]:
    """(CPU seconds of the child and its children, wall seconds); the command must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=stdout, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {proc.stderr[-400:]!r}")
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall)


def alternate(rounds: int, subject: Callable[[int], tuple[float, float]],
              anchor: Callable[[int], tuple[float, float]]) -> dict[str, Any]:
    """Run subject and anchor ``rounds`` times each, alternating which goes first; medians
    (ms) of CPU and wall and the ratio of the CPU medians (subject / anchor)."""
    got: dict[str, list[tuple[float, float]]] = {"subject": [], "anchor": []}
    for r in range(rounds):
        pair = [("subject", subject), ("anchor", anchor)]
        for name, fn in (pair if r % 2 == 0 else pair[::-1]):
            got[name].append(fn(r))
    out: dict[str, Any] = {"rounds": rounds}
    for name, xs in got.items():
        out[f"{name}_cpu_ms"] = round(statistics.median(x[0] for x in xs) * 1000, 2)
        out[f"{name}_wall_ms"] = round(statistics.median(x[1] for x in xs) * 1000, 2)
    anchor_cpu = out["anchor_cpu_ms"]
    out["ratio_cpu"] = round(out["subject_cpu_ms"] / anchor_cpu, 2) if anchor_cpu else None
    return out


def gitquarry() -> list[str]:
    exe = Path(sys.executable).parent / "gitquarry"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "gitquarry"]


def quiet_env(state: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITQUARRY_")}
    return {**env, "XDG_STATE_HOME": str(state), "GITQUARRY_CONFIG": "/dev/null"}


def git_dir(ws: Path) -> Path:
    found = sorted(p for p in ws.iterdir() if p.name.endswith(".git") or (p / ".git").exists())
    return found[0]


def figure_version(rounds: int, env: dict[str, str]) -> dict[str, Any]:
    res = alternate(rounds, lambda _r: run_cpu([*gitquarry(), "--version"], env=env),
                    lambda _r: run_cpu([sys.executable, "-c", "pass"], env=env))
    return {**res, "subject": "gitquarry --version", "anchor": "python -c pass",
            "target": "<= 80 ms CPU", "met": res["subject_cpu_ms"] <= 80}


def figure_index(ws: Path, rounds: int, env: dict[str, str]) -> dict[str, Any]:
    repo = git_dir(ws)

    def index(_r: int) -> tuple[float, float]:
        shutil.rmtree(ws / ".gitquarry", ignore_errors=True)
        return run_cpu([*gitquarry(), "index", "--no-embed", "-q", str(ws)], env=env)

    def git_log(_r: int) -> tuple[float, float]:
        return run_cpu(["git", "-C", str(repo), "log", "--all", "-p"], env=env)

    res = alternate(rounds, index, git_log)
    if not (ws / ".gitquarry").exists():  # the last round ran git second: index once more
        index(0)
    return {**res, "subject": "gitquarry index --no-embed (fresh)",
            "anchor": "git log --all -p", "target": "<= 2x (flask), <= 1.5x (git.git)"}


def figure_cold_lexical(ws: Path, queries: list[str], rounds: int,
                        env: dict[str, str]) -> dict[str, Any]:
    repo = git_dir(ws)

    def cli(r: int) -> tuple[float, float]:
        q = queries[r % len(queries)]
        return run_cpu([*gitquarry(), "history", q, "--mode", "lexical", "--json"], cwd=ws,
                       env=env)

    def git_grep(r: int) -> tuple[float, float]:
        words = queries[r % len(queries)].split()
        return run_cpu(["git", "-C", str(repo), "log", "--all", "-i", "--all-match",
                        *[f"--grep={w}" for w in words], "--format=%H"], env=env)

    res = alternate(rounds, cli, git_grep)
    return {**res, "subject": "gitquarry history Q --mode lexical --json",
            "anchor": "git log --all -i --all-match --grep", "queries": queries,
            "target": "<= 250 ms CPU and <= 5x git", "met": res["subject_cpu_ms"] <= 250}


def figure_refs(ws: Path, rounds: int) -> dict[str, Any]:
    from gitquarry.history.refs_contain import RefContainment, build_sets, persisted_digest
    from gitquarry.store import open_store

    store = open_store(ws / ".gitquarry" / "index.db")
    try:
        conn = store.conn
        ids = [int(i) for (i,) in conn.execute("SELECT id FROM git_commits")]
        rng = random.Random(0)
        equal = True
        persisted = persisted_digest(conn) == RefContainment.digest(
            RefContainment._fingerprint(conn))

        def cold(r: int) -> tuple[float, float]:
            hits = rng.sample(ids, min(10, len(ids)))
            c, t = time.process_time(), time.perf_counter()
            ref_sets = RefContainment()
            ref_sets.refresh(conn)
            got = [ref_sets.names(h, 10) for h in hits]
            spent = (time.process_time() - c, time.perf_counter() - t)
            nonlocal equal
            fresh = RefContainment()
            fresh._sets, fresh._names, fresh._tag_bits = build_sets(conn)
            equal = equal and got == [fresh.names(h, 10) for h in hits]
            return spent

        def rebuild(_r: int) -> tuple[float, float]:
            c, t = time.process_time(), time.perf_counter()
            build_sets(conn)
            return (time.process_time() - c, time.perf_counter() - t)

        res = alternate(rounds, cold, rebuild)
        refs = int(conn.execute("SELECT count(*) FROM repo_refs").fetchone()[0])
    finally:
        store.close()
    return {**res, "subject": "fresh RefContainment on the persisted sets, 10 hits",
            "anchor": "in-memory rebuild (build_sets), what every cold query paid",
            "persisted": persisted, "answers_equal": equal, "commits": len(ids), "refs": refs,
            "target": "no rebuild per cold query", "met": persisted and equal}


def figure_warm_keyword(ws: Path, n: int) -> dict[str, Any]:
    """``bench_warm.run``: each query once per side, FTS5 alone (the anchor) and with the
    phrase terms kept (``history.phrase_cache``, as the MCP server runs), after a first pass
    that fills them; answers compared."""
    from bench_warm import run

    res = run(ws / ".gitquarry" / "index.db", n, 1, "lexical", None)
    warm = res["warm"]
    return {
        "subject": "search_git_history lexical top 10, store open, phrase terms kept",
        "anchor": "the same searches, FTS5 alone (alternating per query)",
        "cpu_p50_ms": warm["cache"]["cpu_p50_ms"], "cpu_p95_ms": warm["cache"]["cpu_p95_ms"],
        "wall_p50_ms": warm["cache"]["wall_p50_ms"],
        "wall_p95_ms": warm["cache"]["wall_p95_ms"],
        "anchor_cpu_p50_ms": warm["fts5"]["cpu_p50_ms"],
        "anchor_cpu_p95_ms": warm["fts5"]["cpu_p95_ms"],
        "first_pass": res["first_pass"], "identical": res["identical"],
        "target": "CPU p95 <= 30 ms at 100k commits, <= 20 ms on git.git",
    }


def figure_mcp(ws: Path, calls: int) -> dict[str, Any]:
    """``bench_mcp_warm`` on the workspace after random vectors fill its index (the query
    vectors come from the real model): server RSS idle and after ``calls`` keyword and
    hybrid calls, server CPU per call."""
    from bench_hybrid import fill_random_vectors

    fill_random_vectors(ws / ".gitquarry" / "index.db")
    proc = subprocess.run(
        [sys.executable, str(HERE / "bench_mcp_warm.py"), "--project", str(ws),
         "--calls", str(calls)], capture_output=True, text=True, check=True)
    res: dict[str, Any] = json.loads(proc.stdout)
    res["target"] = ("idle <= 80 MB RSS, <= 250 MB after 100 hybrid calls, "
                     "hybrid <= 40 ms server CPU per call")
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, fewer rounds")
    ap.add_argument("--repo", action="append", default=[], type=Path,
                    help="a real repository to clone and measure (repeatable)")
    ap.add_argument("--query", action="append", default=[], help="cold-query text")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--commits", type=int, default=None, help="synthetic repository size")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--mcp", action="store_true",
                    help="also the MCP server's memory and CPU per call (loads the model)")
    args = ap.parse_args(argv)
    rounds = args.rounds or (5 if args.quick else 9)
    commits = args.commits or (3000 if args.quick else 20000)
    queries = args.query or DEFAULT_QUERIES
    started = time.monotonic()
    load_before = os.getloadavg()
    out: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "quick": args.quick, "rounds": rounds, "cpus": os.cpu_count(),
        "load_before": load_before, "python": sys.version.split()[0],
        "skipped": dict(SKIPPED), "workspaces": {}}
    with tempfile.TemporaryDirectory(prefix="gq-run-all-") as tmp:
        root = Path(tmp)
        env = quiet_env(root / "state")
        # the in-process figures (refs, warm keyword) open the indexes the child processes
        # built: the same state directory, so their owner tokens are this run's (issue 19 §2)
        os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]
        note("version")
        out["version"] = figure_version(rounds * 2, env)
        from _synthetic import build_repo

        spaces: list[tuple[str, Path]] = []
        synth = root / "ws-synthetic"
        synth.mkdir()
        note(f"synthetic repository, {commits} commits")
        build_repo(synth / "synth", commits, checkout=False)
        spaces.append((f"synthetic-{commits}", synth))
        for repo in args.repo:
            name = repo.resolve().parent.name if repo.name in ("repo", ".git") else repo.stem
            ws = root / f"ws-{name}"
            ws.mkdir()
            subprocess.run(["git", "clone", "-q", "--bare", "--no-local", str(repo),
                            str(ws / f"{name}.git")], check=True)
            spaces.append((name, ws))
        for name, ws in spaces:
            fig: dict[str, Any] = {}
            note(f"{name}: index (fresh) vs git log -p")
            fig["index"] = figure_index(ws, 1 if args.quick else 3, env)
            note(f"{name}: cold lexical history vs git log --grep")
            fig["cold_lexical"] = figure_cold_lexical(ws, queries, rounds, env)
            note(f"{name}: refs per hit, persisted vs rebuild")
            fig["refs"] = figure_refs(ws, rounds)
            note(f"{name}: warm keyword queries")
            fig["warm_keyword"] = figure_warm_keyword(ws, 100 if args.quick else 200)
            if args.mcp:
                note(f"{name}: MCP server memory and CPU per call")
                fig["mcp"] = figure_mcp(ws, 100)
            out["workspaces"][name] = fig
    out["load_after"] = os.getloadavg()
    out["seconds"] = round(time.monotonic() - started, 1)
    print_table(out)
    path = args.out or HERE / "results" / f"{datetime.date.today().isoformat()}-all.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    note(f"wrote {path} ({out['seconds']} s)")
    return 0


def print_table(out: dict[str, Any]) -> None:
    rows = [("figure", "subject CPU ms", "anchor CPU ms", "ratio", "target")]
    v = out["version"]
    rows.append(("gitquarry --version", f"{v['subject_cpu_ms']}", f"{v['anchor_cpu_ms']}",
                 f"{v['ratio_cpu']}x", v["target"]))
    for name, fig in out["workspaces"].items():
        for key in ("index", "cold_lexical", "refs"):
            f = fig[key]
            rows.append((f"{name}: {key}", f"{f['subject_cpu_ms']}", f"{f['anchor_cpu_ms']}",
                         f"{f['ratio_cpu']}x", f["target"]))
        w = fig["warm_keyword"]
        rows.append((f"{name}: warm keyword p50/p95", f"{w['cpu_p50_ms']}/{w['cpu_p95_ms']}",
                     f"{w['anchor_cpu_p50_ms']}/{w['anchor_cpu_p95_ms']}",
                     "same answers" if w["identical"] else "ANSWERS DIFFER", w["target"]))
        if "mcp" in fig:
            m = fig["mcp"]
            rows.append((f"{name}: MCP RSS idle / after 100 hybrid MB",
                         f"{m['hybrid']['idle']['VmRSS']}/{m['hybrid']['after_calls']['VmRSS']}",
                         "-", "-", "<= 80 / <= 250"))
            rows.append((f"{name}: MCP hybrid server CPU p50/p95",
                         f"{m['hybrid']['server_cpu_p50_ms']}/{m['hybrid']['server_cpu_p95_ms']}",
                         "-", "-", "<= 40 ms"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print(f"load {out['load_before'][0]:.1f} -> {out['load_after'][0]:.1f}; "
          f"skipped: {', '.join(out['skipped'])} (see the JSON for the benchmark of each)")


if __name__ == "__main__":
    raise SystemExit(main())
