"""The result pipeline every corpus runs after ranking (seed 000 §2.3, issue 14).

One implementation for commit history, repository docs and the architecture graph. Input:
candidates in ranked order (best first), each with a score in [0, 1] (or raw scores and
``normalise``), the text and, where the corpus has one, the unit vector of the result. Steps,
in the seed's order, each switchable (``PipelineSettings``, from ``[search]``):

1. **normalise** (corpora with raw scores only): min-max scaling over the candidate list.
2. **collapse**: candidates with the same ``group`` (commit history: the patch-id shared by a
   cherry-pick, a rebased copy, a backport) are one result, at the best rank any copy
   reached; the others are listed under it.
3. **threshold**: a candidate whose score is below ``min_confidence`` is removed.
4. **ngram_dedup**: a candidate whose text's word-trigram Jaccard similarity with a result
   already kept is ``>= ngram_dedup_threshold`` is listed under that result.
5. **embedding_dedup**: the same with the cosine similarity of the vectors
   (``dedup_threshold``); candidates without a vector are never removed by it.
6. **doc_limit**: at most ``max_chunks_per_doc`` results per ``doc``.
7. **mmr**: maximal marginal relevance, ``λ·score − (1−λ)·max similarity to the results
   chosen before`` (cosine of vectors when both have one, else the n-gram Jaccard), greedily.
   λ = 1 is the plain ranking.
8. **rerank**: a cross-encoder (``retrieval.rerank``) scores the first ``rerank_top_n``
   (query, text) pairs and orders them by that score.
9. **fold** (a corpus hook): results the corpus folds under other shown results (commit
   history: a merge that only brought in commits already shown).

With collapse off, the dedup steps (4, 5) never remove a candidate because it resembles a
result of its own ``group``: turning collapse off lists every copy as its own result, it
does not hand the copies to a text or vector step that hides them (issue 20 §3).

**The first k results never depend on ``top_n``** (issue 20 §3): steps 2-6 decide each
candidate from the candidates ranked above it only; MMR and rerank choose from a pool whose
size does not depend on ``top_n`` (``MMR_POOL``, ``rerank_top_n``) and MMR picks greedily, so
its first k picks are the same whatever the number of picks. (A ``fold`` hook sees the window
and so breaks this; the commit corpus folds merges in its candidate stream instead.)

Steps 2-6 are filters applied in rank order over a lazy input, so a corpus may hydrate its
candidates one by one and the pipeline reads only as many as it needs: ``top_n`` survivors
(more when MMR or rerank choose from a pool: ``pool_size``), then one more for every result a
fold removed. A corpus may also fold a candidate itself before the pipeline reads it
(``Candidate.folded``: keys listed under it; ``Candidate.fold_under``: show it under the
result holding that key, when one does). A removed candidate is never lost silently: it is
listed under the result that absorbed it (``Candidate.absorbed``) or in
``PipelineOutcome.removed`` (threshold), and ``explain`` says per result which steps moved
or removed what.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from gitquarry.retrieval.pipeline_settings import MMR_POOL as MMR_POOL
from gitquarry.retrieval.pipeline_settings import PipelineSettings
from gitquarry.retrieval.similarity import cosine, jaccard, shingles

if TYPE_CHECKING:  # NumPy is imported by whoever makes vectors, not by every command
    import numpy as np

K = TypeVar("K", bound=Hashable)

#: how many times a fold may remove results and the window be refilled
FOLD_ROUNDS = 4
#: threshold removals listed by ``PipelineOutcome.summary``
MAX_LISTED_REMOVALS = 20
#: similarities within this of a threshold count as reaching it (float32 vectors)
_EPS = 1e-6


def check_min_score(value: float | None, name: str = "min_score") -> None:
    """:raises InvalidArgumentError: ``value`` is not None and not a number in [0, 1]."""
    import math

    from gitquarry.errors import InvalidArgumentError

    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
        math.isfinite(value) and 0 <= value <= 1
    ):
        raise InvalidArgumentError(name, f"must be a number from 0 to 1, got {value!r}")


class Reranker(Protocol):
    """A cross-encoder: one relevance score per (query, passage), higher is better."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True)
class Absorbed(Generic[K]):
    """A candidate listed under a result instead of shown: ``step`` removed it
    (``collapse``, ``ngram_dedup``, ``embedding_dedup``, ``doc_limit``, ``fold``);
    ``similarity`` is the value that reached the step's threshold (dedup steps)."""

    key: K
    step: str
    input_rank: int
    similarity: float | None = None


