"""Lever 3 of issue 22, measured offline on an index that already holds the commit vectors:
more than one vector per commit (the v2 document vector + a message-only vector, max-sim or
mean), against the v2 vector alone, in semantic mode over every commit; plus the embedding
cost of diff-chunk vectors (how many 128-token chunks the changed lines of each commit need).

Usage::

    python benchmarks/eval_multivector.py --repo PATH --queries FILE --index-dir DIR \\
        [--vector-cache FILE] [--model DIR] [--k 10]

Queries with filters are left out (this ranks over every commit); the end-to-end figures of
whatever wins come from ``eval_history.py``. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import load_queries, make_workspace, score_results
from gitquarry.embedding import create_embedder
from gitquarry.history.index.document import default_format, diff_digest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--vector-cache", type=Path, default=None)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--cost-only", action="store_true",
                        help="only count the extra vectors (no embedding, no ranking)")
    args = parser.parse_args(argv)
    if args.vector_cache:
        from _vector_cache import install

        install(args.vector_cache)
    embedding = ("onnx", str(args.model.resolve())) if args.model else None
    ws = make_workspace(args.repo, args.index_dir, embedding=embedding)
    store = ws.open_store()
    conn = store.conn
    fmt = default_format()
    index_embedder = create_embedder(ws.config.embedding, purpose="index")
    query_embedder = create_embedder(ws.config.embedding, purpose="query")
    assert index_embedder is not None and query_embedder is not None
    ns = index_embedder.namespace(fmt.name).key
    rows = conn.execute(
        "SELECT c.id, c.hash, c.title, c.message, c.files_changed, "
        "gq_inflate(c.delta_truncated) AS delta_truncated, v.vector FROM git_commits c "
        "JOIN commit_vectors v ON v.commit_id = c.id JOIN embedding_namespaces n "
        "ON n.id = v.namespace_id WHERE n.key = ? ORDER BY c.id", (ns,)).fetchall()
    hashes = [r["hash"] for r in rows]
    dims = index_embedder.dimensions
    v2 = np.frombuffer(b"".join(r["vector"] for r in rows), dtype="<f4").reshape(-1, dims)
    messages = [f"{r['title']}\n{r['message']}".strip() for r in rows]
    msg_wall = msg_cpu = 0.0
    if not args.cost_only:
        t0, c0 = time.monotonic(), time.process_time()
        msg = index_embedder.embed(messages, max_tokens=fmt.max_tokens)
        msg_wall, msg_cpu = time.monotonic() - t0, time.process_time() - c0
    # diff-chunk cost: changed lines beyond what the 128-token document holds
    chars_per_chunk = fmt.max_chars(index_embedder.max_tokens)
    chunks = []
    for r in rows:
        _, _, changed = diff_digest(r["delta_truncated"] or "")
        text = "\n".join(changed)
        chunks.append(0 if not text else -(-len(text) // chars_per_chunk))
    variants = {"v2 document (shipped)": None, "message only": None,
                "max(v2, message)": None, "mean(v2, message)": None}
    per: dict[str, list[tuple[str | None, int | None, float]]] = {v: [] for v in variants}
    for q in [] if args.cost_only else load_queries(args.queries):
        if q.files_glob or q.after or q.before:
            continue
        qv = query_embedder.embed([q.query])[0]
        s_v2, s_msg = v2 @ qv, msg @ qv
        for name, sims in (("v2 document (shipped)", s_v2), ("message only", s_msg),
                           ("max(v2, message)", np.maximum(s_v2, s_msg)),
                           ("mean(v2, message)", (s_v2 + s_msg) / 2)):
            top = np.argsort(-sims, kind="stable")[: args.k]
            rank, recall = score_results([hashes[j] for j in top], q.relevant)
            per[name].append((q.kind, rank, recall))
    report: dict[str, Any] = {
        "repo": str(args.repo), "commits": len(rows), "k": args.k,
        "message_vectors": {"texts": len(messages), "wall_s": round(msg_wall, 1),
                            "cpu_s": round(msg_cpu, 1)},
        "diff_chunks_128": {"commits_with_changed_lines": sum(1 for c in chunks if c),
                            "chunks_total": sum(chunks),
                            "commits_over_one_chunk": sum(1 for c in chunks if c > 1),
                            "vectors_per_commit": round((len(rows) + sum(chunks)) / len(rows), 2)},
        "metrics": {},
    }
    for name, res in per.items():
        if not res:
            continue
        out: dict[str, Any] = {}
        for kind in [*sorted({k or "" for k, _, _ in res}), "all"]:
            sel = [x for x in res if kind == "all" or (x[0] or "") == kind]
            out[kind] = {"n": len(sel),
                         f"recall@{args.k}": round(sum(x[2] for x in sel) / len(sel), 4),
                         f"mrr@{args.k}": round(sum(1 / x[1] for x in sel if x[1]) / len(sel), 4)}
        report["metrics"][name] = out
    store.close()
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
