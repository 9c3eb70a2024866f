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
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace
from typing import Any

from gitquarry.history.index.refs_contain import RefContainment
from gitquarry.history.models import (
    CommitResult,
    GitSearchResponse,
    RankedHit,
    RankingFacts,
    Warning_,
)
from gitquarry.history.search.candidate_stream import MergeFolder, candidates, copies
from gitquarry.history.search.candidates import (
    POST_FILTER_FACTOR,
    Filters,
    GlobCandidates,
    Hits,
    rank_with_glob,
)
from gitquarry.history.search.coverage_warnings import for_mode
from gitquarry.history.search.lexical import BM25_WEIGHTS, LexicalHit, lexical_top_k
from gitquarry.history.search.narrow import (
    NarrowCandidates,
    Narrowing,
    PickaxeReport,
    path_known,
    validate_narrowing,
)
from gitquarry.history.search.ordering import order_candidates
from gitquarry.history.search.scores import bm25_upper_bound, lexical_score, result_scorer
from gitquarry.query.history import TOP_N_MAX, HistoryRequest, check_top_n
from gitquarry.retrieval.filters import format_time
from gitquarry.retrieval.fts import dropped_words_warning, fts5_match_expression
from gitquarry.retrieval.fusion import (
    SHAPE_WEIGHTS,
    default_lexical_floor,
    default_lexical_guard,
    floor_lexical,
    guard_lexical,
    introduction_subject,
    rrf_fuse,
    rrf_fuse_partial,
)
from gitquarry.retrieval.pipeline import (
    Candidate,
    PipelineSettings,
    Reranker,
    extend_pipeline,
    run_pipeline,
)
from gitquarry.store import Store
from gitquarry.store.capabilities import require_commit_fts
from gitquarry.store.compression import inflate_text
from gitquarry.store.connection import translate_sqlite_error

__all__ = ["BM25_WEIGHTS", "TOP_N_MAX", "Engine", "Filters", "run_history_search",
           "search_git_history"]

log = logging.getLogger(__name__)

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