@dataclass(frozen=True)
class Move:
    """A result moved by an ordering step from rank ``before`` to ``after`` (1-based, among
    the candidates that step ordered); ``score`` is the step's own score (rerank)."""

    step: str
    before: int
    after: int
    score: float | None = None


@dataclass(frozen=True)
class Removed(Generic[K]):
    """A candidate dropped without a result to list it under (``threshold``)."""

    key: K
    step: str
    input_rank: int
    score: float


@dataclass(kw_only=True, eq=False)
class Candidate(Generic[K]):
    """One ranked candidate. ``score`` in [0, 1], higher is better (raw when the settings
    normalise). ``text`` feeds n-gram dedup, MMR without vectors and rerank; ``vector`` (unit
    length, or None) embedding dedup and MMR; ``doc`` the per-document limit (None: a document
    of its own); ``group`` collapsing (None: no copies). ``data`` is the corpus's own payload.
    ``folded``: keys the corpus already folded under this candidate (listed as absorbed by
    ``fold``); ``fold_under``: a key ranked above this candidate under whose result this one
    is listed (step ``fold``) when that key is shown or listed under a result.
    The pipeline fills ``input_rank`` (1-based position in the input), ``absorbed``, ``moves``
    and ``rerank_score``."""

    key: K
    score: float
    text: str = ""
    vector: np.ndarray | None = None
    doc: Hashable | None = None
    group: Hashable | None = None
    data: Any = None
    input_rank: int = 0
    absorbed: list[Absorbed[K]] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    rerank_score: float | None = None
    folded: list[K] = field(default_factory=list)
    fold_under: K | None = None
    _shingles: frozenset[tuple[str, ...]] | None = None

    @property
    def shingles(self) -> frozenset[tuple[str, ...]]:
        if self._shingles is None:
            self._shingles = shingles(self.text)
        return self._shingles


@dataclass
class PipelineOutcome(Generic[K]):
    """The results (at most ``top_n``, in final order), the candidates dropped without a
    host, the steps that ran, typed warnings ``(code, message)`` and how many candidates
    were read from the input."""

    results: list[Candidate[K]]
    removed: list[Removed[K]] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    examined: int = 0
    #: the filters of a resumable run (``extend_pipeline``), None otherwise
    _filters: _Filters[K] | None = field(default=None, repr=False, compare=False)

    def explain(self, result: Candidate[K], label: Callable[[K], str] = str) -> dict[str, Any]:
        """What the pipeline did to one result, as JSON-ready data: its input rank, its
        final rank, the ordering steps that moved it, and what it absorbed (by step)."""
        rank = next(n for n, r in enumerate(self.results, start=1) if r is result)
        absorbed: dict[str, list[dict[str, Any]]] = {}
        for item in result.absorbed:
            entry: dict[str, Any] = {"key": label(item.key), "input_rank": item.input_rank}
            if item.similarity is not None:
                entry["similarity"] = round(item.similarity, 4)
            absorbed.setdefault(item.step, []).append(entry)
        moves = [
            {"step": m.step, "from": m.before, "to": m.after,
             **({"score": round(m.score, 6)} if m.score is not None else {})}
            for m in result.moves
        ]
        return {"input_rank": result.input_rank, "rank": rank, "moved": moves,
                "absorbed": absorbed}

    def summary(self, label: Callable[[K], str] = str) -> dict[str, Any]:
        """Response-level facts: steps run, candidates examined, threshold removals (the
        first ``MAX_LISTED_REMOVALS``; ``removed_count`` counts them all)."""
        return {
            "steps": list(self.steps),
            "examined": self.examined,
            "removed": [
                {"key": label(r.key), "step": r.step, "input_rank": r.input_rank,
                 "score": round(r.score, 6)}
                for r in self.removed[:MAX_LISTED_REMOVALS]
            ],
            "removed_count": len(self.removed),
        }


def min_max(candidates: list[Candidate[K]]) -> None:
    """Scale the scores in place to [0, 1]: best 1, worst 0; all 1 when they are equal."""
    if not candidates:
        return
    lo = min(c.score for c in candidates)
    hi = max(c.score for c in candidates)
    for c in candidates:
        c.score = 1.0 if hi == lo else (c.score - lo) / (hi - lo)


