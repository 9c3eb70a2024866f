"""Result types of the commit-history corpus."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar


@dataclass(frozen=True, kw_only=True)
class RankingFacts:
    """Where a commit stands in one ranking: the facts ``CommitResult`` (a result),
    ``RankedHit`` (the ranking past ``top_n``) and ``history.cursor.PinnedHit`` (a pinned
    ranking) share, so a cursor's later pages show what the first page shows.

    ``score`` is in [0, 1], higher is better; what it is in each mode is defined in
    ``gitquarry.history.search.scores`` (lexical: 0.5 for holding every query word plus 0.5 × BM25
    / the query's largest possible BM25; semantic: cosine similarity; hybrid: the RRF fused
    score over its maximum). Evidence (``explain``): ``lexical_rank`` / ``semantic_rank``
    are 1-based ranks in each list (None: not in that list); ``bm25`` is SQLite's bm25()
    value (lower is better); ``similarity`` the cosine similarity; ``lexical_score`` the
    lexical score even in hybrid mode.
    """

    score: float
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    bm25: float | None = None
    similarity: float | None = None
    lexical_score: float | None = None
    #: other commits that are the same change (``via: patch-id``: same ``git patch-id``;
    #: ``via: merge``: a merge that only brought in shown commits), each
    #: ``{hash, refs, committed, via}``; ``refs`` the indexed refs containing it (at most 20,
    #: named and ordered as a result's ``refs``; ``refs_omitted`` counts the rest),
    #: ``committed`` the committer time
    copies: list[dict[str, Any]] = field(default_factory=list)
    #: copies beyond the ones listed
    copies_omitted: int = 0
    #: what the result pipeline did to this result (``--explain`` only)
    pipeline: dict[str, Any] | None = None

    def facts(self) -> dict[str, Any]:
        """The ranking facts alone, as keywords for another holder (the same lists, not
        copies): ``PinnedHit(hash=h, **result.facts())``."""
        return {name: getattr(self, name) for name in RANKING_FIELDS}


#: the fields of ``RankingFacts``, in declaration order
RANKING_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(RankingFacts))
#: the evidence fields a result shows only with ``explain``
EXPLAIN_FIELDS = ("lexical_rank", "semantic_rank", "bm25", "lexical_score", "similarity",
                  "pipeline")


@dataclass(frozen=True, kw_only=True)
class CommitResult(RankingFacts):
    """One commit in a search response (the seed's ``CommitResult`` plus debug fields): the
    stored commit and its ``RankingFacts``.

    ``timestamp`` is the committer time, Unix seconds UTC. ``author``/``committer`` are the
    identities after the repository's ``.mailmap``; ``author_raw``/``committer_raw`` as
    committed (the same string when the mailmap does not map them). ``message`` is the body
    without the title. Results are sorted by ``score`` descending.
    """

    hash: str
    title: str
    author: str
    committer: str
    timestamp: int
    message: str
    files_changed: list[str]
    delta_truncated: str
    repo_path: str
    author_time: int = 0
    parents: list[str] = field(default_factory=list)
    is_merge: bool = False
    #: the identities as committed, before ``.mailmap`` (``author``/``committer`` are the
    #: canonical ``%aN <%aE>``); equal to them when the mailmap does not map the identity
    author_raw: str = ""
    committer_raw: str = ""

    #: the order of ``to_dict``'s keys (the seed's fields first, then the evidence)
    KEYS: ClassVar[tuple[str, ...]] = (
        "hash", "title", "author", "committer", "timestamp", "message", "files_changed",
        "delta_truncated", "score", "repo_path", "author_time", "parents", "is_merge",
        "author_raw", "committer_raw", "lexical_rank", "semantic_rank", "bm25",
        "lexical_score", "similarity", "copies", "copies_omitted", "pipeline")

    def to_dict(self, *, explain: bool = False) -> dict[str, Any]:
        """The seed's result fields plus ``copies``; with ``explain`` also ranks, bm25,
        lexical score, similarity and ``pipeline``."""
        data = asdict(self)
        return {key: data[key] for key in self.KEYS if explain or key not in EXPLAIN_FIELDS}


@dataclass(frozen=True, kw_only=True)
class RankedHit(RankingFacts):
    """A commit of the ranking past ``top_n`` (not hydrated): its row id and its
    ``RankingFacts``."""

    commit_id: int


@dataclass(frozen=True, kw_only=True)
class Warning_:
    """A warning with a stable ``code`` for automation and a human ``message``."""

    code: str
    message: str


@dataclass(frozen=True, kw_only=True)
class GitSearchResponse:
    """The response of ``search_git_history``.

    ``effective_mode`` is what actually ran ("lexical", "semantic" or "hybrid");
    ``requested_mode`` what was asked. ``embedded_fraction`` is the share of indexed commits
    that have a vector in the configured embedding namespace; it is only measured when
    semantic ranking is consulted (modes semantic and hybrid) and is 0.0 otherwise.
    ``warnings`` carry a stable ``code``: ``empty_query``, ``no_searchable_terms``,
    ``empty_index``, ``indexing_incomplete``, ``repository_failed``, ``refs_incomplete``,
    ``semantic_unavailable``, ``no_embeddings``, ``partial_embeddings``, ``semantic_failed``,
    ``patch_ids_incomplete``, ``rerank_unavailable``, ``rerank_failed``,
    ``qualifier_as_phrase`` (an empty answer to a ``word:word`` query); for an empty answer
    also ``before_oldest_commit``, ``after_newest_commit`` (a time bound outside every
    indexed commit's time) and ``path_matches_nothing`` (no indexed commit changes a path
    under the ``path`` filter).
    """

    results: list[CommitResult]
    query: str
    total_commits_indexed: int
    requested_mode: str = "lexical"
    effective_mode: str = "lexical"
    embedded_fraction: float = 0.0
    warnings: list[Warning_] = field(default_factory=list)
    #: the result pipeline's steps, candidates examined and threshold removals
    pipeline: dict[str, Any] | None = None
    #: the ranking past ``top_n`` (for cursors; not part of ``to_dict``)
    more: list[RankedHit] = field(default_factory=list)
    #: how a pickaxe filter was answered (``history.narrow.PickaxeReport``), or None
    pickaxe: Any = None

    def to_dict(self, *, explain: bool = False) -> dict[str, Any]:
        extra = {"pipeline": self.pipeline} if explain and self.pipeline is not None else {}
        return {
            **extra,
            "results": [r.to_dict(explain=explain) for r in self.results],
            "query": self.query,
            "total_commits_indexed": self.total_commits_indexed,
            "requested_mode": self.requested_mode,
            "effective_mode": self.effective_mode,
            "embedded_fraction": self.embedded_fraction,
            "warnings": [w.message for w in self.warnings],
            "warning_details": [{"code": w.code, "message": w.message} for w in self.warnings],
        }
