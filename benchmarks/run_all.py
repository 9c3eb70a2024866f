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
- ``cold_lexical_typer``: the same command through the Typer app (``GITQUARRY_FAST=0``: what
  every cold search paid before ``cli/fast.py``), beside the same anchor;
- ``thin_client``: the same command while a daemon runs (``gitquarry daemon run`` with this
  run's environment and a private runtime directory): the client's own CPU (the daemon's
  CPU per query reported beside it, from ``/proc``), against the same anchor, CPU and wall
  (target ≤ 60 ms client CPU, ≤ 2× git wall); the daemon's answer is checked equal to the
  local one first;
- ``merge_fold``: the merge fold's brought-in commits for the newest merges (300 with
  ``--quick``), from the index's commit generations against ``git rev-list P2 ^P1`` per merge
  (what every cold query paid per ranked merge), answers compared (s3-cold);
- ``refs``: a fresh process's refs-per-hit cost on the persisted sets (a new
  ``RefContainment``, refresh, 10 hits' names) against the in-memory rebuild it replaced
  (``build_sets``), answers compared (target: no rebuild per query);
- ``warm_keyword``: ``bench_warm.run`` (the store open; lexical top-10 searches with globs and
  time windows, each once with FTS5 alone, the anchor, and once with the phrase terms kept
  as the MCP server keeps them, after a first pass that fills them; answers compared), CPU
  p50/p95 beside wall (target p95 ≤ 30 ms at 100k, ≤ 20 ms on git.git);
- ``mcp`` (with ``--mcp``; loads the model): ``bench_mcp_warm`` on the workspace with random
  vectors: server RSS idle and after 100 keyword / hybrid calls, hybrid server CPU per call.