class _Filters(Generic[K]):
    """Steps 2-6 applied to the input in rank order; ``take(n)`` returns up to ``n`` more
    survivors."""

    def __init__(self, source: Iterator[Candidate[K]], settings: PipelineSettings) -> None:
        self.source = source
        self.s = settings
        self.kept: list[Candidate[K]] = []
        self.removed: list[Removed[K]] = []
        self.group_host: dict[Hashable, Candidate[K] | None] = {}
        self.docs: dict[Hashable, list[Candidate[K]]] = {}
        #: key of every candidate read and kept or absorbed → the kept result showing it
        self.shown_by: dict[Hashable, Candidate[K]] = {}
        self.read = 0
        self.exhausted = False

    def take(self, n: int) -> list[Candidate[K]]:
        out: list[Candidate[K]] = []
        while len(out) < n and not self.exhausted:
            try:
                c = next(self.source)
            except StopIteration:
                self.exhausted = True
                break
            self.read += 1
            c.input_rank = self.read
            for key in c.folded:
                c.absorbed.append(Absorbed(key, "fold", self.read))
            if self._admit(c):
                out.append(c)
        return out

    def _absorb(self, host: Candidate[K], c: Candidate[K], step: str,
                similarity: float | None = None) -> None:
        host.absorbed.append(Absorbed(c.key, step, c.input_rank, similarity))
        # copies of an absorbed candidate follow it to its host
        host.absorbed.extend(c.absorbed)
        self.shown_by[c.key] = host
        for item in c.absorbed:
            self.shown_by[item.key] = host
        if c.group is not None and self.s.collapse:
            self.group_host.setdefault(c.group, host)

    def _admit(self, c: Candidate[K]) -> bool:
        s = self.s
        if s.collapse and c.group is not None and c.group in self.group_host:
            host = self.group_host[c.group]
            if host is not None:
                self._absorb(host, c, "collapse")
                return False
        if c.fold_under is not None and c.fold_under in self.shown_by:
            self._absorb(self.shown_by[c.fold_under], c, "fold")
            return False
        # with collapse off, a copy is never hidden as a near-duplicate of its own group
        rivals = (self.kept if s.collapse or c.group is None
                  else [k for k in self.kept if k.group != c.group])
        if c.score < s.min_confidence:
            self.removed.append(Removed(c.key, "threshold", c.input_rank, c.score))
            if s.collapse and c.group is not None:
                self.group_host.setdefault(c.group, None)
            return False
        if s.ngram_dedup_enabled:
            host, sim = _most_jaccard(c, rivals)
            if host is not None and sim >= s.ngram_dedup_threshold - _EPS:
                self._absorb(host, c, "ngram_dedup", sim)
                return False
        if s.dedup_enabled and c.vector is not None:
            vector = c.vector
            host, sim = _most_similar(
                [k for k in rivals if k.vector is not None],
                lambda k: max(0.0, cosine(vector, k.vector)),  # type: ignore[arg-type]
            )
            if host is not None and sim >= s.dedup_threshold - _EPS:
                self._absorb(host, c, "embedding_dedup", sim)
                return False
        if c.doc is not None:
            same = self.docs.setdefault(c.doc, [])
            if len(same) >= s.max_chunks_per_doc:
                self._absorb(same[0], c, "doc_limit")
                return False
            same.append(c)
        self.kept.append(c)
        self.shown_by[c.key] = c
        for item in c.absorbed:
            self.shown_by[item.key] = c
        if s.collapse and c.group is not None:
            self.group_host[c.group] = c
        return True


def _most_similar(
    kept: list[Candidate[K]], sim: Callable[[Candidate[K]], float]
) -> tuple[Candidate[K] | None, float]:
    best: Candidate[K] | None = None
    best_sim = -1.0
    for k in kept:
        value = sim(k)
        if value > best_sim:
            best, best_sim = k, value
    return best, best_sim


def _most_jaccard(c: Candidate[K], kept: list[Candidate[K]]
                  ) -> tuple[Candidate[K] | None, float]:
    """``_most_similar(kept, lambda k: jaccard(c.shingles, k.shingles))``, inline: the same
    arithmetic and the same first maximum, without two calls per rival (~1,300 rivals per
    MCP search with a 50-deep ranking)."""
    a = c.shingles
    if not a:  # every similarity is 0.0: the first rival, as the loop would pick it
        return (kept[0], 0.0) if kept else (None, -1.0)
    size = len(a)
    best: Candidate[K] | None = None
    best_sim = -1.0
    for k in kept:
        b = k.shingles
        if b:
            shared = len(a & b)
            value = shared / (size + len(b) - shared)
        else:
            value = 0.0
        if value > best_sim:
            best, best_sim = k, value
    return best, best_sim


