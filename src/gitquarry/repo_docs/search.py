"""``fulltext`` and ``hybrid`` search over one resolved revision, with verified citations.

- **fulltext**: BM25 over the revision's chunks in an in-memory FTS5 table filled from the
  exact blobs (``gitquarry.repo_docs.lexical``). When a revision set with the same commit,
  policy, chunk policy and overlay exists its stored locators are used; otherwise the plan and
  chunks are computed from Git on the spot (same chunks: chunking is deterministic). Needs no
  model, no provider and no vectors.
- **hybrid** (default): the same BM25 list and exact cosine top-k over the set's vectors
  (``gitquarry.retrieval.vectors``), fused with RRF (``gitquarry.retrieval.fusion``, the
  history corpus's code) — only when the set for the configured embedding namespace is
  ``ready`` or ``partial`` (then only embedded chunks take part, with a
  ``partial_revision_set`` warning). Otherwise full-text ranking is used and a typed warning
  says why (``revision_set_missing``, ``namespace_mismatch``, ``embedding_provider_unavailable``).

Every hit is hydrated and digest-checked (``gitquarry.repo_docs.hydrate``) before it is
returned; hits that fail are dropped with a warning and the next candidates fill the list.
``score`` is the fused RRF score normalised to [0, 1] (a single list for fulltext);
``lexical_score`` is ``-bm25`` (higher is better), ``semantic_score`` the cosine similarity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gitquarry.repo_docs.hydrate import Hydrator
from gitquarry.repo_docs.lexical import LexicalIndex, Row
from gitquarry.retrieval.fusion import normalise_rrf, rrf_fuse
from gitquarry.retrieval.vectors import cosine_top_k

MAX_LIMIT = 50
MODES = ("hybrid", "fulltext")
#: candidates taken from each ranker before fusion
CANDIDATES = 100


@dataclass
class Warnings:
    """``warnings`` (legacy strings) and ``warning_details`` ``{code, message}``."""

    details: list[dict[str, str]] = field(default_factory=list)

    def add(self, code: str, message: str) -> None:
        if not any(d["code"] == code and d["message"] == message for d in self.details):
            self.details.append({"code": code, "message": message})

    @property
    def strings(self) -> list[str]:
        return [d["message"] for d in self.details]


@dataclass
class SemanticSide:
    """The vectors of one set: chunk ids, matrix, and the query embedding function."""

    chunk_ids: list[str]
    matrix: np.ndarray
    embed_query: Callable[[str], np.ndarray]


MAX_HEADING_CHARS = 300


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_HEADING_CHARS else text[: MAX_HEADING_CHARS - 1] + "…"


def rank(
    index: LexicalIndex,
    query: str,
    *,
    limit: int,
    semantic: SemanticSide | None,
    hydrator: Hydrator,
    warnings: Warnings,
    heading_path: Callable[[Row, bytes], tuple[str, ...]],
    rrf_k: int = 60,
    weights: tuple[float, float] = (1.0, 1.0),
) -> list[dict[str, Any]]:
    """The verified hits for ``query`` (dicts in the response's ``hits`` shape, without the
    revision-level citation fields the caller adds)."""
    lexical = index.search(query, CANDIDATES)
    lex_score = {row.chunk_id: score for row, score in lexical}
    rows_by_chunk: dict[str, Row] = {}
    for row in index.rows:
        rows_by_chunk.setdefault(row.chunk_id, row)
    sem_score: dict[str, float] = {}
    rankings: list[list[str]] = [list(dict.fromkeys(r.chunk_id for r, _s in lexical))]
    used_weights: list[float] = [weights[0]]
    if semantic is not None and len(semantic.chunk_ids):
        qvec = semantic.embed_query(query)
        hits = cosine_top_k(semantic.matrix, qvec, CANDIDATES)
        ordered = [semantic.chunk_ids[i] for i, _s in hits if semantic.chunk_ids[i]
                   in rows_by_chunk]
        sem_score = {semantic.chunk_ids[i]: s for i, s in hits}
        rankings.append(ordered)
        used_weights.append(weights[1])
    fused = rrf_fuse(rankings, used_weights, k=rrf_k)
    out: list[dict[str, Any]] = []
    for chunk, fused_score in fused:
        if len(out) >= limit:
            break
        row = rows_by_chunk[chunk]
        verified = hydrator.hydrate(row, query, warnings.add)
        if verified is None:
            continue
        data = hydrator.document(row) or b""
        path = row.heading_path or heading_path(row, data)
        out.append({
            "rank": len(out) + 1,
            "chunk_id": row.chunk_id,
            "path": row.path,
            "heading_path": _bounded(" > ".join(path)),
            "snippet": verified.snippet,
            "score": round(normalise_rrf(fused_score, used_weights, k=rrf_k), 6),
            "lexical_score": round(lex_score[chunk], 6) if chunk in lex_score else None,
            "semantic_score": round(sem_score[chunk], 6) if chunk in sem_score else None,
            "citation": {
                "authority": row.authority, "blob_oid": row.blob_oid, "path": row.path,
                "line_start": row.line_start, "line_end": row.line_end,
                "raw_slice_digest": row.raw_slice_sha256,
            },
        })
    return out