def _result(row: sqlite3.Row, score: float = 0.0, *,
            facts: RankingFacts | None = None) -> CommitResult:
    """The stored commit of ``row`` with ``facts`` (None: only ``score``, rounded to 6
    places)."""
    ranking = (facts if facts is not None else RankingFacts(score=round(score, 6))).facts()
    return CommitResult(
        hash=row["hash"],
        title=row["title"],
        author=row["author"],
        committer=row["committer"],
        timestamp=int(row["timestamp"]),
        message=row["message"],
        files_changed=json.loads(row["files_changed"]),
        delta_truncated=inflate_text(row["delta_truncated"]),
        repo_path=row["repo_path"] or "",
        author_time=int(row["author_time"]),
        parents=row["parents"].split(),
        is_merge=bool(row["is_merge"]),
        author_raw=row["author_raw"] or row["author"],
        committer_raw=row["committer_raw"] or row["committer"],
        **ranking,
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
    score = result_scorer(effective, weights, rrf_k)
    scored = [
        (cid, score(value, lexical_scores.get(cid), similarity.get(cid))) for cid, value in fused
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


#: ``title:progress``, ``author:lord``: a search-engine qualifier, which gitquarry reads as
#: the phrase "title progress" (FTS5 splits on ``:``).
_QUALIFIER = re.compile(r"[^\W\d_][\w-]*:[^\s:]+")


def _qualifier_warnings(query: str) -> list[Warning_]:
    """For an empty answer: one ``qualifier_as_phrase`` warning per ``word:word`` of the
    query, so a GitHub-style qualifier never reads as a silent "nothing found"."""
    words = [w for w in query.split() if _QUALIFIER.fullmatch(w)]
    return [Warning_(
        code="qualifier_as_phrase",
        message=(f"no commit holds {w!r} as written: words joined by ':' match only as a "
                 "phrase, and queries have no field qualifiers (use --author, --path or "
                 "--files-glob, or write the words apart)"),
    ) for w in dict.fromkeys(words)]


def _no_match_warnings(conn: sqlite3.Connection, after: int | None, before: int | None,
                       path: str | None) -> list[Warning_]:
    """For an empty answer: why a filter alone excludes every indexed commit, so it never
    reads as a silent "nothing found" (issue s7 §4, §2). ``before_oldest_commit``: the upper
    time bound (``before``, ``--before``/``--until``) is earlier than the oldest commit
    time; ``after_newest_commit``: the lower bound later than the newest;
    ``path_matches_nothing``: no indexed commit changes a path under ``path`` (normalised).
    Times compared are the commit (committer) times the filters read, Unix seconds."""
    out: list[Warning_] = []
    if after is not None or before is not None:
        # two subqueries: each min/max alone is one idx_timestamp probe (both in one SELECT
        # scan the table)
        oldest, newest = conn.execute(
            "SELECT (SELECT min(timestamp) FROM git_commits), "
            "(SELECT max(timestamp) FROM git_commits)").fetchone()
        if before is not None and oldest is not None and before < oldest:
            out.append(Warning_(
                code="before_oldest_commit",
                message=f"the upper time bound {format_time(before)} (before/--until) is "
                f"earlier than the oldest indexed commit ({format_time(int(oldest))}), so no "
                "commit can match"))
        if after is not None and newest is not None and after > newest:
            out.append(Warning_(
                code="after_newest_commit",
                message=f"the lower time bound {format_time(after)} (after/--since) is later "
                f"than the newest indexed commit ({format_time(int(newest))}), so no commit "
                "can match"))
    if path is not None and not path_known(conn, path):
        out.append(Warning_(
            code="path_matches_nothing",
            message=f"no indexed commit changes a path under {path!r} (paths are read from "
            "the repository root: src/auth, not an absolute or working-directory path)"))
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
    from gitquarry.history.index.status import index_health

    for code, message in index_health(conn):
        out.append(Warning_(code=code, message=message))
    return out


def validate_top_n(top_n: int) -> None:
    """:raises InvalidArgumentError: ``top_n`` is not an integer from 1 to ``TOP_N_MAX``."""
    check_top_n(top_n)


@dataclass(frozen=True, kw_only=True)
class Engine:
    """What ranks a request, besides the request and the index: the semantic ranker
    (``gitquarry.history.search.semantic``; None: hybrid/semantic degrade to lexical with a
    warning), the RRF weights and ``k``, whether hybrid weights follow the query's shape
    (:data:`~gitquarry.retrieval.fusion.SHAPE_WEIGHTS`), the result pipeline's settings
    (None: its defaults), the cross-encoder, and the ``RefContainment`` that names the refs
    of each copy (keep one per process; None builds one per call)."""

    semantic: Any | None = None
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    rrf_k: int = 40  # = [search] rrf_k's default (config.SearchConfig)
    weight_by_shape: bool = True
    pipeline: PipelineSettings | None = None
    reranker: Reranker | None = None
    reranker_problem: tuple[str, str] | None = None
    refs: RefContainment | None = None


ENGINE_FIELDS = frozenset(f.name for f in fields(Engine))


def search_git_history(store: Store, query: str, *, ranking_depth: int = 0,
                       **options: Any) -> GitSearchResponse:
    """Search indexed commits: :func:`run_history_search` in keyword form. ``options`` name
    fields of :class:`Engine` and of ``gitquarry.query.history.HistoryRequest``, with
    ``after``/``before`` as Unix seconds and ``narrowing`` as a ``history.narrow.Narrowing``
    (the defaults: ``top_n`` 5, ``mode`` lexical, ``merges`` include).

    :raises InvalidArgumentError: top_n outside 1..100, unknown mode/merges/sort, after >
        before.
    :raises InvalidGlobError: ``files_glob`` is malformed.
    :raises IndexCorruptError: the database is unreadable.
    :raises TypeError: an option that is no field of either.
    """
    engine = Engine(**{k: options.pop(k) for k in list(options) if k in ENGINE_FIELDS})
    request = HistoryRequest.from_seconds(query, **options)
    return run_history_search(store, request.validate(), engine, ranking_depth=ranking_depth)


def run_history_search(store: Store, request: HistoryRequest, engine: Engine = Engine(), *,
                       ranking_depth: int = 0) -> GitSearchResponse:
    """Search indexed commits for a validated ``request`` (``HistoryRequest.validate``).

    ``mode`` "lexical", "semantic" or "hybrid" (None: lexical); ``after``/``before`` are
    inclusive bounds on the committer time; ``merges`` "include" (None), "exclude" (no merge
    commits) or "only" is a filter like them, applied inside both rankers. In hybrid mode with
    ``engine.weight_by_shape`` the RRF weights are multiplied by the query shape's
    (identifiers and quoted text favour keywords, questions in prose favour vectors).
    ``sort``: "relevance" (default; introduction questions refined as
    ``gitquarry.history.search.ordering`` says) or "newest"/"oldest" (the most relevant
    ``max(4 × top_n, 50)`` matching commits, in committer-time order; scores stay relevance
    scores). The ordered ranking then goes through the shared result pipeline
    (``retrieval.pipeline``): copies of one change collapsed (``copies``), near-duplicates
    removed, optionally a confidence threshold, MMR and a cross-encoder reranker; merges that
    only brought in shown commits, or whose diff repeats a commit it brought in, are folded
    under them (``history.pipeline.MergeFolder``).
    With ``sort="relevance"`` the first k results never depend on ``top_n`` (nor does a
    cursor's next page): the rankers' depth is ``CANDIDATE_DEPTH`` whatever ``top_n`` is.
    With ``sort="relevance"`` and without MMR or rerank, results are sorted by ``score``
    descending, ties broken deterministically; with them, in the order those steps chose
    (``--explain`` says why).
    A search whose pipeline removed so many candidates that fewer than ``top_n`` remain ranks
    again with a 4x longer candidate list (up to ``CANDIDATE_MAX``).
    The narrowing filters (author/committer/path/pickaxe/commit set, ``history.narrow``) apply
    as a candidate set like the glob. With ``ranking_depth`` > 0, ``more`` on the response
    continues the ranking past the results (for cursors): the same pipeline over the same
    fused candidates with a window of ``ranking_depth``, less the results and what they
    absorbed, so a page never repeats a commit shown or listed under one before.

    :raises IndexCorruptError: the database is unreadable.
    """
    return _HistorySearch(store, request, engine, ranking_depth).run()


@dataclass
class _Pass:
    """One ranking pass: what each ranker returned, the fused and scored candidates and the
    result pipeline's outcome (``need``: how many each ranker had to return)."""

    need: int
    lexical: list[LexicalHit]
    semantic_hits: list[tuple[int, float]]
    effective: str
    embedded_fraction: float
    warnings: list[Warning_]
    scored: list[tuple[int, float]]
    lex_scores: dict[int, float]
    vectors_ns: int | None
    outcome: Any
    full: bool
    _evidence: tuple[dict[int, tuple[int, float]], dict[int, tuple[int, float]]] | None = None

    def evidence(self) -> tuple[dict[int, tuple[int, float]], dict[int, tuple[int, float]]]:
        """By commit id: (1-based lexical rank, bm25) and (1-based semantic rank, cosine)."""
        if self._evidence is None:
            self._evidence = (
                {hit.id: (n, hit.bm25) for n, hit in enumerate(self.lexical, start=1)},
                {cid: (n, sim) for n, (cid, sim) in enumerate(self.semantic_hits, start=1)})
        return self._evidence


#: whether ``_more`` replays the candidates the results' pipeline run read (tests compare)
REPLAY = True
#: whether ``_more`` reads on with the results' pipeline run (``extend_pipeline``) where the
#: settings allow it, instead of a second run over the replayed stream (tests compare)
RESUME = True


class _ReplayedStream:
    """A candidate stream that can be read more than once: each read gets, first, fresh
    copies of the candidates read before (as ``candidates`` built them: the pipeline only
    fills ``input_rank``, ``absorbed``, ``moves`` and ``rerank_score``, which start empty
    again), then the candidates still unread, from the one underlying stream. The stream's
    n-th candidate does not depend on who read the ones before it, so every read sees the
    sequence a new ``candidates`` call would give, without building it again."""

    def __init__(self, source: Iterator[Candidate[int]]) -> None:
        self._source = source
        self._read: list[Candidate[int]] = []
        self._done = False

    @staticmethod
    def _fresh(c: Candidate[int]) -> Candidate[int]:
        return replace(c, input_rank=0, absorbed=list(c.absorbed), moves=list(c.moves),
                       rerank_score=c.rerank_score, folded=list(c.folded))

    def __iter__(self) -> Iterator[Candidate[int]]:
        n = 0
        while True:
            if n < len(self._read):
                yield self._fresh(self._read[n])
            elif self._done:
                return
            else:
                try:
                    c = next(self._source)
                except StopIteration:
                    self._done = True
                    return
                self._read.append(self._fresh(c))
                yield c
            n += 1


class _HistorySearch:
    """One run of :func:`run_history_search` (see there): the request's resolved values,
    the read transaction, the ranking passes and the hydrated response."""

    def __init__(self, store: Store, request: HistoryRequest, engine: Engine,
                 ranking_depth: int) -> None:
        self.store, self.conn, self.engine = store, store.conn, engine
        self.request = request.with_defaults(top_n=5, mode="lexical", merges="include")
        self.top_n = int(self.request.top_n or 5)
        self.mode = str(self.request.mode)
        self.merges = str(self.request.merges)
        self.sort, self.query = request.sort, request.query
        self.ranking_depth = ranking_depth
        self.filters = Filters(files_glob=request.files_glob or None, after=request.after_s,
                               before=request.before_s,
                               merges=None if self.merges == "include" else self.merges)
        self.subject = (introduction_subject(self.query)
                        if self.sort == "relevance" and self.query else None)
        self.ranked_query = self.subject or self.query
        self.settings = engine.pipeline if engine.pipeline is not None else PipelineSettings()
        self.warnings: list[Warning_] = []
        self.pickaxe: PickaxeReport | None = None
        self.narrowing: Narrowing | None = None  # validated, once the candidates are built
        self.glob: GlobCandidates | None = None
        self.total = 0
        self.upper: float | None = None  # the query's largest possible BM25, once needed
        self.folder: MergeFolder | None = None
        #: (scored list, vectors namespace, its candidate stream) of the last pipeline run
        self._stream: tuple[list[tuple[int, float]], int | None, Any] | None = None

    def run(self) -> GitSearchResponse:
        # One read transaction: every statement of the search sees the same snapshot, so the
        # AND and OR passes, the counts behind scores and hydration agree while an index run
        # writes.
        conn = self.conn
        own_transaction = not conn.in_transaction
        try:
            require_commit_fts(self.store)
            if own_transaction:
                conn.execute("BEGIN")
            try:
                return self._search()
            finally:
                if own_transaction and conn.in_transaction:
                    conn.execute("ROLLBACK")
        except sqlite3.DatabaseError as exc:
            raise translate_sqlite_error(self.store.path, exc) from exc

    def _search(self) -> GitSearchResponse:
        conn = self.conn
        self.total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
        self.warnings.extend(_index_warnings(conn, self.total))
        if not self.query or not self.query.strip():
            log.warning("empty query")
            self.warnings.append(Warning_(code="empty_query", message="the query is empty"))
            return GitSearchResponse(
                results=[], query=self.query, total_commits_indexed=self.total,
                requested_mode=self.mode, effective_mode="lexical", warnings=self.warnings,
            )
        self._candidate_sets()
        # one merge folder for every pass: it caches git's answers and the changed lines
        if self.settings.collapse and self.merges != "exclude":
            self.folder = MergeFolder(conn, replace=self.sort == "relevance")
        ranked = self._rank()
        self.warnings.extend(ranked.warnings)
        self.warnings.extend(Warning_(code=c, message=m) for c, m in ranked.outcome.warnings)
        if self.settings.collapse:
            self.warnings.extend(_patch_id_warnings(conn))
        return self._response(ranked)

    def _candidate_sets(self) -> None:
        """The glob's and the narrowing filters' candidate set (None: every commit)."""
        if self.filters.files_glob is not None:
            self.glob = GlobCandidates(self.conn, self.filters.files_glob)
        narrowing = self.request.narrowing()
        if narrowing is not None:
            narrowing = validate_narrowing(narrowing)
        self.narrowing = narrowing
        if narrowing is not None and narrowing.active():
            narrow = NarrowCandidates(self.conn, narrowing, self.glob)
            self.pickaxe, self.glob = narrow.pickaxe, narrow

    def _rank(self) -> _Pass:
        """Rank, run the result pipeline, and rank again with a longer candidate list while
        the pipeline used up the candidates (up to ``CANDIDATE_MAX``)."""
        limit = (CANDIDATE_DEPTH if self.sort == "relevance"
                 else max(self.top_n * CANDIDATE_FACTOR, CANDIDATE_MIN))
        passes = 0
        while True:
            passes += 1
            # Fusion and the merge folder need each ranker's exact top-``limit`` (the same
            # list whatever top_n is); a sorted order only the top_n of its candidates.
            need = self.top_n if self.sort != "relevance" and passes == 1 else limit
            ranked = self._pass(limit, need)
            # scores only fall further down: past the threshold, more candidates can't help
            below = any(r.step == "threshold" for r in ranked.outcome.removed)
            if (len(ranked.outcome.results) >= self.top_n or not ranked.full or below
                    or limit >= CANDIDATE_MAX):
                return ranked
            limit = min(limit * CANDIDATE_FACTOR, CANDIDATE_MAX)

    def _lexical(self, limit: int, need: int) -> list[LexicalHit]:
        def lexical_rank(n: int, materialized: bool) -> list[LexicalHit]:
            return lexical_top_k(
                self.conn, self.ranked_query, self.filters, n, has_glob=materialized,
                total_docs=self.total, need=need,
            )

        return rank_with_glob(lexical_rank, self.glob, limit, need)

    def _pass(self, limit: int, need: int) -> _Pass:
        """One pass: both rankers at depth ``limit``, fused, scored, ordered, through the
        result pipeline."""
        conn, mode, semantic = self.conn, self.mode, self.engine.semantic
        warnings: list[Warning_] = []
        pending: Callable[[], Any] | None = None
        glob = self.glob
        semantic_post = glob is not None and not glob.materialized
        semantic_asked = limit * POST_FILTER_FACTOR if semantic_post else limit
        if mode != "lexical" and semantic is not None:
            # SQLite reads now; the query embedding and the matrix product run on a worker
            # thread while the keyword ranking below runs here.
            pending = semantic.start(
                conn, self.ranked_query, self.filters, semantic_asked,
                has_glob=glob is not None and not semantic_post
            )
        lexical = self._lexical(limit, need) if mode != "semantic" else []
        dropped = dropped_words_warning(self.ranked_query) if mode != "semantic" else None
        if dropped is not None:
            warnings.append(Warning_(code=dropped[0], message=dropped[1]))
        semantic_hits, effective, embedded_fraction = self._semantic(
            pending, limit, need, semantic_asked if semantic_post else None, warnings)
        if effective == "lexical" and mode == "semantic":  # degraded: rank by keywords
            lexical = self._lexical(limit, need)
        # keywords alone rank (asked for, or no vectors to rank by): a query with no word
        # says so, whichever mode was asked for
        if effective == "lexical" and not fts5_match_expression(self.ranked_query):
            warnings.append(Warning_(
                code="no_searchable_terms",
                message=f"the query {self.query!r} holds no searchable word"))
        rankings, weights, fused = self._fuse(lexical, semantic_hits, effective,
                                              embedded_fraction)
        if self.upper is None and lexical and effective != "semantic":
            self.upper = bm25_upper_bound(conn, self.ranked_query, self.total)
        by_fusion, lex_scores = _score_candidates(
            fused, effective, lexical, semantic_hits, weights, self.engine.rrf_k,
            self.upper or 0.0
        )
        score_of = dict(by_fusion)
        ordered = order_candidates(
            conn, [cid for cid, _ in fused], [hit.id for hit in lexical], sort=self.sort,
            introduction=self.subject is not None,
        )
        scored = [(cid, score_of[cid]) for cid in ordered]
        vectors_ns = (
            getattr(semantic, "namespace_id", None)
            if effective != "lexical" and (self.settings.dedup_enabled
                                           or self.settings.mmr_enabled)
            else None
        )
        outcome = self._pipeline(scored, vectors_ns, self.top_n)
        if self.folder is not None:
            outcome.steps.append("fold")
        return _Pass(
            need=need, lexical=lexical, semantic_hits=semantic_hits, effective=effective,
            embedded_fraction=embedded_fraction, warnings=warnings, scored=scored,
            lex_scores=lex_scores, vectors_ns=vectors_ns, outcome=outcome,
            # the rankers returned all they were asked for: more candidates may exist
            full=bool(rankings) and max(len(r) for r in rankings) >= need,
        )

    def _semantic(self, pending: Callable[[], Any] | None, limit: int, need: int,
                  post_filter: int | None, warnings: list[Warning_]
                  ) -> tuple[list[tuple[int, float]], str, float]:
        """The semantic ranker's hits (``post_filter``: how many were asked for, to be
        filtered by the candidate set here), the mode that ran and the embedded fraction;
        its warnings are added to ``warnings``. (no hits, "lexical", 0.0) in lexical mode."""
        semantic, glob = self.engine.semantic, self.glob
        if self.mode not in ("semantic", "hybrid"):
            return [], "lexical", 0.0
        if semantic is None:
            warnings.append(Warning_(
                code="semantic_unavailable",
                message="no embedding model is configured; used lexical search"))
            return [], "lexical", 0.0
        assert pending is not None
        outcome = pending()
        hits = list(outcome.hits)
        if post_filter is not None and glob is not None:
            kept = glob.post_filter(hits, post_filter, limit, need)
            if kept is None:  # too few matching: rank over the materialised set
                glob.materialize()
                outcome = semantic.top_k(
                    self.conn, self.ranked_query, self.filters, limit, has_glob=True)
                kept = list(outcome.hits)
            hits = kept
        if self.total:  # an empty index already says so once
            warnings.extend(for_mode(w, self.mode) for w in outcome.warnings)
        return hits, outcome.effective_mode(self.mode), outcome.embedded_fraction

    def _fuse(self, lexical: list[LexicalHit], semantic_hits: list[tuple[int, float]],
              effective: str, embedded_fraction: float
              ) -> tuple[list[list[int]], list[float], list[tuple[int, float]]]:
        """The rankings fused in ``effective`` mode: (rankings, weights, fused)."""
        engine = self.engine
        if effective == "semantic":
            rankings: list[list[int]] = [[i for i, _ in semantic_hits]]
            weights = [engine.semantic_weight]
        elif effective == "hybrid":
            rankings = [[hit.id for hit in lexical], [i for i, _ in semantic_hits]]
            shape = (SHAPE_WEIGHTS.for_query(self.ranked_query) if engine.weight_by_shape
                     else (1, 1))
            weights = [engine.lexical_weight * shape[0], engine.semantic_weight * shape[1]]
        else:
            rankings = [[hit.id for hit in lexical]]
            weights = [engine.lexical_weight]
        pinned: list[int] = []
        if effective == "hybrid" and embedded_fraction < 1:
            # vectors still being computed: they only reorder embedded commits
            embedded = _embedded(self.conn, getattr(engine.semantic, "namespace_id", None),
                                 rankings[0])
            fused = rrf_fuse_partial(rankings[0], rankings[1], weights, k=engine.rrf_k,
                                     has_vector=embedded.__contains__)
            pinned = [cid for cid in rankings[0] if cid not in embedded]
        else:
            fused = rrf_fuse(rankings, weights, k=engine.rrf_k)
        if effective == "hybrid":
            # a strong keyword hit the vectors cannot see keeps a place near the top (the
            # guard is off by default: measured, no gain with the shipped model)
            fused = guard_lexical(fused, rankings[0], rankings[1], default_lexical_guard())
            # a commit holding every query word among the first lexical hits stays in the
            # fused top 10 (vectors may not see it; measured free on the dev sets)
            floor = default_lexical_floor()
            if floor.keep > 0 and floor.window > 0:
                # (lexical hits without a vector keep their lexical slots, as above)
                fused = floor_lexical(
                    fused, [hit.id for hit in lexical[: floor.keep] if hit.every],
                    floor.window, pinned=pinned)
        return rankings, weights, fused

    def _pipeline(self, scored: list[tuple[int, float]], vectors_ns: int | None,
                  top_n: int) -> Any:
        """The result pipeline over ``scored`` for ``top_n`` results. A second run over the
        same list (``_more``: the ranking past the results) reads the candidates the first
        run read from ``_ReplayedStream`` (fresh copies) instead of building them again."""
        stream = self._stream
        if (stream is None or stream[0] is not scored or stream[1] != vectors_ns
                or not REPLAY):
            source = candidates(
                self.conn, scored, namespace_id=vectors_ns,
                # a stand-in moved up to a merge's rank would break an order by time
                prefer_change=self.settings.collapse and self.sort == "relevance",
                folder=self.folder)
            stream = (scored, vectors_ns, _ReplayedStream(source) if REPLAY else source)
            self._stream = stream
        return run_pipeline(
            iter(stream[2]),
            self.settings, top_n=top_n, query=self.query, reranker=self.engine.reranker,
            reranker_problem=self.engine.reranker_problem,
            resumable=RESUME and self.ranking_depth > top_n,
        )

    def _facts(self, ranked: _Pass, c: Any, copied: dict[int, tuple[list[Any], int]],
               pipeline: dict[str, Any] | None) -> RankingFacts:
        """The ranking facts of candidate ``c`` of ``ranked`` (its ranks and raw scores in
        each ranker's list, its copies, what the pipeline did to it)."""
        lex, sem = ranked.evidence()
        key = c.key
        lex_rank, bm25 = lex.get(key, (None, None))
        sem_rank, similarity = sem.get(key, (None, None))
        found = copied.get(key, ([], 0))
        return RankingFacts(
            score=round(c.score, 6), lexical_rank=lex_rank, semantic_rank=sem_rank,
            bm25=bm25, similarity=similarity, lexical_score=ranked.lex_scores.get(key),
            copies=found[0], copies_omitted=found[1], pipeline=pipeline)

    def _response(self, ranked: _Pass) -> GitSearchResponse:
        """Hydrate the results, and with ``ranking_depth`` the ranking past them."""
        conn, outcome = self.conn, ranked.outcome
        rows = hydrate(conn, [c.key for c in outcome.results])
        found = copies(conn, outcome, collapse=self.settings.collapse, refs=self.engine.refs)
        by_id = {cid: rows[cid]["hash"] for cid in rows}

        def label(k: int) -> str:
            return _label(conn, by_id, k)

        results = [
            _result(rows[c.key], facts=self._facts(ranked, c, found,
                                                   outcome.explain(c, label=label)))
            for c in outcome.results if c.key in rows
        ]
        if not results:
            self.warnings.extend(_qualifier_warnings(self.query))
            self.warnings.extend(_no_match_warnings(
                conn, self.filters.after, self.filters.before,
                self.narrowing.path if self.narrowing is not None else None))
        summary = outcome.summary(label=label)
        # last: ``_more`` may read on with the results' own pipeline run (extend_pipeline),
        # which appends to the results' ``absorbed`` lists
        more = self._more(ranked, label)
        return GitSearchResponse(
            results=results, query=self.query, total_commits_indexed=self.total,
            requested_mode=self.mode, effective_mode=ranked.effective,
            embedded_fraction=ranked.embedded_fraction, warnings=self.warnings,
            pipeline=summary, more=more, pickaxe=self.pickaxe,
        )

    def _more(self, ranked: _Pass, label: Callable[[int], str]) -> list[RankedHit]:
        """The ranking past the results, ``ranking_depth`` long (none when 0)."""
        outcome = ranked.outcome
        if self.ranking_depth <= len(outcome.results):
            return []
        shown = {c.key for c in outcome.results}
        shown |= {a.key for c in outcome.results for a in c.absorbed}
        # the results' own run read on (the same candidates, admitted in the same order as
        # a new run over the replayed stream would), or that new run
        longer = extend_pipeline(outcome, self.ranking_depth) if RESUME else None
        if longer is None:
            longer = self._pipeline(ranked.scored, ranked.vectors_ns, self.ranking_depth)
        later = [c for c in longer.results if c.key not in shown]
        found_later = copies(self.conn, longer, collapse=self.settings.collapse,
                             refs=self.engine.refs, keys={c.key for c in later})
        return [RankedHit(commit_id=c.key,
                          **self._facts(ranked, c, found_later,
                                        longer.explain(c, label=label)).facts())
                for c in later]