def _pair_similarity(a: Candidate[K], b: Candidate[K]) -> float:
    if a.vector is not None and b.vector is not None:
        return max(0.0, cosine(a.vector, b.vector))
    return jaccard(a.shingles, b.shingles)


def mmr_order(items: Sequence[Candidate[K]], lam: float,
              picks: int | None = None) -> list[Candidate[K]]:
    """``items`` (best first) reordered by maximal marginal relevance: repeatedly the item
    maximising ``lam·score − (1−lam)·max similarity to the items already chosen``; ties keep
    the input order. ``lam = 1`` returns the items ordered by score (ties: input order).
    ``picks``: choose only that many greedily (the rest follow in input order); greedy, so the
    first k picks are the same for any ``picks >= k``."""
    remaining = list(range(len(items)))
    max_sim = [0.0] * len(items)
    order: list[int] = []
    while remaining and (picks is None or len(order) < picks):
        best = max(remaining, key=lambda i: (lam * items[i].score - (1 - lam) * max_sim[i], -i))
        remaining.remove(best)
        order.append(best)
        if lam < 1:
            for i in remaining:
                max_sim[i] = max(max_sim[i], _pair_similarity(items[i], items[best]))
    return [items[i] for i in order] + [items[i] for i in remaining]


def run_pipeline(
    candidates: Iterable[Candidate[K]],
    settings: PipelineSettings,
    *,
    top_n: int,
    query: str = "",
    reranker: Reranker | None = None,
    reranker_problem: tuple[str, str] | None = None,
    fold: Callable[[list[Candidate[K]]], dict[K, K]] | None = None,
    resumable: bool = False,
) -> PipelineOutcome[K]:
    """Run the steps in the module docstring over ``candidates`` (ranked, best first) and
    return at most ``top_n`` results.

    ``reranker``: the cross-encoder for step 8; when ``settings.rerank_enabled`` and it is
    None, rerank is skipped with the warning ``reranker_problem`` (code, message) or
    ``rerank_unavailable``. ``fold(window)`` returns ``{key: host key}`` for results of the
    current window to fold under another result of it; the window is then refilled.
    A reranker that raises is reported (``rerank_failed``) and the order kept.
    ``resumable``: keep the filters so that ``extend_pipeline`` can read on (where the
    settings allow it; the input iterator is then held by the outcome).
    """
    outcome: PipelineOutcome[K] = PipelineOutcome(results=[])
    source: Iterator[Candidate[K]] = iter(candidates)
    if settings.normalise:
        listed = list(source)
        min_max(listed)
        source = iter(listed)
        outcome.steps.append("normalise")
    if settings.collapse:
        outcome.steps.append("collapse")
    if settings.min_confidence > 0:
        outcome.steps.append("threshold")
    if settings.ngram_dedup_enabled:
        outcome.steps.append("ngram_dedup")
    if settings.dedup_enabled:
        outcome.steps.append("embedding_dedup")
    outcome.steps.append("doc_limit")
    use_rerank = settings.rerank_enabled and reranker is not None
    if settings.rerank_enabled and reranker is None:
        outcome.warnings.append(reranker_problem or (
            "rerank_unavailable", "rerank is enabled but no cross-encoder is configured "
            "([search] rerank_model); results are not reranked",
        ))
    if settings.mmr_enabled:
        outcome.steps.append("mmr")
    if use_rerank:
        outcome.steps.append("rerank")
    if fold is not None:
        outcome.steps.append("fold")

    filters = _Filters(source, settings)
    pool = filters.take(settings.pool_size(top_n, rerank=use_rerank))
    rerank_scores: dict[Hashable, float] = {}
    window: list[Candidate[K]] = []
    for _round in range(FOLD_ROUNDS + 1):
        ordered = list(pool)
        mmr_before = {id(c): n for n, c in enumerate(ordered, start=1)}
        if settings.mmr_enabled:
            ordered = mmr_order(
                ordered, settings.mmr_lambda,
                picks=max(top_n, settings.rerank_top_n if use_rerank else 0),
            )
        mmr_after = {id(c): n for n, c in enumerate(ordered, start=1)}
        rerank_before = dict(mmr_after)
        if use_rerank and reranker is not None and ordered:
            ordered, failure = _rerank(ordered, reranker, query, settings.rerank_top_n,
                                       rerank_scores)
            if failure is not None:
                outcome.warnings.append(failure)
                use_rerank = False
                outcome.steps.remove("rerank")
        window = ordered[:top_n]
        if fold is None or _round == FOLD_ROUNDS:
            break
        folds = _valid_folds(fold(window), window)
        if not folds:
            break
        by_key = {c.key: c for c in window}
        for key, host in folds.items():
            folded = by_key[key]
            by_key[host].absorbed.append(Absorbed(folded.key, "fold", folded.input_rank))
            by_key[host].absorbed.extend(folded.absorbed)
            pool.remove(folded)
        pool.extend(filters.take(len(folds)))
    for c in window:
        c.moves = []
        if settings.mmr_enabled and mmr_before[id(c)] != mmr_after[id(c)]:
            c.moves.append(Move("mmr", mmr_before[id(c)], mmr_after[id(c)]))
        if use_rerank and c.key in rerank_scores:
            after = next(n for n, x in enumerate(window, start=1) if x is c)
            c.rerank_score = rerank_scores[c.key]
            c.moves.append(Move("rerank", rerank_before[id(c)], after, c.rerank_score))
    outcome.results = window
    outcome.removed = filters.removed
    outcome.examined = filters.read
    if (resumable and not settings.normalise and not settings.mmr_enabled
            and not settings.rerank_enabled and fold is None):
        # the results are the first ``top_n`` survivors in input order: a longer run over
        # the same input is this run's filters reading on (``extend_pipeline``)
        outcome.removed = list(filters.removed)
        outcome._filters = filters
    return outcome


