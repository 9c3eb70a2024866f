"""Reciprocal rank fusion, score fusion, score normalisation, and query shapes."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from gitquarry._lazy import lazy_re

K = TypeVar("K", bound=Hashable)


def rrf_fuse(
    rankings: Sequence[Sequence[K]], weights: Sequence[float] | None = None, k: int = 60
) -> list[tuple[K, float]]:
    """Fuse ranked lists with reciprocal rank fusion: score(d) = Σ w_i / (k + rank_i(d)).

    ``rankings`` are lists of ids, best first (rank 1 = first). Returns (id, fused score)
    sorted by score descending; ties keep the order of first appearance across the lists
    (list 0 first), so the result is deterministic.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[K, float] = {}
    first_seen: dict[K, int] = {}
    order = 0
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            if key not in first_seen:
                first_seen[key] = order
                order += 1
    return sorted(scores.items(), key=lambda kv: (-kv[1], first_seen[kv[0]]))


def rrf_max_score(weights: Sequence[float], k: int = 60) -> float:
    """The best possible fused score: rank 1 in every list."""
    return sum(w / (k + 1) for w in weights)


def rrf_normaliser(weights: Sequence[float], k: int = 60) -> Callable[[float], float]:
    """``normalise_rrf`` for one ``weights``/``k``, the best score computed once (a search
    normalises hundreds of fused scores with the same weights)."""
    best = rrf_max_score(weights, k)

    def normalise(score: float) -> float:
        return 0.0 if best <= 0 else max(0.0, min(1.0, score / best))

    return normalise


def normalise_rrf(score: float, weights: Sequence[float], k: int = 60) -> float:
    """Map a fused score to [0, 1] by dividing by the best possible score."""
    return rrf_normaliser(weights, k)(score)


# --------------------------------------------------------------------------- query shape

#: a word that looks like code: snake_case, dotted.name, CamelCase, --flag, path/segment,
#: ALLCAPS (3+ letters), or letters mixed with digits.
_CODE_WORD = lazy_re(
    r"""(?x)
    ^(?:
        [A-Za-z0-9]*_[A-Za-z0-9_]*        # snake_case, _private, UNSET_VALUE
      | [A-Za-z_]\w*(?:\.\w+)+\(?\)?      # dotted.name, module.func()
      | [a-z]+[A-Z]\w*                    # camelCase
      | [A-Z][a-z0-9]+[A-Z]\w*            # CamelCase with two humps
      | -{1,2}[A-Za-z][\w-]*              # --flag, -v
      | [\w.-]*/[\w./-]*                  # path/segment
      | [A-Z]{3,}[A-Z0-9]*                # COMPREPLY, UNSET
      | [A-Za-z]+\d[\w]*|\d+[A-Za-z]\w*   # mixed letters and digits
      | \w+\(\)                           # call()
    )$"""
)
_QUOTED = lazy_re(r"[\"'`][^\"'`]+[\"'`]")


def query_shape(query: str) -> str:
    """Classify a search query by how it is written.

    ``"keyword"``: quoted text, or at most two words with one looking like code (an
    identifier, path, flag, CONSTANT) — the user knows the exact term. ``"natural"``: five or
    more words and none looks like code — a question in prose. ``"mixed"``: the rest.
    """
    if _QUOTED.search(query):
        return "keyword"
    words = [w.strip(",;:!?()[]{}<>") for w in query.split()]
    words = [w for w in words if w]
    code = sum(1 for w in words if _CODE_WORD.match(w.rstrip(".")))
    if code and len(words) <= 2:
        return "keyword"
    if not code and len(words) >= 5:
        return "natural"
    return "mixed"


@dataclass(frozen=True)
class ShapeWeights:
    """(lexical, semantic) RRF weights per query shape."""

    keyword: tuple[float, float] = (1.0, 1.0)
    mixed: tuple[float, float] = (1.0, 1.0)
    natural: tuple[float, float] = (1.0, 1.0)

    def for_query(self, query: str) -> tuple[float, float]:
        weights: tuple[float, float] = getattr(self, query_shape(query))
        return weights


