#!/usr/bin/env python3
"""Warm queries with the per-state memos (candidate_stream.STATE_MEMO, similarity.MEMO) off
and on, alternated query by query (order swapped each query); CPU p50/p95; answers equal.

Usage: bench_warm_memo.py DB lexical|hybrid QUERYFILE|- PASSES NQUERIES
"""

import json
import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
from pathlib import Path

from bench_history import make_queries, pct
from gitquarry.history.search import candidate_stream, phrase_cache
from gitquarry.history.search.engine import search_git_history
from gitquarry.retrieval import similarity
from gitquarry.store.connection import open_store

db = Path(sys.argv[1])
mode = sys.argv[2]
qf = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "-" else None
passes = int(sys.argv[4]) if len(sys.argv) > 4 else 2
nq = int(sys.argv[5]) if len(sys.argv) > 5 else 60
store = open_store(db)
semantic = None
if mode == "hybrid":
    from gitquarry.config import Config
    from gitquarry.history.search.semantic import load_semantic_ranker

    semantic = load_semantic_ranker(Config(), store)
    semantic.embedder().embed(["load"])
if qf:
    from bench_queries_real import load_queries

    qs = load_queries(Path(qf))
else:
    t0, t1 = store.conn.execute("SELECT min(timestamp), max(timestamp) FROM git_commits").fetchone()
    qs = make_queries(nq, 0, t0, t1)
qs = [{k: v for k, v in q.items() if k != "kind"} for q in qs]
phrase_cache.enable(True)
for q in qs:
    search_git_history(store, mode=mode, semantic=semantic, top_n=10, **q)
phrase_cache.wait_idle(600)
cpu = {"before": [], "after": []}
th = {"before": [], "after": []}
identical = True
for r in range(passes):
    for i, q in enumerate(qs):
        order = ["before", "after"] if (i + r) % 2 == 0 else ["after", "before"]
        ans = {}
        for side in order:
            candidate_stream.STATE_MEMO = side == "after"
            similarity.MEMO = side == "after"
            c = time.process_time()
            t = time.thread_time()
            resp = search_git_history(store, mode=mode, semantic=semantic, top_n=10, **q)
            cpu[side].append((time.process_time() - c) * 1000)
            th[side].append((time.thread_time() - t) * 1000)
            ans[side] = [
                (x.hash, x.score, x.bm25, tuple(x.refs) if hasattr(x, "refs") else None)
                for x in resp.results
            ]
        identical &= ans["before"] == ans["after"]
out = {"db": str(db), "mode": mode, "queries": len(qs), "passes": passes, "identical": identical}
for s in cpu:
    out[s] = {
        "cpu_p50_ms": round(statistics.median(cpu[s]), 2),
        "cpu_p95_ms": round(pct(cpu[s], 95), 2),
        "thread_p50_ms": round(statistics.median(th[s]), 2),
        "thread_p95_ms": round(pct(th[s], 95), 2),
    }
print(json.dumps(out, indent=1))