def extend_pipeline(outcome: PipelineOutcome[K], top_n: int) -> PipelineOutcome[K] | None:
    """What ``run_pipeline`` over the same input with a larger ``top_n`` returns, by
    reading on where the run of ``outcome`` stopped (``run_pipeline(..., resumable=True)``,
    without normalise, MMR, rerank or a fold hook: then steps 2-6 decide each candidate
    from the candidates read before it alone, and the results are the first ``top_n``
    survivors in input order, so a longer run reads the same candidates in the same order,
    admits the same ones first and goes on). None when ``outcome`` cannot be extended (not
    resumable, or already extended) or ``top_n`` is not larger than its results.

    The returned outcome's first results are ``outcome``'s own candidate objects: what the
    candidates read on are absorbed into is appended to their ``absorbed`` lists, as in the
    longer run. Read everything needed from ``outcome`` first (its ``removed`` is its own
    copy; ``results`` and ``examined`` keep its values)."""
    filters = outcome._filters
    if filters is None or top_n <= len(outcome.results):
        return None
    outcome._filters = None
    longer: PipelineOutcome[K] = PipelineOutcome(
        results=list(outcome.results), steps=list(outcome.steps),
        warnings=list(outcome.warnings))
    more = filters.take(top_n - len(outcome.results))
    for c in more:
        c.moves = []
    longer.results.extend(more)
    longer.removed = filters.removed
    longer.examined = filters.read
    return longer


def _valid_folds(folds: dict[K, K], window: list[Candidate[K]]) -> dict[K, K]:
    """Folds whose item and host are both in the window, never an item that hosts another
    fold (one level only), never a cycle."""
    keys = {c.key for c in window}
    valid = {k: h for k, h in folds.items() if k in keys and h in keys and k != h}
    hosts = set(valid.values())
    return {k: h for k, h in valid.items() if k not in hosts}


def _rerank(
    ordered: list[Candidate[K]],
    reranker: Reranker,
    query: str,
    top: int,
    cache: dict[Hashable, float],
) -> tuple[list[Candidate[K]], tuple[str, str] | None]:
    head = ordered[:top]
    todo = [c for c in head if c.key not in cache]
    if todo:
        try:
            scores = reranker.score(query, [c.text for c in todo])
        except Exception as exc:  # a model failure must not lose the answer
            return ordered, ("rerank_failed", f"rerank with {reranker.name} failed ({exc}); "
                             "results are in their ranked order")
        if len(scores) != len(todo):
            return ordered, ("rerank_failed", f"rerank with {reranker.name} returned "
                             f"{len(scores)} scores for {len(todo)} passages")
        for c, value in zip(todo, scores, strict=True):
            cache[c.key] = float(value)
    position = {id(c): n for n, c in enumerate(head)}
    head = sorted(head, key=lambda c: (-cache[c.key], position[id(c)]))
    return head + ordered[top:], None
