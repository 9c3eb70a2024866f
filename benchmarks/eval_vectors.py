"""Several vectors per commit: does max-similarity over a message vector and a diff vector
(or the whole document's) beat one document vector? Side by side on several relevance sets.

    python benchmarks/eval_vectors.py --cache /tmp/vec-cache \\
        --set shop=/tmp/shop:benchmarks/relevance/queries.jsonl:/tmp/idx-shop \\
        --set click=/tmp/click:benchmarks/relevance/click_queries.jsonl:/tmp/idx-click \\
        > benchmarks/results/vectors-<date>.json

Each set's index must already hold the default model's document vectors (``eval_history``
builds it). This script adds, per commit, a **message** vector (title and message) and a
**diff** vector (the v2 document without title and message: paths, hunk contexts,
identifiers, changed lines), both at the document budget (128 tokens), cached in ``--cache``
as ``.npy``. Per query it ranks every commit that passes the query's filters by each
similarity variant (``doc``; ``message``; ``diff``; ``max(...)`` of several; ``doc+message``,
the sum), takes the top 50, and fuses that with the keyword ranking (``gitquarry history
--mode lexical``, top 50, default pipeline) by the default RRF (k = 20, weights by query
shape). This harness skips the result pipeline after fusion and the introduction-question
ordering, so its hybrid figures are comparable with each other, not with ``eval_history``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_history import build_index, load_queries, make_workspace, score_results
from gitquarry.embedding.minilm import MiniLMOnnxEmbedder
from gitquarry.history.index.document import DEFAULT_FORMAT, DocumentFormat
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval.filters import compile_glob
from gitquarry.retrieval.fusion import SHAPE_WEIGHTS, rrf_fuse

CANDIDATES = 50
VARIANTS: dict[str, tuple[str, ...]] = {
    "doc": ("doc",),
    "message": ("message",),
    "diff": ("diff",),
    "max(message,diff)": ("message", "diff"),
    "max(doc,message)": ("doc", "message"),
    "max(doc,diff)": ("doc", "diff"),
    "max(doc,message,diff)": ("doc", "message", "diff"),
    "doc+message": ("doc", "+message"),
}


def texts(rows: list[Any]) -> dict[str, list[str]]:
    fmt: DocumentFormat = DEFAULT_FORMAT
    message = [f"{r['title']}\n{r['message'] or ''}".strip() for r in rows]
    diff = [fmt.build({**dict(r), "title": "", "message": ""}, 256).strip() or r["title"]
            for r in rows]
    return {"message": message, "diff": diff}


def vectors(name: str, kind: str, items: list[str], cache: Path,
            embedder: MiniLMOnnxEmbedder) -> np.ndarray:
    path = cache / f"{name}-{kind}-t{DEFAULT_FORMAT.max_tokens}.npy"
    if path.is_file():
        cached = np.load(path)
        if cached.shape[0] == len(items):
            return cached
    started = time.monotonic()
    out = np.concatenate([
        embedder.embed(items[i : i + 64], max_tokens=DEFAULT_FORMAT.max_tokens)
        for i in range(0, len(items), 64)
    ]) if items else np.zeros((0, embedder.dimensions), dtype=np.float32)
    print(f"{name}/{kind}: {len(items)} vectors in {time.monotonic() - started:.0f} s",
          file=sys.stderr, flush=True)
    np.save(path, out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, dest="sets",
                        help="NAME=REPO:QUERIES:INDEX_DIR")
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    embedder = MiniLMOnnxEmbedder(threads=args.threads)
    out: dict[str, Any] = {"k": args.k, "loadavg": list(os.getloadavg()), "sets": {},
                           "document_format": DEFAULT_FORMAT.name}
    for spec in args.sets:
        name, _, rest = spec.partition("=")
        repo, queries_path, index_dir = rest.split(":")
        workspace = make_workspace(Path(repo), index_dir)
        build_index(workspace, embed=True)
        queries = load_queries(Path(queries_path))
        searcher = HistorySearcher(workspace)
        conn = searcher.store.conn
        semantic = searcher.semantic()
        rows = conn.execute(
            "SELECT id, hash, title, message, files_changed, "
            "gq_inflate(delta_truncated) AS delta_truncated, timestamp, "
            "author, committer, author_time, parents, is_merge FROM git_commits ORDER BY id"
        ).fetchall()
        ids = np.array([r["id"] for r in rows])
        hashes = [r["hash"] for r in rows]
        stamps = np.array([r["timestamp"] for r in rows])
        files = [json.loads(r["files_changed"]) for r in rows]
        stored = dict(conn.execute(
            "SELECT commit_id, vector FROM commit_vectors WHERE namespace_id = ?",
            (semantic.namespace_id,)))
        if len(stored) != len(rows):
            raise SystemExit(f"error: {name}: {len(stored)} of {len(rows)} commits embedded")
        mats = {"doc": np.stack([np.frombuffer(stored[i], dtype="<f4") for i in ids])}
        for kind, items in texts(rows).items():
            mats[kind] = vectors(name, kind, items, args.cache, embedder)
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
            lexical = searcher.search(q.query, top_n=CANDIDATES, files_glob=q.files_glob,
                                      after=q.after, before=q.before, mode="lexical")
            lex_hashes = [r.hash for r in lexical.results]
            qv = embedder.embed([q.query])[0]
            sims = {kind: m @ qv for kind, m in mats.items()}
            weights = list(SHAPE_WEIGHTS.for_query(q.query))
            row: dict[str, Any] = {"query": q.query, "kind": q.kind}
            for variant, parts in VARIANTS.items():
                if parts[-1].startswith("+"):
                    score = sims[parts[0]] + sims[parts[1][1:]]
                else:
                    score = np.max(np.stack([sims[p] for p in parts]), axis=0)
                score = np.where(allowed, score, -np.inf)
                top = np.argsort(-score, kind="stable")[:CANDIDATES]
                sem_hashes = [hashes[i] for i in top if np.isfinite(score[i])]
                fused = [h for h, _ in rrf_fuse([lex_hashes, sem_hashes], weights, k=20)]
                for mode, ranked in (("semantic", sem_hashes), ("hybrid", fused)):
                    rank, recall = score_results(ranked[: args.k], q.relevant)
                    row[f"{mode}/{variant}"] = {"rank": rank, "recall": recall}
            per_query.append(row)
        searcher.close()
        summary: dict[str, Any] = {}
        for key in per_query[0]:
            if "/" not in key:
                continue
            for subset, group in (("all", per_query),
                                  ("paraphrase", [r for r in per_query
                                                  if r["kind"] == "paraphrase"])):
                if not group:
                    continue
                summary.setdefault(key, {})[subset] = {
                    "n": len(group),
                    f"recall@{args.k}": round(sum(r[key]["recall"] for r in group)
                                              / len(group), 4),
                    f"mrr@{args.k}": round(sum(1 / r[key]["rank"] for r in group
                                               if r[key]["rank"]) / len(group), 4),
                }
        out["sets"][name] = {"repo": repo, "queries": len(queries), "commits": len(rows),
                             "results": summary}
        for key, value in summary.items():
            print(f"{name} {key}: {value['all']}", file=sys.stderr, flush=True)
    out["loadavg_after"] = list(os.getloadavg())
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
