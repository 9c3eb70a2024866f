"""Embedding profiles side by side on a relevance set: semantic and hybrid Recall@k / MRR@k of
the default model (``fast``) and of encoder directories (provider ``onnx``, e.g. ``accurate``)
over the same commits, documents and queries (issue 13).

    python benchmarks/eval_history.py --repo /tmp/click \\
        --queries benchmarks/relevance/click_queries.jsonl --index-dir /tmp/idx-click
    python benchmarks/eval_profiles.py --repo /tmp/click --index-dir /tmp/idx-click \\
        --queries benchmarks/relevance/click_queries.jsonl --cache /tmp/profile-vectors \\
        --profile accurate=/opt/models/mpnet-int8 [--sample 800 --seed 13]

The index (history rows) must exist (``eval_history`` builds it). Each profile embeds the
commit documents exactly as indexing does (the default document format, built with the
model's own length, cut at the format's token budget) and caches them in ``--cache`` (keyed
by model id, format and commit list; an interrupted run resumes). ``--sample N`` embeds and
ranks only N commits: every commit any query judges relevant (all ``a=b`` alternatives) plus
random others (``--seed``), so a slow model can be compared on a CPU-starved machine; the
same commits for every profile. ``--sample 0`` (default) ranks all commits.

Per query: **semantic** = the commits passing the query's filters ranked by cosine to the
query's vector (top 50); **hybrid** = that list fused with the keyword ranking (``gitquarry
history --mode lexical``, top 50, restricted to the same commits) by the default RRF (k = 20,
weights by query shape). This harness skips the result pipeline and the introduction-question
ordering, so its figures compare profiles with each other; ``eval_history --embedding onnx
DIR`` gives the full pipeline's figures when the whole repository can be embedded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_history import Query, build_index, load_queries, make_workspace, score_results
from gitquarry.embedding.base import Embedder
from gitquarry.embedding.minilm import MiniLMOnnxEmbedder
from gitquarry.embedding.onnx_dir import OnnxDirEmbedder
from gitquarry.history.index.document import default_format
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval.filters import compile_glob
from gitquarry.retrieval.fusion import SHAPE_WEIGHTS, rrf_fuse

CANDIDATES = 50
CHUNK = 50


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def choose(rows: list[Any], queries: list[Query], sample: int, seed: int) -> list[int]:
    """Row positions to rank: all, or the judged commits plus random others up to ``sample``."""
    if sample <= 0 or sample >= len(rows):
        return list(range(len(rows)))
    wanted = {alt for q in queries for r in q.relevant for alt in r.split("=")}
    judged = [i for i, r in enumerate(rows) if any(r["hash"].startswith(w) for w in wanted)]
    others = [i for i in range(len(rows)) if i not in set(judged)]
    random.Random(seed).shuffle(others)
    return sorted(judged + others[: max(sample - len(judged), 0)])


def doc_vectors(name: str, embedder: Embedder, rows: list[Any], cache: Path) -> np.ndarray:
    """The documents of ``rows`` embedded as indexing does, ``(n, d)``, cached in chunks."""
    fmt = default_format()
    texts = [fmt.build(r, embedder.max_tokens) for r in rows]
    key = f"{embedder.model}-{fmt.name}-{len(rows)}-{rows[0]['hash'][:8]}-{rows[-1]['hash'][:8]}"
    path = cache / (key.replace("/", "_") + ".npy")
    done = np.load(path) if path.is_file() else np.zeros((0, embedder.dimensions), "float32")
    started, initial = time.monotonic(), len(done)
    budget = min(fmt.max_tokens, embedder.max_tokens)
    for start in range(len(done), len(texts), CHUNK):
        part = embedder.embed(texts[start : start + CHUNK], max_tokens=budget)
        done = np.concatenate([done, part])
        np.save(path, done)
        rate = (len(done) - initial) / max(time.monotonic() - started, 1e-9)
        log(f"{name}: {len(done)}/{len(texts)} documents ({rate:.2f}/s since start)")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--profile", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    embedders: dict[str, Embedder] = {"fast": MiniLMOnnxEmbedder(threads=args.threads)}
    for spec in args.profile:
        name, _, directory = spec.partition("=")
        if not directory or name in embedders:
            parser.error(f"--profile takes NAME=DIR with a new NAME, not {spec!r}")
        embedders[name] = OnnxDirEmbedder(Path(directory), threads=args.threads)
    workspace = make_workspace(args.repo, args.index_dir)
    build_index(workspace, embed=False)
    queries = load_queries(args.queries)
    searcher = HistorySearcher(workspace)
    try:
        all_rows = searcher.store.conn.execute(
            "SELECT id, hash, title, message, author, committer, files_changed, "
            "gq_inflate(delta_truncated) AS delta_truncated, timestamp FROM git_commits "
            "ORDER BY timestamp DESC, id DESC"
        ).fetchall()
        rows = [all_rows[i] for i in choose(all_rows, queries, args.sample, args.seed)]
        hashes = [r["hash"] for r in rows]
        in_corpus = set(hashes)
        stamps = np.array([r["timestamp"] for r in rows])
        files = [json.loads(r["files_changed"]) for r in rows]
        log(f"{len(rows)} of {len(all_rows)} commits; profiles "
            f"{ {n: e.model for n, e in embedders.items()} }")
        mats = {name: doc_vectors(name, e, rows, args.cache) for name, e in embedders.items()}
        per_query: list[dict[str, Any]] = []
        for q in queries:
            allowed = np.ones(len(rows), dtype=bool)
            if q.after is not None:
                allowed &= stamps >= q.after
            if q.before is not None:
                allowed &= stamps <= q.before
            if q.files_glob:
                match = compile_glob(q.files_glob)
                allowed &= np.array([any(match(f) for f in fs) for fs in files])
            lexical = searcher.search(q.query, top_n=CANDIDATES if args.sample <= 0 else 100,
                                      files_glob=q.files_glob, after=q.after, before=q.before,
                                      mode="lexical")
            lex = [r.hash for r in lexical.results if r.hash in in_corpus][:CANDIDATES]
            weights = list(SHAPE_WEIGHTS.for_query(q.query))
            row: dict[str, Any] = {"query": q.query, "kind": q.kind}
            rank, recall = score_results(lex[: args.k], q.relevant)
            row["lexical"] = {"rank": rank, "recall": recall}
            for name, embedder in embedders.items():
                qv = embedder.embed([q.query])[0]
                score = np.where(allowed, mats[name] @ qv, -np.inf)
                top = np.argsort(-score, kind="stable")[:CANDIDATES]
                sem = [hashes[i] for i in top if np.isfinite(score[i])]
                fused = [h for h, _ in rrf_fuse([lex, sem], weights, k=20)]
                for mode, ranked in (("semantic", sem), ("hybrid", fused)):
                    rank, recall = score_results(ranked[: args.k], q.relevant)
                    row[f"{mode}/{name}"] = {"rank": rank, "recall": recall}
            per_query.append(row)
    finally:
        searcher.close()
    kinds = sorted({r["kind"] or "unlabelled" for r in per_query})
    summary: dict[str, Any] = {}
    for key in [k for k in per_query[0] if k not in ("query", "kind")]:
        for subset in ("all", *kinds):
            group = [r for r in per_query
                     if subset == "all" or (r["kind"] or "unlabelled") == subset]
            summary.setdefault(key, {})[subset] = {
                "n": len(group),
                f"recall@{args.k}": round(sum(r[key]["recall"] for r in group) / len(group), 4),
                f"mrr@{args.k}": round(sum(1 / r[key]["rank"] for r in group if r[key]["rank"])
                                       / len(group), 4),
            }
        log(f"{key}: {summary[key]['all']}")
    print(json.dumps({
        "benchmark": "embedding_profiles_relevance",
        "repo": str(args.repo.resolve()), "queries": len(queries), "k": args.k,
        "commits_ranked": len(rows), "commits_total": len(all_rows),
        "sample": args.sample, "seed": args.seed, "document_format": default_format().name,
        "models": {n: e.model for n, e in embedders.items()},
        "load": {"before": [round(x, 2) for x in load_before],
                 "after": [round(x, 2) for x in os.getloadavg()]},
        "results": summary,
        "per_query": per_query,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
