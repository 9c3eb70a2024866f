"""Hybrid search and embedding-pipeline benchmarks (issue 3). Prints one JSON object.

Measured side by side in one run:

1. ``pipeline_vs_raw``: embedding throughput of the indexing pipeline (``embed_pending``: read
   rows, build documents, embed, write vectors) against the raw model (``Embedder.embed``) on
   the same commit texts, alternating order, median of ``--rounds``.
2. ``model_load_s``: the one-time model load (first ``embed`` of one short text).
3. ``latency``: hybrid, semantic and lexical query latency p50/p95 at each size, with the model
   loaded and the vector matrix cached (as in the MCP server); also the process CPU time per
   query (``cpu_p50_ms``/``cpu_p95_ms``, all threads: the query's own cost on a loaded
   machine). Vectors for the latency runs are random unit vectors (embedding 100k commits
   takes hours on 2 cores); latency depends on the matrix size, not on the values. Query
   vectors come from the real model.
4. ``cold_cli_s``: a new ``gitquarry history`` process, hybrid, end to end, median of 5.

Usage: python benchmarks/bench_hybrid.py --commits 10000 --commits 100000 [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import build_repo
from gitquarry.config import Config
from gitquarry.embedding import create_embedder, to_blob
from gitquarry.history.index.document import default_format, text_format
from gitquarry.history.index.embed import embed_pending, ensure_namespace
from gitquarry.history.index.indexer import index_workspace
from gitquarry.history.search.engine import search_git_history
from gitquarry.history.search.semantic import load_semantic_ranker
from gitquarry.store import open_store

WORDS = ["cache", "parser", "auth token", "timeout retry", "session cookie", "fix leak",
         "rate limit", "database pool", "upload", "scheduler queue", "config loader"]
PARAPHRASES = [
    "requests hang forever when the server is slow",
    "users get logged out unexpectedly",
    "memory keeps growing in the background worker",
    "make the parser accept odd input",
    "speed up repeated lookups",
]


def log(msg: str) -> None:
    print(f"[bench_hybrid] {msg}", file=sys.stderr, flush=True)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def pipeline_vs_raw(db: Path, n_texts: int, rounds: int) -> dict:
    config = Config()
    store = open_store(db)
    embedder = create_embedder(config.embedding, purpose="index")
    assert embedder is not None
    t0 = time.monotonic()
    embedder.embed(["warm up"])
    load_s = time.monotonic() - t0
    rows = store.conn.execute(
        "SELECT id, title, message, author, committer, files_changed, "
        "gq_inflate(delta_truncated) AS delta_truncated "
        "FROM git_commits ORDER BY id LIMIT ?", (n_texts,)
    ).fetchall()
    fmt = default_format()
    texts = [fmt.build(r, embedder.max_tokens) for r in rows]
    ids = [int(r["id"]) for r in rows]
    raw_rates, pipe_rates = [], []
    for rnd in range(rounds):
        order = ["raw", "pipeline"] if rnd % 2 == 0 else ["pipeline", "raw"]
        for which in order:
            if which == "raw":
                t = time.monotonic()
                for s in range(0, len(texts), 100):
                    embedder.embed(texts[s : s + 100], max_tokens=fmt.max_tokens)
                raw_rates.append(len(texts) / (time.monotonic() - t))
            else:
                ns = ensure_namespace(store, embedder.namespace(text_format()))
                with store.atomic() as c:
                    c.execute("DELETE FROM commit_vectors WHERE namespace_id = ?", (ns,))
                    # keep only the benchmark's commits pending: pre-fill the others
                    marks = ",".join("?" * len(ids))
                    others = c.execute(
                        f"SELECT id FROM git_commits WHERE id NOT IN ({marks})", ids
                    ).fetchall()
                    zero = to_blob(np.ones(embedder.dimensions, dtype=np.float32))
                    c.executemany(
                        "INSERT INTO commit_vectors VALUES (?, ?, ?, ?)",
                        [(ns, int(o[0]), f"prefill-{o[0]}", zero) for o in others],
                    )
                t = time.monotonic()
                rep = embed_pending(store, embedder, batch_size=100)
                pipe_rates.append(rep.embedded / (time.monotonic() - t))
                with store.atomic() as c:
                    c.execute("DELETE FROM commit_vectors WHERE namespace_id = ?", (ns,))
        log(f"round {rnd}: raw {raw_rates[-1]:.1f}/s pipeline {pipe_rates[-1]:.1f}/s")
    store.close()
    raw = statistics.median(raw_rates)
    pipe = statistics.median(pipe_rates)
    return {
        "texts": len(texts),
        "rounds": rounds,
        "raw_texts_per_s": round(raw, 2),
        "pipeline_texts_per_s": round(pipe, 2),
        "pipeline_over_raw": round(pipe / raw, 3),
        "raw_runs": [round(x, 2) for x in raw_rates],
        "pipeline_runs": [round(x, 2) for x in pipe_rates],
        "model_load_s": round(load_s, 3),
    }


def fill_random_vectors(db: Path) -> int:
    store = open_store(db)
    embedder = create_embedder(Config().embedding, purpose="index")
    assert embedder is not None
    ns = ensure_namespace(store, embedder.namespace(text_format()))
    ids = [int(r[0]) for r in store.conn.execute("SELECT id FROM git_commits")]
    rng = np.random.default_rng(0)
    with store.atomic() as c:
        c.execute("DELETE FROM commit_vectors WHERE namespace_id = ?", (ns,))
        for s in range(0, len(ids), 5000):
            part = ids[s : s + 5000]
            vec = rng.standard_normal((len(part), embedder.dimensions)).astype(np.float32)
            vec /= np.linalg.norm(vec, axis=1, keepdims=True)
            c.executemany(
                "INSERT INTO commit_vectors VALUES (?, ?, ?, ?)",
                [(ns, i, f"random-{i}", to_blob(v)) for i, v in zip(part, vec, strict=True)],
            )
    store.close()
    return len(ids)


def latency(db: Path, n_queries: int) -> dict:
    config = Config()
    store = open_store(db)
    ranker = load_semantic_ranker(config, store)
    assert ranker is not None
    t0 = time.monotonic()
    ranker.embedder().embed(["load the model"])
    load_s = time.monotonic() - t0
    t0 = time.monotonic()
    search_git_history(store, "warm cache", mode="hybrid", semantic=ranker, top_n=10)
    first_query_s = time.monotonic() - t0
    rng = random.Random(1)
    out: dict = {"model_load_s": round(load_s, 3), "first_hybrid_query_s": round(first_query_s, 3)}
    lo, hi = store.conn.execute("SELECT min(timestamp), max(timestamp) FROM git_commits").fetchone()
    for mode in ("hybrid", "semantic", "lexical"):
        times: list[float] = []
        cpu: list[float] = []
        for i in range(n_queries):
            q = rng.choice(WORDS + PARAPHRASES)
            kw: dict = {}
            if i % 4 == 1:
                kw["files_glob"] = "src/**/*.py"
            if i % 4 == 2:
                kw["after"] = lo + (hi - lo) // 2
            t, c = time.perf_counter(), time.process_time()
            search_git_history(store, q, mode=mode, semantic=ranker, top_n=10, **kw)
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        out[mode] = {
            "queries": n_queries,
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(pct(times, 95), 2),
            "max_ms": round(max(times), 2),
            "cpu_p50_ms": round(statistics.median(cpu), 2),
            "cpu_p95_ms": round(pct(cpu, 95), 2),
        }
        log(f"{mode}: p50 {out[mode]['p50_ms']} ms p95 {out[mode]['p95_ms']} ms")
    store.close()
    return out


def cold_cli(repo: Path, runs: int = 5) -> dict:
    exe = Path(sys.executable).with_name("gitquarry")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gitquarry"]
    times = []
    for _ in range(runs):
        t = time.monotonic()
        subprocess.run(
            [*cmd, "history", "requests hang when the server is slow", "--mode", "hybrid",
             "--json", "--project", str(repo)],
            check=True, capture_output=True,
        )
        times.append(time.monotonic() - t)
    return {"runs": [round(x, 3) for x in times], "median_s": round(statistics.median(times), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, action="append", help="repository sizes")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--pipeline-texts", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-pipeline", action="store_true", help="latency and cold CLI only")
    args = ap.parse_args()
    sizes = args.commits or [10_000]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gq-bench-hybrid-"))
    result: dict = {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "sizes": {},
    }
    for i, n in enumerate(sizes):
        repo = workdir / f"repo-{n}"
        if not (repo / ".git").exists():
            log(f"building {n} commits")
            build_repo(repo, n, seed=0)
        db = repo / ".gitquarry" / "index.db"
        store = open_store(db)
        if not store.conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]:
            log("indexing (lexical)")
            index_workspace(repo, store, Config())
        store.close()
        entry: dict = {}
        if i == 0 and not args.skip_pipeline:
            log("pipeline vs raw")
            result["pipeline_vs_raw"] = pipeline_vs_raw(db, args.pipeline_texts, args.rounds)
        log("filling random vectors")
        entry["vectors"] = fill_random_vectors(db)
        entry["vectors_note"] = "random unit vectors (latency does not depend on values)"
        entry["latency"] = latency(db, args.queries)
        log("cold CLI")
        entry["cold_cli_hybrid"] = cold_cli(repo)
        result["sizes"][str(n)] = entry
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
