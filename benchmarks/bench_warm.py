"""Warm query latency in a long-lived process, with and without ``history.phrase_cache``
(issue 21 target 3). Prints one JSON object.

For an existing index (``--db``), the store open as the MCP server keeps it:

1. ``--queries`` queries (``bench_history.make_queries``: 1-3 words of the synthetic
   vocabulary, 20 % with a broad files glob, 20 % with a time window, 10 % both; or the JSON
   lines of ``--query-file``), ``top_n`` 10, each run **twice in a row, once per side**
   (FTS5 alone, then the cache; the order swaps every query), so machine load hits both
   sides alike. The first pass over the queries is ``first_pass`` (the cache scans each
   phrase it has not seen: the cost of a phrase's first query); ``--passes`` more passes
   are ``warm`` (every phrase kept).
2. Per side: CPU p50/p95 (``time.process_time``: the query's own cost on a loaded machine)
   beside wall p50/p95, per query kind, and whether the two sides returned the same answers
   (hash, score, bm25 of every result: ``identical``).
3. ``--mode hybrid`` runs hybrid searches (the model loaded once before, vectors as they are
   in the index: ``bench_hybrid.fill_random_vectors`` makes random ones).
4. ``--anchor-module FILE``: a third side, ``anchor``, answered by that file loaded as the
   phrase cache (e.g. ``git show REV:src/gitquarry/history/search/phrase_cache.py``), the
   three sides rotating their order query by query: before/after in one run.
5. The postings are built by ``phrase_cache``'s background thread; before the ``warm``
   passes the benchmark waits until it is idle (``wait_idle``), so ``warm`` is the kept
   state. ``cpu`` is the process's CPU (that thread's builds included, in ``first_pass``);
   ``thread_cpu`` the query's own thread. ``footprint``: the bytes the cache keeps.

Usage::

    python benchmarks/bench_warm.py --db WS/.gitquarry/index.db [--queries 100]
        [--passes 2] [--mode lexical|hybrid] [--query-file benchmarks/queries/git-git.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_history import make_queries, pct


def _stats(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {
        "n": len(cpu),
        "cpu_p50_ms": round(statistics.median(cpu), 2),
        "cpu_p95_ms": round(pct(cpu, 95), 2),
        "wall_p50_ms": round(statistics.median(wall), 2),
        "wall_p95_ms": round(pct(wall, 95), 2),
    }


def _load(path: Path) -> list[dict[str, Any]]:
    from bench_queries_real import load_queries

    return [{**q, "kind": "file"} for q in load_queries(path)]


def _anchor_module(path: Path) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gq_anchor_phrase_cache", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(db: Path, n: int, passes: int, mode: str, query_file: Path | None,
        seed: int = 0, anchor: Path | None = None) -> dict[str, Any]:
    from gitquarry.config import Config
    from gitquarry.history.search import lexical, phrase_cache
    from gitquarry.history.search.engine import search_git_history
    from gitquarry.store.connection import open_store

    caches = {"fts5": phrase_cache, "cache": phrase_cache}
    if anchor is not None:
        caches["anchor"] = _anchor_module(anchor)

    store = open_store(db)
    semantic = None
    if mode == "hybrid":
        from gitquarry.history.search.semantic import load_semantic_ranker

        semantic = load_semantic_ranker(Config(), store)
        if semantic is None:
            raise SystemExit("hybrid: no embedding model or no vectors in this index")
        semantic.embedder().embed(["load the model"])
    t_min, t_max = store.conn.execute(
        "SELECT min(timestamp), max(timestamp) FROM git_commits").fetchone()
    total = int(store.conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    queries = _load(query_file) if query_file else make_queries(n, seed, t_min, t_max)
    for q in make_queries(10, seed + 1, t_min, t_max):  # imports, statements, first reads
        args = {k: v for k, v in q.items() if k != "kind"}
        search_git_history(store, mode=mode, semantic=semantic, top_n=10, **args)
    names = list(caches)
    for module in caches.values():
        module.clear()
    out: dict[str, Any] = {"db": str(db), "commits": total, "mode": mode,
                           "queries": len(queries), "load_before": os.getloadavg(),
                           "anchor_module": str(anchor) if anchor else None}
    identical = True
    for label, rounds in (("first_pass", 1), ("warm", passes)):
        if label == "warm" and hasattr(phrase_cache, "wait_idle"):
            t = time.process_time()
            phrase_cache.wait_idle(600.0)
            out["builder_wait_cpu_s"] = round(time.process_time() - t, 2)
        sides: dict[str, dict[str, list[float]]] = {
            s: {"wall": [], "cpu": [], "thread": []} for s in names}
        kinds: dict[str, list[float]] = {}
        for r in range(rounds):
            for i, q in enumerate(queries):
                args = {k: v for k, v in q.items() if k != "kind"}
                shift = (i + r) % len(names)
                order = names[shift:] + names[:shift]
                answers = {}
                for side in order:
                    for module in caches.values():
                        module.enable(False)
                    caches[side].enable(side != "fts5")
                    lexical.phrase_cache = caches[side]
                    if semantic is not None:  # every side pays its own query embedding
                        semantic._last_query = None
                    t, c = time.perf_counter(), time.process_time()
                    th = time.thread_time()
                    resp = search_git_history(store, mode=mode, semantic=semantic, top_n=10,
                                              **args)
                    thread = (time.thread_time() - th) * 1000
                    cpu = (time.process_time() - c) * 1000
                    wall = (time.perf_counter() - t) * 1000
                    sides[side]["wall"].append(wall)
                    sides[side]["cpu"].append(cpu)
                    sides[side]["thread"].append(thread)
                    kinds.setdefault(f"{side}:{q['kind']}", []).append(cpu)
                    answers[side] = [(x.hash, x.score, x.bm25) for x in resp.results]
                identical = identical and all(a == answers["fts5"] for a in answers.values())
        for module in caches.values():
            module.enable(False)
        lexical.phrase_cache = phrase_cache
        out[label] = {}
        for side, v in sides.items():
            out[label][side] = _stats(v["wall"], v["cpu"])
            out[label][side]["thread_cpu_p50_ms"] = round(statistics.median(v["thread"]), 2)
            out[label][side]["thread_cpu_p95_ms"] = round(pct(v["thread"], 95), 2)
        out[label]["cpu_p95_by_kind"] = {
            k: round(pct(v, 95), 2) for k, v in sorted(kinds.items())}
    out["identical"] = identical
    out["cache_stats"] = dict(phrase_cache.stats)
    if "anchor" in caches:
        out["anchor_stats"] = dict(caches["anchor"].stats)
    if hasattr(phrase_cache, "footprint"):
        out["footprint"] = phrase_cache.footprint()
    out["load_after"] = os.getloadavg()
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--mode", choices=("lexical", "hybrid"), default="lexical")
    ap.add_argument("--query-file", type=Path, default=None)
    ap.add_argument("--anchor-module", type=Path, default=None,
                    help="a phrase_cache.py to run as a third side (before/after)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(json.dumps(run(args.db, args.queries, args.passes, args.mode, args.query_file,
                         seed=args.seed, anchor=args.anchor_module), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
