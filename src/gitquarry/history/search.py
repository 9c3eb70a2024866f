"""``search_git_history``: the one search function behind the CLI and MCP surfaces.

Pipeline: validate → candidate filters (files glob, time range, merges) → BM25 top-k from
FTS5 (``history.lexical``: exact) → (semantic top-k, when vectors exist) → RRF weighted by
query shape → order (``history.ordering``: relevance, introduction questions, or committer
time) → result pipeline (copies, folded merges, dedup) → hydrate. Filters apply to the whole
ranking (``history.candidates``: inside the ranking queries, or after them on a prefix that
provably holds the answer), so ``top_n`` is filled whenever enough matching commits exist.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from typing import Any

from gitquarry.errors import InvalidArgumentError
from gitquarry.history.candidates import (
    POST_FILTER_FACTOR,
    Filters,
    GlobCandidates,
    Hits,
    rank_with_glob,
)
from gitquarry.history.lexical import BM25_WEIGHTS, LexicalHit, lexical_top_k
from gitquarry.history.models import CommitResult, GitSearchResponse, RankedHit, Warning_
from gitquarry.history.narrow import NarrowCandidates, Narrowing, PickaxeReport
from gitquarry.history.ordering import MERGE_FILTERS, SORTS, order_candidates
from gitquarry.history.pipeline import MergeFolder, candidates, copies
from gitquarry.history.refs_contain import RefContainment
from gitquarry.history.scores import bm25_upper_bound, lexical_score, result_score
from gitquarry.retrieval.filters import check_time_range, compile_glob
from gitquarry.retrieval.fts import dropped_words_warning, fts5_match_expression
from gitquarry.retrieval.fusion import (
    SHAPE_WEIGHTS,
    default_lexical_guard,
    guard_lexical,
    introduction_subject,
    rrf_fuse,
    rrf_fuse_partial,
)
from gitquarry.retrieval.pipeline import PipelineSettings, Reranker, run_pipeline
from gitquarry.store import Store
from gitquarry.store.capabilities import require_commit_fts
from gitquarry.store.compression import inflate_text
from gitquarry.store.connection import translate_sqlite_error

__all__ = ["BM25_WEIGHTS", "Filters", "search_git_history", "validate_request"]

log = logging.getLogger(__name__)

TOP_N_MAX = 100
#: how many candidates each ranker contributes to fusion, relative to top_n
CANDIDATE_FACTOR = 4
CANDIDATE_MIN = 50
#: how many candidates each ranker contributes to fusion with ``sort="relevance"``: one depth
#: for every ``top_n`` (the largest ``max(4 × top_n, 50)``), so the fused ranking, and with it
#: the first k results, never depend on how many results were asked for (issue 20 §3)
CANDIDATE_DEPTH = CANDIDATE_FACTOR * TOP_N_MAX
#: the largest candidate list a search ranks to fill top_n after the result pipeline
CANDIDATE_MAX = 3200


def hydrate(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    """Full rows for ``ids`` plus ``repo_path`` (the first repository, by path, holding it)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT c.*, (SELECT r.path FROM repo_commits rc JOIN repositories r "
        "ON r.id = rc.repo_id WHERE rc.commit_id = c.id ORDER BY r.path LIMIT 1) AS repo_path "
        f"FROM git_commits c WHERE c.id IN ({marks})",
        ids,
    ).fetchall()
    return {int(r["id"]): r for r in rows}


def _result(row: sqlite3.Row, score: float, **extra: Any) -> CommitResult:
    return CommitResult(
        hash=row["hash"],
        title=row["title"],
        author=row["author"],
        committer=row["committer"],
        timestamp=int(row["timestamp"]),
        message=row["message"],
        files_changed=json.loads(row["files_changed"]),
        delta_truncated=inflate_text(row["delta_truncated"]),
        score=round(score, 6),
        repo_path=row["repo_path"] or "",
        author_time=int(row["author_time"]),
        parents=row["parents"].split(),
        is_merge=bool(row["is_merge"]),
        author_raw=row["author_raw"] or row["author"],
        committer_raw=row["committer_raw"] or row["committer"],
        **extra,
    )


def _label(conn: sqlite3.Connection, known: dict[int, str], commit_id: int) -> str:
    """A commit id as its hash, for ``--explain``."""
    if commit_id not in known:
        row = conn.execute("SELECT hash FROM git_commits WHERE id = ?", (commit_id,)).fetchone()
        known[commit_id] = row[0] if row else str(commit_id)
    return known[commit_id]