#: RRF weight multipliers (lexical, semantic) per query shape, chosen with ``[search] rrf_k =
#: 40`` on the click and flask history dev sets with v3 commit vectors (docs/performance.md,
#: "Fusion constants with v3 vectors"): questions in prose lean on vectors; identifiers and
#: quoted text weigh both rankings alike (semantic × 0.5 for them lost on flask at k = 40,
#: tied on click).
SHAPE_WEIGHTS: Final = ShapeWeights(keyword=(1.0, 1.0), mixed=(1.0, 1.0), natural=(1.0, 2.0))


def score_fuse(
    rankings: Sequence[Sequence[tuple[K, float]]],
    weights: Sequence[float] | None = None,
) -> list[tuple[K, float]]:
    """Convex combination of min-max normalised scores (each list's best = 1, its last = 0;
    absent = 0). ``rankings`` are (id, score) lists, best first, higher score better."""
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    scores: dict[K, float] = {}
    first_seen: dict[K, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        values = [s for _, s in ranking]
        hi, lo = max(values), min(values)
        span = hi - lo
        for key, score in ranking:
            norm = (score - lo) / span if span > 0 else 1.0
            scores[key] = scores.get(key, 0.0) + weight * norm
            first_seen.setdefault(key, len(first_seen))
    total = sum(weights) or 1.0
    return sorted(((k, v / total) for k, v in scores.items()),
                  key=lambda kv: (-kv[1], first_seen[kv[0]]))


_INTRODUCED = lazy_re(
    r"""(?ix)^\s*(?:
        (?:when|where|which\s+commit|what\s+commit|who)\s+
        (?:was|were|did|has|have|is|first)?\s*(?:the\s+)?
        (?P<a>.+?)\s+
        (?:first\s+)?(?:introduced|added|implemented|created|born|landed|appear(?:ed)?|
           introduce|add|implement|arrive[d]?|come\s+in|came\s+in|get\s+(?:added|introduced)|
           gain(?:ed)?)\b(?P<rest>.*)
      | (?:when|which\s+commit|what\s+commit)\s+(?:did|was)\s+(?P<b>.+?)\s+
        (?:gain|get|acquire)\s+(?P<c>.+)
      | (?:first\s+commit|commit\s+that\s+(?:introduced|added))\s+(?:of|for|with)?\s*(?P<d>.+)
      | (?:who|which\s+commit|what\s+commit)\s+(?:first\s+)?
        (?:introduced|added|implemented|created)\s+(?P<e>.+)
    )\s*\??\s*$"""
)


def introduction_subject(query: str) -> str | None:
    """The subject of a "when was X introduced" question, or None for other queries.

    Recognises "when was/were/did X (first) introduced/added/implemented/created/appear(ed)",
    "which commit added X", "who introduced X", "when did X gain Y" (subject "X Y") and
    "first commit of X"; the
    subject is the query without those words (what the feature is called)."""
    match = _INTRODUCED.match(query)
    if match is None:
        return None
    if match.group("a"):
        subject = f"{match.group('a')} {match.group('rest') or ''}"
    elif match.group("b"):
        subject = f"{match.group('b')} {match.group('c')}"
    else:
        subject = match.group("d") or match.group("e") or ""
    subject = re.sub(r"\s+", " ", subject).strip(" ?")
    return subject or None


def rrf_fuse_partial(
    lexical: Sequence[K],
    semantic: Sequence[K],
    weights: Sequence[float],
    *,
    k: int = 60,
    has_vector: Callable[[K], bool],
) -> list[tuple[K, float]]:
    """Hybrid RRF while only some items have vectors (issue 20 §4): the semantic list only
    reorders among items that have a vector; an item without one is never ranked below where
    the lexical ranking alone puts it.

    ``lexical`` and ``semantic`` are id lists, best first; ``weights`` their two RRF weights;
    ``has_vector(id)`` whether the id could appear in ``semantic`` at all. Every lexical item
    without a vector keeps its lexical slot (1-based lexical rank r → final rank at most r;
    exactly r unless the list above it ran out); the other slots are filled, in order, by the
    items with vectors (lexical and semantic-only) in their ``rrf_fuse`` order. With every
    item embedded this is ``rrf_fuse``; with none, the lexical ranking. Values: the fused RRF
    value; a kept item gets ``(w_lex + w_sem) / (k + r)`` (as if the semantic ranker agreed
    with the lexical one), and values are then made non-increasing down the list (each at
    most the one above it), so sorting by value keeps this order. Deterministic: ties as
    ``rrf_fuse``.
    """
    fused = rrf_fuse([lexical, semantic], weights, k=k)
    kept: dict[int, K] = {}
    seen: set[K] = set()
    for rank, key in enumerate(lexical):
        if key not in seen:
            seen.add(key)
            if not has_vector(key):
                kept[rank] = key
    if not kept:
        return fused
    kept_keys = set(kept.values())
    rest = iter([(key, value) for key, value in fused if key not in kept_keys])
    agree = sum(weights)
    out: list[tuple[K, float]] = []
    for slot in range(len(fused)):
        if slot in kept:
            out.append((kept[slot], agree / (k + slot + 1)))
            continue
        item = next(rest, None)
        if item is not None:
            out.append(item)
    monotone: list[tuple[K, float]] = []
    for key, value in out:
        if monotone and value > monotone[-1][1]:
            value = monotone[-1][1]
        monotone.append((key, value))
    return monotone


@dataclass(frozen=True)
class LexicalGuard:
    """The rule that keeps a strong keyword hit in the hybrid ranking (issue 22, "hybrid is
    never below lexical alone"): each of the lexical ranking's first ``keep`` items whose
    semantic rank is worse than ``blind_rank`` (or that the semantic ranking does not hold:
    the vectors cannot see it) is placed no lower than ``slot × its lexical rank`` in the
    fused order. ``keep = 0`` turns the rule off."""

    keep: int = 0
    slot: int = 2
    blind_rank: int = 0


def _place_by_deadline(order: Sequence[K], deadline: dict[K, int]) -> tuple[list[K], set[K]]:
    """``order`` refilled position by position: an id of ``deadline`` (0-based position it
    must reach) goes to the current position once that position is its deadline (earliest
    deadline first), otherwise the next id of ``order`` not placed yet. Returns the new order
    (the same ids) and the ids placed by their deadline (those that moved up to it). Shared
    by :func:`guard_lexical` and :func:`floor_lexical`."""
    due = sorted(deadline, key=deadline.__getitem__)
    out: list[K] = []
    placed: set[K] = set()
    moved: set[K] = set()
    natural = iter(order)
    d = 0
    while len(out) < len(order):
        while d < len(due) and due[d] in placed:
            d += 1
        if d == len(due):  # every deadline met: the rest in the given order
            out.extend(key for key in natural if key not in placed)
            break
        if deadline[due[d]] <= len(out):
            key = due[d]
            moved.add(key)
        else:
            key = next(natural)
            if key in placed:
                continue
        placed.add(key)
        out.append(key)
    return out, moved


def guard_lexical(
    fused: Sequence[tuple[K, float]],
    lexical: Sequence[K],
    semantic: Sequence[K],
    guard: LexicalGuard,
) -> list[tuple[K, float]]:
    """``fused`` ((id, value) best first, values non-increasing) with :class:`LexicalGuard`
    applied. Each guarded item (lexical rank ``r`` ≤ ``keep``, semantic rank worse than
    ``blind_rank``) has a deadline ``slot × r``; the output is filled slot by slot: a guarded
    item whose deadline is reached goes there, otherwise the next item of the fused order.
    So every guarded item ends at or above its deadline (deadlines are distinct; one above
    its deadline may step down, never past it, to make room for another), and all other
    items keep their relative order, each moving down by at most the number of guarded
    items. A moved item
    takes the value of the next unmoved item, so values stay non-increasing and sorting by
    value (ties by list order) keeps the order. The id set never changes."""
    if guard.keep <= 0 or not fused or not lexical:
        return list(fused)
    sem_rank = {key: n for n, key in enumerate(semantic, start=1)}
    value_of = dict(fused)
    deadline: dict[K, int] = {}
    for rank, key in enumerate(lexical[: guard.keep], start=1):
        if key in deadline or key not in value_of:
            continue
        if sem_rank.get(key, len(semantic) + 1) > guard.blind_rank:
            deadline[key] = guard.slot * rank  # else: the vectors see it, fusion weighed both
    if not deadline:
        return list(fused)
    order, moved = _place_by_deadline(
        [key for key, _ in fused], {key: slot - 1 for key, slot in deadline.items()})
    out: list[tuple[K, float]] = []
    for n, key in enumerate(order):
        value = value_of[key]
        if key in moved:
            value = max(value, next((value_of[k] for k in order[n + 1:] if k not in moved),
                                    value))
        if out:
            value = min(value, out[-1][1])
        out.append((key, value))
    return out


#: The lexical guard hybrid history search applies (measured: docs/performance.md).
LEXICAL_GUARD = LexicalGuard()


def default_lexical_guard() -> LexicalGuard:
    """The guard in use (read at call time, so benchmarks can swap it)."""
    return LEXICAL_GUARD


@dataclass(frozen=True)
class LexicalFloor:
    """Hybrid's promise to full keyword matches (issue 22, "hybrid is never below lexical
    alone"): each of the lexical ranking's first ``keep`` hits that holds **every** query
    word stays within the fused ranking's first ``window`` positions. ``keep = 0`` (or
    ``window = 0``) turns it off.

    Why only those: on the dev sets (docs/performance.md, "History fusion, s4"), a lexical
    top-5 hit that holds only some words of a prose question and that the vectors do not
    rank is the answer 1.1 % of the time, the items it would push out of fused ranks 8-10
    3.4 %; a top-5 hit holding every word 7.1 %. Keeping the first kind costs recall, the
    second costs nothing measured."""

    keep: int = 0
    window: int = 10


def floor_lexical(
    fused: Sequence[tuple[K, float]],
    protected: Sequence[K],
    window: int,
    *,
    pinned: Collection[K] = (),
) -> list[tuple[K, float]]:
    """``fused`` ((id, value) best first, values non-increasing) reordered so that every id
    of ``protected`` (at most ``window`` of them, best first; ids absent from ``fused`` are
    ignored) is among the first ``window`` items, while no id of ``pinned`` moves down
    (``rrf_fuse_partial``'s promise to lexical hits without a vector).

    Protected ids already in the window, and pinned ids, keep their positions or move up. A
    protected id outside the window takes one of the window's last positions held by neither
    kind (lowest first, in ``protected`` order); the items it displaces, and everything
    after them, keep their relative order and step down past it (a pinned id never: it keeps
    its position). The list is filled slot by slot, earliest deadline first, so every id
    reaches its deadline. Unprotected, unpinned items keep their relative order; without
    pinned ids none moves down by more than the number of protected ids in the window. The
    id set never changes; with nothing to place ``fused`` comes back unchanged. Values stay
    with the positions (position n keeps ``fused``'s n-th value), so they stay non-increasing
    and sorting by value (ties by list order) keeps this order.

    A window whose positions are all held by pinned or protected ids has no room for more:
    the protected ids that do not fit stay where fusion put them. This cannot happen in
    hybrid search: there ``protected`` holds at most 5 lexical top-5 hits and ``pinned`` only
    lexical hits without vectors, so the window has room for every protected id.

    :raises ValueError: ``window`` is negative.
    """
    if window < 0:
        raise ValueError("window must be at least 0")
    order = [key for key, _ in fused]
    position = {key: n for n, key in enumerate(order)}
    chosen = [key for key in dict.fromkeys(protected) if key in position][:window]
    need = [key for key in chosen if position[key] >= window]
    if not need:
        return list(fused)
    deadline: dict[K, int] = {key: position[key] for key in pinned if key in position}
    deadline.update((key, position[key]) for key in chosen if position[key] < window)
    free = [n for n in range(min(window, len(order))) if order[n] not in deadline]
    slots = free[len(free) - min(len(need), len(free)):]
    deadline.update(zip(need[: len(slots)], slots, strict=True))  # the rest cannot fit
    out, _ = _place_by_deadline(order, deadline)
    return [(key, value) for key, (_, value) in zip(out, fused, strict=True)]


#: The floor hybrid history search applies: the first 5 lexical hits holding every query word
#: stay in the fused top 10 (measured: docs/performance.md, "History fusion, s4").
LEXICAL_FLOOR = LexicalFloor(keep=5, window=10)


def default_lexical_floor() -> LexicalFloor:
    """The floor in use (read at call time, so benchmarks can swap it)."""
    return LEXICAL_FLOOR