And once: ``cold_hybrid``: ``gitquarry history Q --mode hybrid --json`` on a synthetic
repository of ``--hybrid-commits`` commits (300) indexed *with* vectors (embedding flask's
5,572 commits would take minutes of CPU on 2 shared cores; the cold cost is the model load
and one query embedding, which do not grow with the commits), against the same git anchor on
that repository (target ≤ 0.6 s CPU); ``version``: ``gitquarry --version`` against
``python -c pass`` (target ≤ 0.08 s).
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
    """This environment without gitquarry's variables, and with byte-code caching on
    (``PYTHONDONTWRITEBYTECODE`` would make every child compile the sources again: a cost
    no installed copy pays)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GITQUARRY_") and k != "PYTHONDONTWRITEBYTECODE"}
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


def figure_cold_lexical_typer(ws: Path, queries: list[str], rounds: int,
                              env: dict[str, str]) -> dict[str, Any]:
    res = figure_cold_lexical(ws, queries, rounds, {**env, "GITQUARRY_FAST": "0"})
    return {**res, "subject": "gitquarry history Q --mode lexical --json, Typer app "
            "(GITQUARRY_FAST=0)", "target": "reference (the path before cli/fast.py)",
            "met": None}


def figure_cold_hybrid(ws: Path, queries: list[str], rounds: int,
                       env: dict[str, str]) -> dict[str, Any]:
    repo = git_dir(ws)

    def cli(r: int) -> tuple[float, float]:
        q = queries[r % len(queries)]
        return run_cpu([*gitquarry(), "history", q, "--mode", "hybrid", "--json"], cwd=ws,
                       env=env)

    def git_grep(r: int) -> tuple[float, float]:
        words = queries[r % len(queries)].split()
        return run_cpu(["git", "-C", str(repo), "log", "--all", "-i", "--all-match",
                        *[f"--grep={w}" for w in words], "--format=%H"], env=env)

    probe = subprocess.run([*gitquarry(), "history", queries[0], "--mode", "hybrid", "--json"],
                           cwd=ws, env=env, capture_output=True, check=True)
    effective = json.loads(probe.stdout).get("effective_mode")
    res = alternate(rounds, cli, git_grep)
    return {**res, "subject": "gitquarry history Q --mode hybrid --json (embedded index)",
            "anchor": "git log --all -i --all-match --grep", "queries": queries,
            "effective_mode": effective, "target": "<= 600 ms CPU",
            "met": res["subject_cpu_ms"] <= 600 and effective == "hybrid"}


def _proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_PER_CALL = ('"checked_at": ', '"next_cursor": ')


def _same_answer(a: bytes, b: bytes) -> bool:
    """Two answers equal but for the per-call clock and cursor pin id."""
    def norm(raw: bytes) -> list[str]:
        return [line.split(": ")[0] if line.strip().startswith(_PER_CALL) else line
                for line in raw.decode().splitlines()]
    return norm(a) == norm(b)


def figure_thin_client(ws: Path, queries: list[str], rounds: int,
                       env: dict[str, str]) -> dict[str, Any]:
    """The cold command answered by a running daemon (see the module docstring)."""
    repo = git_dir(ws)
    runtime = Path(tempfile.mkdtemp(prefix="gqrt", dir="/tmp"))  # short, private socket path
    denv = {**env, "XDG_RUNTIME_DIR": str(runtime)}
    err = open(runtime / "daemon.err", "wb")  # noqa: SIM115
    daemon = subprocess.Popen([*gitquarry(), "daemon", "run"], env=denv,
                              stdin=subprocess.DEVNULL, stdout=err, stderr=err)
    daemon_cpu: list[float] = []
    try:
        deadline = time.monotonic() + 60
        while subprocess.run([*gitquarry(), "daemon", "status", "--json"], env=denv,
                             capture_output=True).returncode != 0:
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise RuntimeError("the daemon did not start: "
                                   + (runtime / "daemon.err").read_text()[-400:])
            time.sleep(0.2)
        argv = [*gitquarry(), "history", queries[0], "--mode", "lexical", "--json"]
        before = _proc_cpu_s(daemon.pid)
        via = subprocess.run(argv, cwd=ws, env=denv, capture_output=True, check=True)
        answered_by_daemon = _proc_cpu_s(daemon.pid) > before
        local = subprocess.run(argv, cwd=ws, env={**denv, "GITQUARRY_FAST": "local"},
                               capture_output=True, check=True)
        equal = _same_answer(via.stdout, local.stdout)

        def thin(r: int) -> tuple[float, float]:
            q = queries[r % len(queries)]
            start = _proc_cpu_s(daemon.pid)
            got = run_cpu([*gitquarry(), "history", q, "--mode", "lexical", "--json"],
                          cwd=ws, env=denv)
            daemon_cpu.append(_proc_cpu_s(daemon.pid) - start)
            return got

        def git_grep(r: int) -> tuple[float, float]:
            words = queries[r % len(queries)].split()
            return run_cpu(["git", "-C", str(repo), "log", "--all", "-i", "--all-match",
                            *[f"--grep={w}" for w in words], "--format=%H"], env=denv)

        res = alternate(rounds, thin, git_grep)
    finally:
        subprocess.run([*gitquarry(), "daemon", "stop"], env=denv, capture_output=True)
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
        err.close()
        shutil.rmtree(runtime, ignore_errors=True)
    ratio_wall = (round(res["subject_wall_ms"] / res["anchor_wall_ms"], 2)
                  if res["anchor_wall_ms"] else None)
    return {**res, "subject": "gitquarry history Q --mode lexical --json, daemon running "
            "(client CPU)", "anchor": "git log --all -i --all-match --grep",
            "daemon_cpu_ms_median": round(statistics.median(daemon_cpu) * 1000, 2),
            "ratio_wall": ratio_wall, "answered_by_daemon": answered_by_daemon,
            "answer_equal_to_local": equal,
            "target": "<= 60 ms client CPU and <= 2x git wall",
            "met": (res["subject_cpu_ms"] <= 60 and ratio_wall is not None
                    and ratio_wall <= 2 and answered_by_daemon and equal)}


def figure_refs(ws: Path, rounds: int) -> dict[str, Any]:
    from gitquarry.history.index.refs_contain import RefContainment, build_sets, persisted_digest
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


def figure_merge_fold(ws: Path, limit: int) -> dict[str, Any]:
    """The merge fold's "which commits did this merge bring in" for up to ``limit`` merges:
    from the index's commit generations (``history.index.generations``, what a query now
    does) against one ``git rev-list P2 ^P1`` per merge (what it did), answers compared."""
    from gitquarry.gitio.ancestry import merged_commits
    from gitquarry.history.index.generations import ASK_GIT, brought_in, current_generations
    from gitquarry.history.index.refs_contain import RefContainment
    from gitquarry.history.search.candidate_stream import MAX_MERGED
    from gitquarry.store import open_store

    store = open_store(ws / ".gitquarry" / "index.db")
    try:
        conn = store.conn
        current = current_generations(conn, RefContainment.digest(
            RefContainment._fingerprint(conn)))
        merges = [str(p).split() for (p,) in conn.execute(
            "SELECT parents FROM git_commits WHERE is_merge = 1 ORDER BY id DESC LIMIT ?",
            (limit,))]
        repo = git_dir(ws).resolve()
        if (repo / ".git").is_dir():  # a work tree (the synthetic one): git's own directory,
            repo = repo / ".git"  # for ``--git-dir`` (else git fails and every answer "differs")
        index_cpu = git_cpu = 0.0
        equal = ask = differ = 0
        for parents in merges:
            c = time.process_time()
            got = brought_in(conn, parents, limit=MAX_MERGED) if current else ASK_GIT
            index_cpu += time.process_time() - c
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            c = time.process_time()
            want = merged_commits(repo, parents, limit=MAX_MERGED)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            git_cpu += (time.process_time() - c + after.ru_utime - before.ru_utime
                        + after.ru_stime - before.ru_stime)
            if got == ASK_GIT:
                ask += 1
            elif (got is None and want is None) or (
                    isinstance(got, list) and want is not None and sorted(got) == sorted(want)):
                equal += 1
            else:
                differ += 1
    finally:
        store.close()
    n = max(1, len(merges))
    return {"merges": len(merges), "generations_current": current, "equal": equal,
            "asked_git": ask, "different": differ,
            "index_cpu_ms_per_merge": round(index_cpu * 1000 / n, 3),
            "git_cpu_ms_per_merge": round(git_cpu * 1000 / n, 3),
            "anchor": "git rev-list P2 ^P1 per merge (self + child CPU)",
            "target": "equal answers, no process per merge", "met": current and differ == 0}


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


def figure_mcp(ws: Path, calls: int, anchor: Path | None = None) -> dict[str, Any]:
    """``bench_mcp_warm`` on the workspace after random vectors fill its index (the query
    vectors come from the real model): server RSS idle and after ``calls`` keyword and
    hybrid calls, server CPU per call. With ``anchor`` (a source tree, e.g. ``git archive
    main src``) also ``bench_mcp_ab``: this checkout's server and the anchor's, calls
    alternated, answers compared."""
    from bench_hybrid import fill_random_vectors

    fill_random_vectors(ws / ".gitquarry" / "index.db")
    proc = subprocess.run(
        [sys.executable, str(HERE / "bench_mcp_warm.py"), "--project", str(ws),
         "--calls", str(calls)], capture_output=True, text=True, check=True)
    res: dict[str, Any] = json.loads(proc.stdout)
    res["target"] = ("idle <= 80 MB RSS, <= 250 MB after 100 hybrid calls, "
                     "hybrid <= 40 ms server CPU per call")
    if anchor is not None:
        ab = subprocess.run(
            [sys.executable, str(HERE / "bench_mcp_ab.py"), "--project", str(ws),
             "--anchor", str(anchor), "--calls", str(calls)],
            capture_output=True, text=True, check=True)
        res["ab"] = json.loads(ab.stdout)
    return res


def figure_repo_docs(source: Path, quick: bool, tmp: Path) -> dict[str, Any]:
    """Issue 21 §5 (``bench_docs.py``): chunking MiB per CPU second over ``source``'s docs,
    and at the first 100 (and, without ``--quick``, 1,000) of them the cold CLI full-text
    CPU (fast path beside the Typer app, alternating; then answered by a running daemon)
    and warm p95 in one long-lived service."""
    import bench_docs

    os.environ.setdefault("GITQUARRY_CONFIG", "/dev/null")
    (tmp / "none.toml").write_text('[embedding]\nprovider = "none"\n')  # bench_docs' index
    docs = bench_docs.source_docs(source.resolve())
    out: dict[str, Any] = {"source": str(source), "files": len(docs),
                           "chunking": bench_docs.bench_chunking(docs)["all"]}
    sizes = (100,) if quick else (100, 1000)
    out["latency"] = bench_docs.bench_latency(docs, tmp, sizes=sizes,
                                              cold_queries=4 if quick else 10)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, fewer rounds")
    ap.add_argument("--repo", action="append", default=[], type=Path,
                    help="a real repository to clone and measure (repeatable)")
    ap.add_argument("--query", action="append", default=[], help="cold-query text")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--commits", type=int, default=None, help="synthetic repository size")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--hybrid-commits", type=int, default=300,
                    help="size of the embedded synthetic repository for cold hybrid (0: skip)")
    ap.add_argument("--only-cold", action="store_true",
                    help="only the cold-CLI figures (version, cold lexical, Typer, thin "
                    "client, cold hybrid); no synthetic keyword workspace")
    ap.add_argument("--docs-source", type=Path, default=None,
                    help="a checkout with a large docs tree (e.g. fastapi): the repository-"
                    "docs figures (bench_docs.py: chunking, cold CLI, daemon, warm)")
    ap.add_argument("--mcp", action="store_true",
                    help="also the MCP server's memory and CPU per call (loads the model)")
    ap.add_argument("--mcp-anchor", type=Path, default=None,
                    help="with --mcp: a source tree to run beside this checkout's MCP "
                    "server, calls alternated (bench_mcp_ab.py)")
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
        if not args.only_cold:
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
            note(f"{name}: cold lexical through the Typer app")
            fig["cold_lexical_typer"] = figure_cold_lexical_typer(ws, queries, rounds, env)
            note(f"{name}: cold lexical answered by a running daemon")
            fig["thin_client"] = figure_thin_client(ws, queries, rounds, env)
            note(f"{name}: merge fold from the index vs git rev-list per merge")
            fig["merge_fold"] = figure_merge_fold(ws, 300 if args.quick else 2000)
            if not args.only_cold:
                note(f"{name}: refs per hit, persisted vs rebuild")
                fig["refs"] = figure_refs(ws, rounds)
                note(f"{name}: warm keyword queries")
                fig["warm_keyword"] = figure_warm_keyword(ws, 100 if args.quick else 200)
            if args.mcp:
                note(f"{name}: MCP server memory and CPU per call")
                fig["mcp"] = figure_mcp(ws, 100, args.mcp_anchor)
            out["workspaces"][name] = fig
        if args.hybrid_commits:
            hyb = root / "ws-hybrid"
            hyb.mkdir()
            note(f"cold hybrid: synthetic repository, {args.hybrid_commits} commits, embedded")
            build_repo(hyb / "synth", args.hybrid_commits, checkout=False)
            subprocess.run([*gitquarry(), "index", "-q", str(hyb)], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            out["cold_hybrid"] = {**figure_cold_hybrid(hyb, queries, rounds, env),
                                  "commits": args.hybrid_commits}
            SKIPPED.pop("cold_hybrid", None)
            out["skipped"].pop("cold_hybrid", None)
        if args.docs_source is not None:
            note(f"repository docs: {args.docs_source}")
            docs_tmp = root / "docs"
            docs_tmp.mkdir()
            out["repo_docs"] = figure_repo_docs(args.docs_source, args.quick, docs_tmp)
            SKIPPED.pop("repo_docs", None)
            out["skipped"].pop("repo_docs", None)
    out["load_after"] = os.getloadavg()
    out["seconds"] = round(time.monotonic() - started, 1)
    print_table(out)
    path = args.out or HERE / "results" / f"{datetime.date.today().isoformat()}-all.json"
    if args.out is None and path.exists():  # never overwrite another run's file
        path = path.with_name(f"{path.stem}-{time.strftime('%H%M%S')}.json")
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
        for key in ("index", "cold_lexical", "cold_lexical_typer", "thin_client", "refs"):
            if key not in fig:
                continue
            f = fig[key]
            rows.append((f"{name}: {key}", f"{f['subject_cpu_ms']}", f"{f['anchor_cpu_ms']}",
                         f"{f['ratio_cpu']}x", f["target"]))
        if "thin_client" in fig:
            t = fig["thin_client"]
            rows.append((f"{name}: thin_client wall / daemon CPU",
                         f"{t['subject_wall_ms']} wall", f"{t['anchor_wall_ms']} wall",
                         f"{t['ratio_wall']}x", f"daemon {t['daemon_cpu_ms_median']} ms CPU"))
        if "merge_fold" in fig:
            m = fig["merge_fold"]
            rows.append((f"{name}: merge fold ms/merge (index vs git)",
                         f"{m['index_cpu_ms_per_merge']}", f"{m['git_cpu_ms_per_merge']}",
                         f"{m['equal']}/{m['merges']} equal",
                         f"asked git {m['asked_git']}, differ {m['different']}"))
        if "warm_keyword" not in fig:
            continue
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
            if "ab" in m:
                ab = m["ab"]
                rows.append((f"{name}: MCP hybrid server CPU p50/p95, vs anchor tree",
                             f"{ab['this']['server_cpu_p50_ms']}/"
                             f"{ab['this']['server_cpu_p95_ms']}",
                             f"{ab['anchor']['server_cpu_p50_ms']}/"
                             f"{ab['anchor']['server_cpu_p95_ms']}",
                             "same answers" if ab["identical"] else "ANSWERS DIFFER",
                             "<= 40 ms"))
    if "cold_hybrid" in out:
        h = out["cold_hybrid"]
        rows.append((f"cold hybrid ({h['commits']} commits, {h['effective_mode']})",
                     f"{h['subject_cpu_ms']}", f"{h['anchor_cpu_ms']}", f"{h['ratio_cpu']}x",
                     h["target"]))
    if "repo_docs" in out:
        d = out["repo_docs"]
        rows.append(("docs chunking MiB/CPU-s", f"{d['chunking']['mib_per_cpu_s']}", "-", "-",
                     ">= 25"))
        for size, e in d["latency"].items():
            for key, target in (("cold_cli_no_index", "<= 400 / 800 ms"),
                                ("cold_cli_indexed", "<= 400 / 800 ms")):
                rows.append((f"docs {size}: {key} (vs Typer)", f"{e[key]['cpu_p50_ms']}",
                             f"{e[key + '_typer']['cpu_p50_ms']}",
                             f"{e[key]['cpu_p50_ms'] / e[key + '_typer']['cpu_p50_ms']:.2f}x",
                             target))
            if "cold_cli_daemon" in e:
                c = e["cold_cli_daemon"]
                rows.append((f"docs {size}: cold via daemon client/daemon",
                             f"{c['cpu_p50_ms']}/{c['daemon_cpu_p50_ms']}", "-", "-",
                             "<= 400 / 800 ms"))
            rows.append((f"docs {size}: warm p50/p95", f"{e['warm']['cpu_p50_ms']}/"
                         f"{e['warm']['cpu_p95_ms']}", "-", "-", "p95 <= 15 ms (100)"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print(f"load {out['load_before'][0]:.1f} -> {out['load_after'][0]:.1f}; "
          f"skipped: {', '.join(out['skipped'])} (see the JSON for the benchmark of each)")


if __name__ == "__main__":
    raise SystemExit(main())
