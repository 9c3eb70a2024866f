"""``fulltext`` and ``hybrid`` search over one resolved revision, with verified citations.

- **fulltext**: BM25 over the revision's chunks in an in-memory FTS5 table filled from the
  exact blobs (``gitquarry.repo_docs.lexical``). When a revision set with the same commit,
  policy, chunk policy and overlay exists its stored locators are used; otherwise the plan and
  chunks are computed from Git on the spot (same chunks: chunking is deterministic). Needs no
  model, no provider and no vectors.
- **hybrid** (default): the same BM25 list and exact cosine top-k over the set's vectors
  (``gitquarry.retrieval.vectors``), fused with RRF (``gitquarry.retrieval.fusion``, the
  history corpus's code) by heading section (``fuse_sections``) — only when the set for
  the configured embedding namespace is ``ready`` or ``partial`` (then only embedded chunks
  take part, with a ``partial_revision_set`` warning). Then the lexical floor
  (``DOCS_LEXICAL_FLOOR``): each of full-text's first 5 hits whose heading section holds
  every query word stays in the hybrid top 10. Otherwise full-text ranking is used
  and a typed warning says why (``revision_set_missing``, ``namespace_mismatch``,
  ``embedding_provider_unavailable``).

Every hit is hydrated and digest-checked (``gitquarry.repo_docs.hydrate``) before it is
returned; hits that fail are dropped with a warning and the next candidates fill the list.
The verified candidates then go through the shared result pipeline (``retrieval.pipeline``:
threshold, n-gram and embedding dedup, at most ``max_chunks_per_doc`` chunks per heading
section (the docs corpus's "document": a per-file cap hid the answer of long reference pages,
whose third-best section is often the one asked for), MMR, rerank), configured by
``[search]``.
``score`` is the fused RRF score normalised to [0, 1] (a single list for fulltext);
``lexical_score`` is ``-bm25`` (higher is better), ``semantic_score`` the cosine similarity
of the query and the chunk's own vector. The cosine ranking itself adds ``[docs]
heading_weight`` times the cosine of the query and the chunk's heading-path vector
(``gitquarry.repo_docs.heading_vectors``) when every embedded chunk of the set has one;
otherwise (a set indexed before heading vectors) it ranks by the chunk vectors alone and says
so (``heading_vectors_missing``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitquarry.repo_docs.hydrate import Hydrator
from gitquarry.repo_docs.lexical import LexicalIndex, Row, section_key
from gitquarry.retrieval.fts import dropped_words_warning, fts5_match_expression
from gitquarry.retrieval.fusion import (
    LexicalFloor,
    floor_lexical,
    normalise_rrf,
    rrf_fuse,
    rrf_fuse_partial,
)
from gitquarry.retrieval.pipeline import Candidate, PipelineSettings, Reranker, run_pipeline

if TYPE_CHECKING:
    import numpy as np

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
    """The vectors of one set: chunk ids, matrix (the chunks' own vectors, one row per id),
    the query embedding function and ``ranking``: the matrix the cosine ranking uses when it
    is not ``matrix`` (``repo_docs.heading_vectors.ranking_matrix``: chunk + weight ·
    heading vector, same rows)."""

    chunk_ids: list[str]
    matrix: np.ndarray
    embed_query: Callable[[str], np.ndarray]
    ranking: np.ndarray | None = None


#: The docs corpus's lexical floor (``retrieval.fusion.LexicalFloor``, the rule history
#: search applies): each of full-text's first ``keep`` hits whose heading section holds every
#: query word stays within the first ``window`` places of the hybrid ranking. ``keep = 0``:
#: off. On the click and flask dev sets it changes no question's answer (it never fires
#: there): a promise, not a gain. docs/performance.md, "Repository docs: a lexical floor
#: (2026-12-02, s5-docs-floor)".
DOCS_LEXICAL_FLOOR = LexicalFloor(keep=5, window=10)


def default_docs_floor() -> LexicalFloor:
    """The docs floor in use (read at call time, so benchmarks can swap it)."""
    return DOCS_LEXICAL_FLOOR


def apply_docs_floor(fused: list[tuple[str, float]], lexical: list[str], query: str,
                     index: LexicalIndex, rows: dict[str, Row], floor: LexicalFloor, *,
                     embedded: set[str] | None = None) -> list[tuple[str, float]]:
    """``fused`` (hybrid's (chunk id, score) order, best first) with ``floor`` applied: each
    of ``lexical``'s (full-text's chunk ids, best first) first ``floor.keep`` ids whose
    heading section holds every word of ``query`` (``LexicalIndex.holding_every_word``) is
    moved into the first ``floor.window`` places (``retrieval.fusion.floor_lexical``; scores
    stay with the places). With ``embedded`` (a partial set) the full-text hits whose section
    has no embedded chunk are pinned: the floor never moves one down (issue 20 §4). Returns
    ``fused`` unchanged when the floor is off or nothing needs placing."""
    if floor.keep <= 0 or floor.window <= 0 or not fused:
        return fused
    head = lexical[: floor.keep]
    every = index.holding_every_word(query, head)
    protected = [chunk for chunk in head if chunk in every]
    if not protected:
        return fused
    pinned: list[str] = []
    if embedded is not None:
        with_vectors = {section_key(rows[c]) for c in embedded if c in rows}
        pinned = [c for c in lexical if section_key(rows[c]) not in with_vectors]
    return floor_lexical(fused, protected, floor.window, pinned=pinned)


MAX_HEADING_CHARS = 300


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_HEADING_CHARS else text[: MAX_HEADING_CHARS - 1] + "…"


def fuse_sections(fused: list[tuple[str, float]], rankings: list[list[str]],
                  weights: list[float], rrf_k: int,
                  rows: dict[str, Row], *,
                  embedded: set[str] | None = None) -> list[tuple[str, float]]:
    """Hybrid ordering by heading section. ``fused`` is the chunk-level RRF of ``rankings``
    (chunk ids, best first). The same RRF (``retrieval.fusion.rrf_fuse``, same weights and
    k) is run over the rankings with each chunk replaced by its section (first occurrence
    kept), so a section whose best BM25 chunk and best cosine chunk differ still gets both
    votes; each section is placed by that score and stands for its best chunk by the
    chunk-level score. The sections' other chunks follow in chunk-level order, their score
    capped by the one above (scores never increase down the list). Returns (chunk id,
    score), every chunk of ``fused`` once. ``embedded`` (the chunks that have vectors, when
    only some do): a section none of whose chunks has a vector keeps its full-text place
    (``retrieval.fusion.rrf_fuse_partial``, issue 20 §4)."""
    section_lists = [list(dict.fromkeys(section_key(rows[c]) for c in r)) for r in rankings]
    best: dict[object, str] = {}
    for chunk, _score in fused:
        best.setdefault(section_key(rows[chunk]), chunk)
    out: list[tuple[str, float]] = []
    used: set[str] = set()
    if embedded is None:
        sections = rrf_fuse(section_lists, weights, k=rrf_k)
    else:
        with_vectors = {section_key(rows[c]) for c in embedded if c in rows}
        sections = rrf_fuse_partial(section_lists[0], section_lists[1], weights, k=rrf_k,
                                    has_vector=with_vectors.__contains__)
    for section, score in sections:
        out.append((best[section], score))
        used.add(best[section])
    floor = out[-1][1] if out else 0.0
    for chunk, score in fused:
        if chunk not in used:
            floor = min(floor, score)
            out.append((chunk, floor))
    return out


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
    pipeline: PipelineSettings | None = None,
    reranker: Reranker | None = None,
    reranker_problem: tuple[str, str] | None = None,
    explain: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The verified hits for ``query`` (dicts in the response's ``hits`` shape, without the
    revision-level citation fields the caller adds), and the pipeline's summary (steps run,
    candidates read, threshold removals).

    The fused ranking goes through the shared result pipeline (``retrieval.pipeline``;
    ``pipeline`` None: its defaults): candidates are hydrated and digest-checked one by one,
    in rank order, only as far as the pipeline reads; a chunk is one candidate, its heading
    section the document (``max_chunks_per_doc``), its text the verified slice, its vector
    the set's.
    With ``explain`` each hit carries ``pipeline`` (what the steps did to it).
    """
    settings = pipeline if pipeline is not None else PipelineSettings()
    lexical = index.search(query, CANDIDATES)
    if semantic is None and not fts5_match_expression(query):  # as history search says it
        warnings.add("no_searchable_terms", f"the query {query!r} holds no searchable word")
    dropped = dropped_words_warning(query)
    if dropped is not None:
        warnings.add(*dropped)
    lex_score = {row.chunk_id: score for row, score in lexical}
    rows_by_chunk = index.rows_by_chunk  # built once per index state (read only here)
    sem_score: dict[str, float] = {}
    rankings: list[list[str]] = [list(dict.fromkeys(r.chunk_id for r, _s in lexical))]
    used_weights: list[float] = [weights[0]]
    vector_of: dict[str, int] = {}
    if semantic is not None and len(semantic.chunk_ids):
        from gitquarry.retrieval.vectors import cosine_top_k

        qvec = semantic.embed_query(query)
        ranked_by = semantic.matrix if semantic.ranking is None else semantic.ranking
        hits = cosine_top_k(ranked_by, qvec, CANDIDATES)
        ordered = [semantic.chunk_ids[i] for i, _s in hits if semantic.chunk_ids[i]
                   in rows_by_chunk]
        sem_score = {semantic.chunk_ids[i]: s for i, s in hits} if semantic.ranking is None \
            else {semantic.chunk_ids[i]: float(semantic.matrix[i] @ qvec) for i, _s in hits}
        rankings.append(ordered)
        used_weights.append(weights[1])
        if settings.dedup_enabled or settings.mmr_enabled:
            vector_of = {chunk: i for i, chunk in enumerate(semantic.chunk_ids)}
    embedded: set[str] | None = None
    if len(rankings) == 2 and semantic is not None and len(semantic.chunk_ids) < len(
            rows_by_chunk):
        # a partial set (vectors still being computed): they only reorder embedded chunks
        embedded = set(semantic.chunk_ids)
        fused = rrf_fuse_partial(rankings[0], rankings[1], used_weights, k=rrf_k,
                                 has_vector=embedded.__contains__)
    else:
        fused = rrf_fuse(rankings, used_weights, k=rrf_k)
    if len(rankings) > 1:
        fused = fuse_sections(fused, rankings, used_weights, rrf_k, rows_by_chunk,
                              embedded=embedded)
        fused = apply_docs_floor(fused, rankings[0], query, index, rows_by_chunk,
                                 default_docs_floor(), embedded=embedded)

    def candidates() -> Iterator[Candidate[str]]:
        for chunk, fused_score in fused:
            row = rows_by_chunk[chunk]
            verified = hydrator.hydrate(row, query, warnings.add)
            if verified is None:
                continue
            data = hydrator.document(row) or b""
            text = data[row.byte_start : row.byte_end].decode("utf-8", "replace")
            vector = semantic.matrix[vector_of[chunk]] if (
                semantic is not None and chunk in vector_of) else None
            yield Candidate(
                key=chunk, score=normalise_rrf(fused_score, used_weights, k=rrf_k),
                text=text, vector=vector, doc=section_key(row), data=(row, verified, data),
            )

    outcome = run_pipeline(candidates(), settings, top_n=limit, query=query,
                           reranker=reranker, reranker_problem=reranker_problem)
    for code, message in outcome.warnings:
        warnings.add(code, message)
    out: list[dict[str, Any]] = []
    for c in outcome.results:
        row, verified, data = c.data
        path = row.heading_path or heading_path(row, data)
        hit: dict[str, Any] = {
            "rank": len(out) + 1,
            "chunk_id": row.chunk_id,
            "path": row.path,
            "heading_path": _bounded(" > ".join(path)),
            "snippet": verified.snippet,
            "score": round(c.score, 6),
            "lexical_score": round(lex_score[c.key], 6) if c.key in lex_score else None,
            "semantic_score": round(sem_score[c.key], 6) if c.key in sem_score else None,
            "citation": {
                "authority": row.authority, "blob_oid": row.blob_oid, "path": row.path,
                "line_start": row.line_start, "line_end": row.line_end,
                "raw_slice_digest": row.raw_slice_sha256,
            },
        }
        if explain:
            hit["pipeline"] = outcome.explain(c)
        out.append(hit)
    return out, outcome.summary()
