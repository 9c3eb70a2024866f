"""Issue 22, the message-vector lever, end to end: a second vector per commit embedded from
its title and message only, beside the shipped document vector, in semantic and hybrid
search through the whole result pipeline (one process, same index, same queries).

Variants (``--variants``, comma-separated; default all):

* ``shipped``: the document vector alone (what ships today).
* ``max-sim``: a commit's similarity is ``max(cos(q, document), cos(q, message))``.
* ``third-list``: the message vectors rank on their own and that ranking is a third RRF list
  (hybrid: lexical, document, message with weights ``w_lex, w_sem, w_sem``; semantic: the
  two vector lists fused with equal weights).
* ``third-list-split``: as ``third-list``, the vectors' weight split between their two
  lists (``w_lex, w_sem / 2, w_sem / 2``): the vectors weigh what they weigh today.
  Both third-list variants fuse as ``engine._fuse`` does at full coverage: the shape weights,
  ``rrf_k``, then the lexical guard and the lexical floor (session 8: before, the patch
  re-fused the lists without the floor).
* ``third-list-empty``: the third-list fusion with an empty message list, a check of this
  harness: its ranks must equal ``shipped``'s in both modes (RRF over an empty third list
  is the shipped fusion), so ``third_list_fuse`` is ``engine._fuse`` up to the third list.
* ``message-only``: semantic over the message vectors alone (a reference).
* with ``--chunks`` (lever 3, multi-vector over the diff): every commit's changed lines
  (``document.diff_digest``) cut into chunks of the document's character budget, each chunk
  embedded as ``title + newline + chunk`` (the model reads 128 tokens of it).
  ``chunks-max-sim``: similarity = max over the document vector and the chunk vectors;
  ``chunks-third-list-split``: the chunk max-sim ranking as a third RRF list, weights
  ``w_lex, w_sem / 2, w_sem / 2``; ``all-max-sim``: max over document, message and chunks.

Usage::

    python benchmarks/eval_message_vector.py --repo PATH --queries FILE --index-dir DIR \\
        [--vector-cache FILE] [--variants NAME,...] [--modes semantic,hybrid]

The index must already hold the document vectors (``eval_history.py --index-dir DIR``).
The message vectors are embedded with the index embedder (the same model, ``max_tokens`` of
the document format) and cached in ``--vector-cache``; ``message_vectors`` in the output gives
their embedding cost (CPU and wall seconds for the texts not in the cache, and how many those
were). Lexical runs once (``lexical``); each variant's ``hybrid_at_least_lexical`` says, per
kind, whether hybrid R@10 is at least lexical's. Prints one JSON object
(``message_vector_choose.py`` reads it).
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

from eval_history import load_queries, make_workspace, run_queries, summarise
from gitquarry import embedding as embedding_pkg
from gitquarry.history.index.document import default_format
from gitquarry.history.search import engine as engine_mod
from gitquarry.history.search import semantic as semantic_mod
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval.fusion import rrf_fuse
from gitquarry.retrieval.vectors import cosine_top_k

VARIANTS = ("shipped", "max-sim", "third-list", "third-list-split", "third-list-empty",
            "message-only",
            "chunks-max-sim", "chunks-third-list-split", "all-max-sim")
#: variants that need the diff-chunk vectors (``--chunks``)
CHUNK_VARIANTS = ("chunks-max-sim", "chunks-third-list-split", "all-max-sim")

#: the run's state the patched functions read: the variant, message vectors by commit id,
#: and the message-only hits of the last semantic ranking (for ``third-list``)
STATE: dict[str, Any] = {"variant": "shipped", "by_id": {}, "aligned": {}, "msg_hits": None,
                         "chunk_ids": None, "chunk_vectors": None, "chunk_rows": {}}


def message_text(title: str, message: str) -> str:
    """The message document: the title, then the body (what ``git log`` shows)."""
    return f"{title}\n{message}".strip()


def _aligned(matrix: Any) -> np.ndarray:
    """Message vectors in the row order of ``matrix`` (zeros where a commit has none)."""
    key = id(matrix)
    if key not in STATE["aligned"]:
        by_id = STATE["by_id"]
        dims = matrix.vectors.shape[1]
        out = np.zeros((len(matrix.ids), dims), dtype=np.float32)
        for row, cid in enumerate(matrix.ids.tolist()):
            vec = by_id.get(int(cid))
            if vec is not None:
                out[row] = vec
        STATE["aligned"] = {key: out}
    return STATE["aligned"][key]


_ORIGINAL_TOP_K = semantic_mod._top_k


def _chunk_best(matrix: Any, q: np.ndarray) -> np.ndarray:
    """Per row of ``matrix``: the best cosine of ``q`` with that commit's chunk vectors
    (-inf for a commit without chunks)."""
    key = id(matrix)
    if key not in STATE["chunk_rows"]:
        row_of = {int(cid): n for n, cid in enumerate(matrix.ids.tolist())}
        STATE["chunk_rows"] = {key: np.array([row_of.get(int(c), -1)
                                              for c in STATE["chunk_ids"]], dtype=np.int64)}
    rows = STATE["chunk_rows"][key]
    best = np.full(len(matrix.ids), -np.inf, dtype=np.float32)
    sims = STATE["chunk_vectors"] @ q
    ok = rows >= 0
    np.maximum.at(best, rows[ok], sims[ok])
    return best


def _ranked(matrix: Any, sims: np.ndarray, mask: np.ndarray | None, limit: int
            ) -> list[tuple[int, float]]:
    """Top ``limit`` rows by ``sims`` under ``mask``, ties by commit id (exact)."""
    if mask is not None:
        sims = np.where(mask, sims, -np.inf)
    n = int(np.isfinite(sims).sum())
    k = min(limit, n)
    if k <= 0:
        return []
    top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
    kept = [int(j) for j in top.tolist() if np.isfinite(sims[j])]
    kept.sort(key=lambda j: (-float(sims[j]), int(matrix.ids[j])))
    return [(int(matrix.ids[j]), float(sims[j])) for j in kept]


def _mask(matrix: Any, filters: Any, allowed: np.ndarray | None) -> np.ndarray | None:
    mask: np.ndarray | None = None
    if filters.after is not None:
        mask = matrix.timestamps >= filters.after
    if filters.before is not None:
        below = matrix.timestamps <= filters.before
        mask = below if mask is None else mask & below
    if filters.merges in ("exclude", "only"):
        kind = matrix.merges if filters.merges == "only" else ~matrix.merges
        mask = kind if mask is None else mask & kind
    if allowed is not None:
        in_glob = np.isin(matrix.ids, allowed)
        mask = in_glob if mask is None else mask & in_glob
    return mask


def _top(matrix: Any, sims_matrix: np.ndarray, qvec: np.ndarray, mask: np.ndarray | None,
         limit: int) -> list[tuple[int, float]]:
    hits = cosine_top_k(sims_matrix, qvec, limit, mask=mask)
    order = sorted(hits, key=lambda h: (-h[1], int(matrix.ids[h[0]])))
    return [(int(matrix.ids[j]), sim) for j, sim in order]


def patched_top_k(matrix: Any, qvec: np.ndarray, filters: Any, allowed: np.ndarray | None,
                  limit: int) -> list[tuple[int, float]]:
    variant = STATE["variant"]
    if variant == "shipped":
        return _ORIGINAL_TOP_K(matrix, qvec, filters, allowed, limit)
    msg = _aligned(matrix)
    mask = _mask(matrix, filters, allowed)
    q = np.asarray(qvec, dtype=np.float32)
    if variant == "chunks-max-sim":
        return _ranked(matrix, np.maximum(matrix.vectors @ q, _chunk_best(matrix, q)), mask,
                       limit)
    if variant == "all-max-sim":
        return _ranked(matrix, np.maximum(np.maximum(matrix.vectors @ q, msg @ q),
                                          _chunk_best(matrix, q)), mask, limit)
    if variant == "chunks-third-list-split":
        STATE["msg_hits"] = _ranked(matrix, _chunk_best(matrix, q), mask, limit)
        return _ORIGINAL_TOP_K(matrix, qvec, filters, allowed, limit)
    if variant == "message-only":
        return _top(matrix, msg, qvec, mask, limit)
    if variant == "third-list-empty":  # the harness check: must rank exactly as shipped
        STATE["msg_hits"] = []
        return _ORIGINAL_TOP_K(matrix, qvec, filters, allowed, limit)
    if variant.startswith("third-list"):
        STATE["msg_hits"] = _top(matrix, msg, qvec, mask, limit)
        return _ORIGINAL_TOP_K(matrix, qvec, filters, allowed, limit)
    # max-sim: exact, one product per matrix
    q = np.asarray(qvec, dtype=np.float32)
    sims = np.maximum(matrix.vectors @ q, msg @ q)
    if mask is not None:
        sims = np.where(mask, sims, -np.inf)
    n = int(np.isfinite(sims).sum())
    k = min(limit, n)
    if k <= 0:
        return []
    top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
    kept = [int(j) for j in top.tolist() if np.isfinite(sims[j])]
    kept.sort(key=lambda j: (-float(sims[j]), int(matrix.ids[j])))
    return [(int(matrix.ids[j]), float(sims[j])) for j in kept]


_ORIGINAL_FUSE = engine_mod._HistorySearch._fuse


def third_list_fuse(variant: str, lexical: list[int], document: list[int], message: list[int],
                    effective: str, shape: tuple[float, float], lexical_weight: float,
                    semantic_weight: float, rrf_k: int, every: list[int]
                    ) -> tuple[list[list[int]], list[float], list[tuple[int, float]]]:
    """The third-list fusion as the product would run it at full coverage: (rankings,
    weights, fused). ``semantic``: the document and message lists with equal weights;
    ``hybrid``: lexical, document, message with weights ``w_lex, w_sem, w_sem``
    (``third-list``) or ``w_lex, w_sem / 2, w_sem / 2`` (``third-list-split``), ``w_lex``
    and ``w_sem`` the engine's weights times the query shape's, then the lexical guard and
    the lexical floor exactly as ``engine._fuse`` applies them (``every``: the lexical ids
    among the floor's first ``keep`` that hold every query word)."""
    if effective == "semantic":
        rankings = [document, message]
        weights = [semantic_weight, semantic_weight]
        return rankings, weights, rrf_fuse(rankings, weights, k=rrf_k)
    w_lex, w_sem = lexical_weight * shape[0], semantic_weight * shape[1]
    rankings = [lexical, document, message]
    weights = ([w_lex, w_sem / 2, w_sem / 2] if variant.endswith("-split")
               else [w_lex, w_sem, w_sem])
    fused = rrf_fuse(rankings, weights, k=rrf_k)
    fused = engine_mod.guard_lexical(fused, lexical, document, engine_mod.default_lexical_guard())
    floor = engine_mod.default_lexical_floor()
    if floor.keep > 0 and floor.window > 0:
        fused = engine_mod.floor_lexical(fused, every, floor.window, pinned=[])
    return rankings, weights, fused


def patched_fuse(self: Any, lexical: Any, semantic_hits: Any, effective: str,
                 embedded_fraction: float) -> Any:
    """``engine._fuse`` with the message ranking as a third list (``third-list*`` variants);
    every other variant (and lexical mode) is the shipped ``_fuse``."""
    msg_hits, STATE["msg_hits"] = STATE["msg_hits"], None
    if "third-list" not in STATE["variant"] or effective == "lexical" or msg_hits is None:
        return _ORIGINAL_FUSE(self, lexical, semantic_hits, effective, embedded_fraction)
    if embedded_fraction < 1:
        raise SystemExit("the third-list variants need every commit embedded")
    engine = self.engine
    ids = [cid for cid, _ in msg_hits]
    if self.glob is not None:  # the message ranker ran before the glob's post-filter
        keep = self.glob.keep(ids)
        ids = [cid for cid in ids if cid in keep]
    lex_ids = [hit.id for hit in lexical]
    doc_ids = [cid for cid, _ in semantic_hits]
    ids = ids[: max(len(lex_ids), len(doc_ids))]
    shape = (engine_mod.SHAPE_WEIGHTS.for_query(self.ranked_query) if engine.weight_by_shape
             else (1.0, 1.0))
    floor = engine_mod.default_lexical_floor()
    every = [hit.id for hit in lexical[: floor.keep] if hit.every]
    return third_list_fuse(STATE["variant"], lex_ids, doc_ids, ids, effective, shape,
                           engine.lexical_weight, engine.semantic_weight, engine.rrf_k, every)


def _embed_chunks(ws: Any, embedder: Any, fmt: Any, cached: list[Any]) -> dict[str, Any]:
    """Embed every commit's diff chunks into ``STATE``; their count and cost."""
    from gitquarry.history.index.document import diff_digest

    store = ws.open_store()
    rows = store.conn.execute(
        "SELECT id, title, gq_inflate(delta_truncated) AS delta FROM git_commits ORDER BY id"
    ).fetchall()
    store.close()
    per = fmt.max_chars(embedder.max_tokens)
    ids: list[int] = []
    texts: list[str] = []
    for r in rows:
        _, _, changed = diff_digest(r["delta"] or "")
        body = "\n".join(changed)
        for start in range(0, len(body), per):
            ids.append(int(r["id"]))
            texts.append(f"{r['title'] or ''}\n{body[start:start + per]}")
    misses0 = sum(c.misses for c in cached)
    t0, c0 = time.monotonic(), time.process_time()
    vectors = embedder.embed(texts, max_tokens=fmt.max_tokens) if texts else np.zeros((0, 1))
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    STATE["chunk_ids"] = np.array(ids, dtype=np.int64)
    STATE["chunk_vectors"] = np.asarray(vectors, dtype=np.float32)
    return {"chunks": len(texts), "commits": len(rows),
            "commits_with_chunks": len(set(ids)),
            "vectors_per_commit_with_document": round((len(rows) + len(texts)) / len(rows), 2),
            "embedded_now": (sum(c.misses for c in cached) - misses0) if cached else len(texts),
            "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--vector-cache", type=Path, default=None)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--modes", default="semantic,hybrid")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--chunks", action="store_true",
                        help="embed the diff-chunk vectors too (lever 3; costly)")
    args = parser.parse_args(argv)
    cached: list[Any] = []
    if args.vector_cache:
        from _vector_cache import install

        cached = install(args.vector_cache)
    embedding = ("onnx", str(args.model.resolve())) if args.model else None
    ws = make_workspace(args.repo, args.index_dir, embedding=embedding)
    fmt = default_format()
    # looked up at call time: ``--vector-cache`` wraps the factory
    index_embedder = embedding_pkg.create_embedder(ws.config.embedding, purpose="index")
    assert index_embedder is not None
    store = ws.open_store()
    rows = store.conn.execute("SELECT id, title, message FROM git_commits ORDER BY id").fetchall()
    store.close()
    texts = [message_text(r["title"] or "", r["message"] or "") for r in rows]
    misses0 = sum(c.misses for c in cached)
    t0, c0 = time.monotonic(), time.process_time()
    vectors = index_embedder.embed(texts, max_tokens=fmt.max_tokens)
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    STATE["by_id"] = {int(r["id"]): vectors[n] for n, r in enumerate(rows)}
    chars = [len(t) for t in texts]
    report_chunks = _embed_chunks(ws, index_embedder, fmt, cached) if args.chunks else None
    semantic_mod._top_k = patched_top_k
    engine_mod._HistorySearch._fuse = patched_fuse
    modes = [m for m in args.modes.split(",") if m]
    queries = load_queries(args.queries)
    searcher = HistorySearcher(ws)
    report: dict[str, Any] = {
        "repo": str(args.repo), "queries": len(queries), "k": args.k,
        "message_vectors": {"texts": len(texts), "embedded_now": sum(c.misses for c in cached)
                            - misses0 if cached else len(texts),
                            "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                            "mean_chars": round(sum(chars) / max(len(chars), 1), 1),
                            "max_tokens": fmt.max_tokens},
        "diff_chunks": report_chunks,
        "variants": {},
    }
    try:
        # lexical once (no variant changes it): hybrid must stay at or above it on every kind
        STATE["variant"] = "shipped"
        rows_l, _ = run_queries(searcher, queries, k=args.k, modes=["lexical"])
        lexical = summarise(rows_l, ["lexical"], args.k)["lexical"]
        report["lexical"] = {"metrics": lexical, "ranks": [r["lexical"]["rank"] for r in rows_l]}
        for name in [v for v in args.variants.split(",") if v]:
            if name in CHUNK_VARIANTS and not args.chunks:
                parser.error(f"{name} needs --chunks")
            if name not in VARIANTS:
                parser.error(f"unknown variant {name}")
            STATE["variant"] = name
            rows_q, facts = run_queries(searcher, queries, k=args.k, modes=modes)
            metrics = summarise(rows_q, modes, args.k)
            holds = ({kind: metrics["hybrid"][kind][f"recall@{args.k}"]
                      >= v[f"recall@{args.k}"] for kind, v in lexical.items()}
                     if "hybrid" in metrics else None)
            report["variants"][name] = {
                "metrics": metrics, "latency_ms": facts["latency_ms"],
                "hybrid_at_least_lexical": holds,
                "ranks": {m: [r[m]["rank"] for r in rows_q] for m in modes},
                "recall": {m: [r[m]["recall"] for r in rows_q] for m in modes}}
            for mode in modes:
                print(f"{name:14s} {mode:8s} " + " ".join(
                    f"{kind}:{v.get(f'recall@{args.k}')}/{v.get(f'mrr@{args.k}')}"
                    for kind, v in metrics[mode].items()), file=sys.stderr)
    finally:
        searcher.close()
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