def _score_candidates(
    fused: list[tuple[int, float]],
    effective: str,
    lexical: list[LexicalHit],
    semantic_hits: Hits,
    weights: list[float],
    rrf_k: int,
    upper: float,
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """Each fused candidate's ``score`` in ``effective`` mode (``history.scores``; ``upper``
    is the query's ``bm25_upper_bound``), in fused order, and every lexical hit's lexical
    score (the evidence hybrid results carry)."""
    lexical_scores = {
        hit.id: round(lexical_score(hit.bm25, upper, hit.every), 6) for hit in lexical
    }
    similarity = dict(semantic_hits)
    scored = [
        (cid, result_score(effective, value, weights, rrf_k, lexical_scores.get(cid),
                           similarity.get(cid)))
        for cid, value in fused
    ]
    return scored, lexical_scores


def _embedded(conn: sqlite3.Connection, namespace_id: int | None, ids: list[int]) -> set[int]:
    """Which of ``ids`` have a vector in the embedding namespace (none without one)."""
    out: set[int] = set()
    if namespace_id is None:
        return out
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        out.update(int(r[0]) for r in conn.execute(
            f"SELECT commit_id FROM commit_vectors WHERE namespace_id = ? "
            f"AND commit_id IN ({','.join('?' * len(part))})", [namespace_id, *part]))
    return out


def _patch_id_warnings(conn: sqlite3.Connection) -> list[Warning_]:
    """``patch_ids_incomplete`` when some commits' patch-ids were never computed."""
    row = conn.execute("SELECT 1 FROM git_commits WHERE patch_id IS NULL LIMIT 1").fetchone()
    if row is None:
        return []
    return [Warning_(
        code="patch_ids_incomplete",
        message="some commits were indexed before copy detection existed, so their copies "
        "are not collapsed yet; the next `gitquarry index` run computes their patch-ids",
    )]


def _index_warnings(conn: sqlite3.Connection, total: int) -> list[Warning_]:
    """Facts about the index that make any answer incomplete."""
    out: list[Warning_] = []
    if total == 0:
        out.append(
            Warning_(
                code="empty_index",
                message="the index holds no commits; run `gitquarry index` on the workspace",
            )
        )
    from gitquarry.history.status import index_health

    for code, message in index_health(conn):
        out.append(Warning_(code=code, message=message))
    return out


def validate_top_n(top_n: int) -> None:
    if isinstance(top_n, bool) or not isinstance(top_n, int) or not 1 <= top_n <= TOP_N_MAX:
        raise InvalidArgumentError(
            "top_n", f"must be an integer from 1 to {TOP_N_MAX}, got {top_n!r}"
        )


def validate_request(
    *,
    top_n: int,
    mode: str,
    files_glob: str | None,
    after: int | None,
    before: int | None,
    merges: str = "include",
    sort: str = "relevance",
) -> None:
    """Check search arguments before any work (the index is not opened).

    :raises InvalidArgumentError: top_n outside 1..100, unknown mode, merges or sort, after
        later than before.
    :raises InvalidGlobError: ``files_glob`` is malformed.
    """
    validate_top_n(top_n)
    if mode not in ("lexical", "semantic", "hybrid"):
        raise InvalidArgumentError("mode", f"must be lexical, semantic or hybrid, got {mode!r}")
    if merges not in MERGE_FILTERS:
        raise InvalidArgumentError("merges", f"must be include, exclude or only, got {merges!r}")
    if sort not in SORTS:
        raise InvalidArgumentError("sort", f"must be relevance, newest or oldest, got {sort!r}")
    check_time_range(after, before)
    if files_glob:
        compile_glob(files_glob)


def search_git_history(
    store: Store,
    query: str,
    *,
    top_n: int = 5,
    files_glob: str | None = None,
    after: int | None = None,
    before: int | None = None,
    mode: str = "lexical",
    semantic: Any | None = None,
    lexical_weight: float = 1.0,
    semantic_weight: float = 1.0,
    rrf_k: int = 20,
    weight_by_shape: bool = True,
    merges: str = "include",
    sort: str = "relevance",
    pipeline: PipelineSettings | None = None,
    reranker: Reranker | None = None,
    reranker_problem: tuple[str, str] | None = None,
    narrowing: Narrowing | None = None,
    ranking_depth: int = 0,
    refs: RefContainment | None = None,
) -> GitSearchResponse:
    """Search indexed commits.

    ``mode`` is "lexical", "semantic" or "hybrid". ``semantic`` is a ranker from
    ``gitquarry.history.semantic`` (or None: hybrid/semantic then degrade to lexical with a
    warning). ``after``/``before`` are inclusive Unix-second bounds on the committer time;
    ``merges`` "include" (default), "exclude" (no merge commits) or "only" is a filter like
    them, applied inside both rankers. In hybrid mode with ``weight_by_shape`` the RRF weights
    are multiplied by the query shape's (:data:`~gitquarry.retrieval.fusion.SHAPE_WEIGHTS`:
    identifiers and quoted text favour keywords, questions in prose favour vectors).
    ``sort``: "relevance" (default; introduction questions refined as
    ``gitquarry.history.ordering`` says) or "newest"/"oldest" (the most relevant
    ``max(4 × top_n, 50)`` matching commits, in committer-time order; scores stay relevance
    scores). The ordered ranking then goes through the shared result pipeline
    (``retrieval.pipeline``; ``pipeline`` None: its defaults): copies of one change collapsed
    (``copies``), near-duplicates removed, optionally a confidence threshold, MMR and a
    cross-encoder ``reranker``; merges that only brought in shown commits, or whose diff
    repeats a commit it brought in, are folded under them (``history.pipeline.MergeFolder``).
    With ``sort="relevance"`` the first k results never depend on ``top_n`` (nor does a
    cursor's next page): the rankers' depth is ``CANDIDATE_DEPTH`` whatever ``top_n`` is.
    With ``sort="relevance"`` and without MMR or rerank, results are sorted by ``score``
    descending, ties broken deterministically; with them, in the order those steps chose
    (``--explain`` says why).
    A search whose pipeline removed so many candidates that fewer than ``top_n`` remain ranks
    again with a 4x longer candidate list (up to ``CANDIDATE_MAX``).
    ``narrowing``: author/committer/path/pickaxe/commit-set filters (``history.narrow``),
    applied as a candidate set like the glob. With ``ranking_depth`` > 0, ``more`` on the
    response continues the ranking past the results (for cursors): the same pipeline over the
    same fused candidates with a window of ``ranking_depth``, less the results and what they
    absorbed, so a page never repeats a commit shown or listed under one before.
    ``refs``: the ``history.refs_contain.RefContainment`` that names the refs of each copy
    (keep one per process: it is built once per index state; None builds one per call).

    :raises InvalidArgumentError: top_n outside 1..100, unknown mode/merges/sort, after >
        before.
    :raises InvalidGlobError: ``files_glob`` is malformed.
    :raises IndexCorruptError: the database is unreadable.
    """
    validate_request(top_n=top_n, mode=mode, files_glob=files_glob, after=after, before=before,
                     merges=merges, sort=sort)
    if files_glob is not None and files_glob == "":
        files_glob = None
    filters = Filters(files_glob=files_glob, after=after, before=before,
                      merges=None if merges == "include" else merges)
    subject = introduction_subject(query) if sort == "relevance" and query else None
    ranked_query = subject or query
    conn = store.conn
    warnings: list[Warning_] = []
    more: list[RankedHit] = []
    pickaxe: PickaxeReport | None = None
    # One read transaction: every statement of the search sees the same snapshot, so the AND
    # and OR passes, the counts behind scores and hydration agree while an index run writes.
    own_transaction = not conn.in_transaction
    try:
        require_commit_fts(store)
        if own_transaction:
            conn.execute("BEGIN")
        try:
            total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
            warnings.extend(_index_warnings(conn, total))
            if not query or not query.strip():
                log.warning("empty query")
                warnings.append(Warning_(code="empty_query", message="the query is empty"))
                return GitSearchResponse(
                    results=[], query=query, total_commits_indexed=total, requested_mode=mode,
                    effective_mode="lexical", warnings=warnings,
                )
            glob: GlobCandidates | None = None
            if files_glob is not None:
                glob = GlobCandidates(conn, files_glob)
            if narrowing is not None and narrowing.active():
                narrow = NarrowCandidates(conn, narrowing, glob)
                pickaxe, glob = narrow.pickaxe, narrow
            limit = (CANDIDATE_DEPTH if sort == "relevance"
                     else max(top_n * CANDIDATE_FACTOR, CANDIDATE_MIN))
            settings = pipeline if pipeline is not None else PipelineSettings()
            upper: float | None = None  # the query's largest possible BM25, once needed
            passes = 0
            # one merge folder for every pass: it caches git's answers and the changed lines
            folder = (MergeFolder(conn, replace=sort == "relevance")
                      if settings.collapse and merges != "exclude" else None)
            # a stand-in moved up to a merge's rank would break an order by commit time
            prefer_change = settings.collapse and sort == "relevance"
            while True:  # another pass only when the pipeline used up the candidates
                pass_warnings: list[Warning_] = []
                passes += 1

                # Fusion and the merge folder need each ranker's exact top-``limit`` (the same
                # list whatever top_n is); a sorted order only the top_n of its candidates.
                need = top_n if sort != "relevance" and passes == 1 else limit

                def lexical_rank(
                    n: int, materialized: bool, need: int = need
                ) -> list[LexicalHit]:
                    return lexical_top_k(
                        conn, ranked_query, filters, n, has_glob=materialized, total_docs=total,
                        need=need,
                    )

                pending: Callable[[], Any] | None = None
                semantic_post = glob is not None and not glob.materialized
                semantic_asked = limit * POST_FILTER_FACTOR if semantic_post else limit
                if mode != "lexical" and semantic is not None:
                    # SQLite reads now; the query embedding and the matrix product run on a worker
                    # thread while the keyword ranking below runs here.
                    pending = semantic.start(
                        conn, ranked_query, filters, semantic_asked, has_glob=glob is not None
                        and not semantic_post
                    )
                lexical: list[LexicalHit] = (
                    rank_with_glob(lexical_rank, glob, limit, need) if mode != "semantic" else []
                )
                if not fts5_match_expression(ranked_query) and mode == "lexical":
                    pass_warnings.append(
                        Warning_(
                            code="no_searchable_terms",
                            message=f"the query {query!r} holds no searchable word",
                        )
                    )
                dropped = dropped_words_warning(ranked_query) if mode != "semantic" else None
                if dropped is not None:
                    pass_warnings.append(Warning_(code=dropped[0], message=dropped[1]))
                semantic_hits: list[tuple[int, float]] = []
                effective = "lexical"
                embedded_fraction = 0.0
                if mode in ("semantic", "hybrid"):
                    if semantic is None:
                        pass_warnings.append(
                            Warning_(
                                code="semantic_unavailable",
                                message="no embedding model is configured; used lexical search",
                            )
                        )
                    else:
                        assert pending is not None
                        outcome = pending()
                        semantic_hits = list(outcome.hits)
                        if semantic_post and glob is not None:
                            kept = glob.post_filter(semantic_hits, semantic_asked, limit, need)
                            if kept is None:  # too few matching: rank over the materialised set
                                glob.materialize()
                                outcome = semantic.top_k(
                                    conn, ranked_query, filters, limit, has_glob=True
                                )
                                kept = list(outcome.hits)
                            semantic_hits = kept
                        embedded_fraction = outcome.embedded_fraction
                        if total:  # an empty index already says so once
                            pass_warnings.extend(outcome.warnings)
                        effective = outcome.effective_mode(mode)
                if effective == "lexical" and mode == "semantic":  # degraded: rank by keywords
                    lexical = rank_with_glob(lexical_rank, glob, limit, need)
                if effective == "semantic":
                    rankings: list[list[int]] = [[i for i, _ in semantic_hits]]
                    weights = [semantic_weight]
                elif effective == "hybrid":
                    rankings = [[hit.id for hit in lexical], [i for i, _ in semantic_hits]]
                    shape = SHAPE_WEIGHTS.for_query(ranked_query) if weight_by_shape else (1, 1)
                    weights = [lexical_weight * shape[0], semantic_weight * shape[1]]
                else:
                    rankings = [[hit.id for hit in lexical]]
                    weights = [lexical_weight]
                if effective == "hybrid" and embedded_fraction < 1:
                    # vectors still being computed: they only reorder embedded commits
                    fused = rrf_fuse_partial(
                        rankings[0], rankings[1], weights, k=rrf_k,
                        has_vector=_embedded(conn, getattr(semantic, "namespace_id", None),
                                             rankings[0]).__contains__,
                    )
                else:
                    fused = rrf_fuse(rankings, weights, k=rrf_k)
                if effective == "hybrid":
                    # a strong keyword hit the vectors cannot see keeps a place near the top
                    fused = guard_lexical(fused, rankings[0], rankings[1],
                                          default_lexical_guard())
                if upper is None and lexical and effective != "semantic":
                    upper = bm25_upper_bound(conn, ranked_query, total)
                by_fusion, lex_scores = _score_candidates(
                    fused, effective, lexical, semantic_hits, weights, rrf_k, upper or 0.0
                )
                score_of = dict(by_fusion)
                ordered = order_candidates(
                    conn, [cid for cid, _ in fused], [hit.id for hit in lexical], sort=sort,
                    introduction=subject is not None,
                )
                scored = [(cid, score_of[cid]) for cid in ordered]
                vectors_ns = (
                    getattr(semantic, "namespace_id", None)
                    if effective != "lexical" and (settings.dedup_enabled or settings.mmr_enabled)
                    else None
                )
                outcome = run_pipeline(
                    candidates(conn, scored, namespace_id=vectors_ns,
                               prefer_change=prefer_change, folder=folder),
                    settings, top_n=top_n,
                    query=query, reranker=reranker, reranker_problem=reranker_problem,
                )
                if folder is not None:
                    outcome.steps.append("fold")
                # the rankers returned all they were asked for: more candidates may exist
                full = bool(rankings) and max(len(r) for r in rankings) >= need
                # scores only fall further down: past the threshold, more candidates can't help
                below = any(r.step == "threshold" for r in outcome.removed)
                if len(outcome.results) >= top_n or not full or below or limit >= CANDIDATE_MAX:
                    break
                limit = min(limit * CANDIDATE_FACTOR, CANDIDATE_MAX)
            warnings.extend(pass_warnings)
            warnings.extend(Warning_(code=c, message=m) for c, m in outcome.warnings)
            if settings.collapse:
                warnings.extend(_patch_id_warnings(conn))
            rows = hydrate(conn, [c.key for c in outcome.results])
            found = copies(conn, outcome, collapse=settings.collapse, refs=refs)
            lex_rank = {hit.id: n for n, hit in enumerate(lexical, start=1)}
            lex_bm25 = {hit.id: hit.bm25 for hit in lexical}
            sem_rank = {cid: n for n, (cid, _) in enumerate(semantic_hits, start=1)}
            sem_score = dict(semantic_hits)
            by_id = {cid: rows[cid]["hash"] for cid in rows}
            results = [
                _result(
                    rows[c.key],
                    c.score,
                    lexical_rank=lex_rank.get(c.key),
                    semantic_rank=sem_rank.get(c.key),
                    bm25=lex_bm25.get(c.key),
                    lexical_score=lex_scores.get(c.key),
                    similarity=sem_score.get(c.key),
                    copies=found.get(c.key, ([], 0))[0],
                    copies_omitted=found.get(c.key, ([], 0))[1],
                    pipeline=outcome.explain(c, label=lambda k: _label(conn, by_id, k)),
                )
                for c in outcome.results
                if c.key in rows
            ]
            summary = outcome.summary(label=lambda k: _label(conn, by_id, k))
            if ranking_depth > len(outcome.results):
                longer = run_pipeline(
                    candidates(conn, scored, namespace_id=vectors_ns,
                               prefer_change=prefer_change, folder=folder),
                    settings,
                    top_n=ranking_depth, query=query, reranker=reranker,
                    reranker_problem=reranker_problem,
                )
                shown = {c.key for c in outcome.results}
                shown |= {a.key for c in outcome.results for a in c.absorbed}
                later = [c for c in longer.results if c.key not in shown]
                found_later = copies(conn, longer, collapse=settings.collapse, refs=refs,
                                     keys={c.key for c in later})
                more = [
                    RankedHit(
                        commit_id=c.key, score=round(c.score, 6), lexical_rank=lex_rank.get(c.key),
                        semantic_rank=sem_rank.get(c.key), bm25=lex_bm25.get(c.key),
                        similarity=sem_score.get(c.key), lexical_score=lex_scores.get(c.key),
                        copies=found_later.get(c.key, ([], 0))[0],
                        copies_omitted=found_later.get(c.key, ([], 0))[1],
                        pipeline=longer.explain(c, label=lambda k: _label(conn, by_id, k)),
                    )
                    for c in later
                ]
        finally:
            if own_transaction and conn.in_transaction:
                conn.execute("ROLLBACK")
    except sqlite3.DatabaseError as exc:
        raise translate_sqlite_error(store.path, exc) from exc
    return GitSearchResponse(
        results=results,
        query=query,
        total_commits_indexed=total,
        requested_mode=mode,
        effective_mode=effective,
        embedded_fraction=embedded_fraction,
        warnings=warnings,
        pipeline=summary,
        more=more,
        pickaxe=pickaxe,
    )
