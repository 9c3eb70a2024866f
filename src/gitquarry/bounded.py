"""Hard bounds on what a response may carry: every field, and the whole payload.

A denial-of-service guard, not relevance tuning: one commit with a 4.5 MB message or a
hundred wide diffs must not produce a response of tens of megabytes over MCP or ``--json``.
Every surface that returns results (CLI ``--json``, MCP tools, the coming daemon and web page)
runs its payload through :func:`bound_results` with the corpus's :class:`Limits`.

What is cut says so:

- a string field keeps its first ``max_chars`` characters followed by
  ``CUT_MARKER`` (``…[gitquarry cut 4,499,000 more characters]``);
- a list field keeps its first items (at most ``max_items``, and no more than
  ``max_chars`` characters of items in all);
- each result that lost anything carries ``"cut": {field: amount}`` — characters for strings,
  items for lists — so a client can tell a cut field from a short one;
- when the results still exceed ``max_response_bytes`` with every shrinkable field at its
  floor, trailing (lowest-ranked) results are dropped and ``omitted`` says how many.

Sizes are measured as compact UTF-8 JSON (``json.dumps(..., ensure_ascii=False)``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: appended to a cut string; ``{n}`` is the number of characters cut.
CUT_MARKER = "…[gitquarry cut {n:,} more characters]"

#: floors below which fair sharing does not shrink a field (characters / items).
MIN_TEXT_CHARS = 200
MIN_ITEMS = 10


@dataclass(frozen=True, kw_only=True)
class FieldCap:
    """The hard cap of one field. ``max_chars``: characters of a string, or of a list's items
    together; ``max_items``: items of a list (None: the field is a string).
    ``shrinkable``: the field may be cut further, down to the floors, to share
    ``max_response_bytes`` fairly between results."""

    max_chars: int
    max_items: int | None = None
    shrinkable: bool = False


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The caps of one kind of result, and of the whole response (bytes of compact JSON)."""

    fields: Mapping[str, FieldCap]
    max_response_bytes: int = 1_000_000


@dataclass
class Bounded:
    """The bounded ``results``; ``omitted``: results dropped from the end to fit;
    ``cut_results``: how many results lost part of a field."""

    results: list[dict[str, Any]]
    omitted: int = 0
    cut_results: int = 0
    notes: list[str] = field(default_factory=list)


def cut_text(text: str, max_chars: int) -> tuple[str, int]:
    """``text`` cut to ``max_chars`` characters plus :data:`CUT_MARKER`; and how many
    characters were cut (0: unchanged). ``max_chars`` counts the kept text only."""
    if len(text) <= max_chars:
        return text, 0
    cut = len(text) - max_chars
    return text[:max_chars] + CUT_MARKER.format(n=cut), cut


def cut_items(items: list[Any], max_items: int, max_chars: int) -> tuple[list[Any], int]:
    """The first items of ``items``: at most ``max_items``, and only while their characters
    (``str(item)``) total at most ``max_chars`` (each item is also cut to ``max_chars``).
    Returns the kept items and how many were dropped."""
    kept: list[Any] = []
    used = 0
    for item in items[:max_items]:
        text = item if isinstance(item, str) else str(item)
        if kept and used + len(text) > max_chars:
            break
        if isinstance(item, str) and len(item) > max_chars:
            item, _ = cut_text(item, max_chars)
        kept.append(item)
        used += len(text)
    return kept, len(items) - len(kept)


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def _apply_caps(result: dict[str, Any], caps: Mapping[str, FieldCap],
                scale: float) -> dict[str, Any]:
    """``result`` with every capped field cut (shrinkable ones to ``scale`` of their cap,
    never below the floors); ``cut`` records what went."""
    out = dict(result)
    cut: dict[str, int] = dict(out.get("cut") or {})
    for name, cap in caps.items():
        value = out.get(name)
        if value is None:
            continue
        factor = scale if cap.shrinkable else 1.0
        chars = max(MIN_TEXT_CHARS, int(cap.max_chars * factor)) if factor < 1 else cap.max_chars
        chars = min(chars, cap.max_chars)
        if cap.max_items is not None and isinstance(value, list):
            items = cap.max_items if factor >= 1 else max(MIN_ITEMS, int(cap.max_items * factor))
            kept, dropped = cut_items(value, min(items, cap.max_items), chars)
            if kept != value:
                out[name] = kept
            if dropped:
                cut[name] = cut.get(name, 0) + dropped
        elif isinstance(value, str):
            text, n = cut_text(value, chars)
            if n:
                out[name] = text
                cut[name] = cut.get(name, 0) + n
    if cut:
        out["cut"] = cut
    return out


def bound_results(results: list[dict[str, Any]], limits: Limits, *,
                  overhead_bytes: int = 0) -> Bounded:
    """Bound ``results`` (dicts, best first) by ``limits``.

    1. Every field named in ``limits.fields`` is cut to its hard cap.
    2. If the results (plus ``overhead_bytes``, the rest of the response) exceed
       ``limits.max_response_bytes``, each result gets an equal share of it, and a result
       over its share has its shrinkable fields cut by halves down to the floors.
    3. If they still exceed it, results are dropped from the end.

    The input is not modified. Deterministic: the same input gives the same output.
    """
    bounded = [_apply_caps(r, limits.fields, 1.0) for r in results]
    budget = max(0, limits.max_response_bytes - overhead_bytes)
    sizes = [_size(r) + 1 for r in bounded]
    if bounded and sum(sizes) > budget:
        share = budget // len(bounded)
        shrinkable = [name for name, cap in limits.fields.items() if cap.shrinkable]
        for i, result in enumerate(bounded):
            if sizes[i] <= share:
                continue
            # first guess: shrink the shrinkable fields by the share of them that must go,
            # then halve until it fits (or every field is at its floor)
            movable = sum(_size(result.get(name)) for name in shrinkable if name in result)
            excess = sizes[i] - share
            scale = min(0.5, max(1 / 1024, (movable - excess) / movable)) if movable else 0.5
            while sizes[i] > share and scale >= 1 / 1024:
                result = _apply_caps(results[i], limits.fields, scale)
                sizes[i] = _size(result) + 1
                scale /= 2
            bounded[i] = result
    omitted = 0
    while bounded and sum(sizes) > budget:
        bounded.pop()
        sizes.pop()
        omitted += 1
    return Bounded(
        results=bounded,
        omitted=omitted,
        cut_results=sum(1 for r in bounded if r.get("cut")),
    )


#: The caps of a ``search_git_history`` result (CLI ``history --json`` and the MCP tool).
HISTORY_LIMITS = Limits(
    fields={
        "title": FieldCap(max_chars=1_000),
        "message": FieldCap(max_chars=20_000, shrinkable=True),
        "author": FieldCap(max_chars=1_000),
        "committer": FieldCap(max_chars=1_000),
        "author_raw": FieldCap(max_chars=1_000),
        "committer_raw": FieldCap(max_chars=1_000),
        "repo_path": FieldCap(max_chars=4_096),
        "files_changed": FieldCap(max_chars=64_000, max_items=1_000, shrinkable=True),
        "delta_truncated": FieldCap(max_chars=32_000, shrinkable=True),
        "parents": FieldCap(max_chars=16_000, max_items=100),
        "copies": FieldCap(max_chars=32_000, max_items=20, shrinkable=True),
    },
    max_response_bytes=1_000_000,
)

#: The caps of an architecture-graph ``search`` result.
GRAPH_LIMITS = Limits(
    fields={
        "ref_id": FieldCap(max_chars=1_000),
        "kind": FieldCap(max_chars=200),
        "summary": FieldCap(max_chars=4_000, shrinkable=True),
        "snippet": FieldCap(max_chars=4_000, shrinkable=True),
    },
    max_response_bytes=1_000_000,
)

#: Characters kept of the echoed query and of each warning message.
MAX_ECHO_CHARS = 4_000


def bound_history_response(data: dict[str, Any], limits: Limits = HISTORY_LIMITS) -> dict[str, Any]:
    """A ``GitSearchResponse.to_dict()`` payload within ``limits``: results bounded by
    :func:`bound_results`, the echoed ``query`` and warning messages cut to
    :data:`MAX_ECHO_CHARS`; ``results_omitted`` (int) added; a ``fields_cut`` warning when a
    result lost part of a field, a ``response_truncated`` one when results were dropped."""
    out = dict(data)
    out["query"], _ = cut_text(str(data.get("query", "")), MAX_ECHO_CHARS)
    warnings = [cut_text(str(w), MAX_ECHO_CHARS)[0] for w in data.get("warnings", [])]
    details = [
        {**d, "message": cut_text(str(d.get("message", "")), MAX_ECHO_CHARS)[0]}
        for d in data.get("warning_details", [])
    ]
    rest = {k: v for k, v in out.items() if k != "results"}
    bounded = bound_results(list(data.get("results", [])), limits,
                            overhead_bytes=_size(rest) + 512)
    out["results"] = bounded.results
    out["results_omitted"] = bounded.omitted
    if bounded.cut_results:
        message = (f"{bounded.cut_results} result(s) had long fields cut (each result's "
                   '"cut" says which and by how much)')
        warnings.append(message)
        details.append({"code": "fields_cut", "message": message})
    if bounded.omitted:
        message = (f"{bounded.omitted} lower-ranked result(s) left out to keep the response "
                   f"under {limits.max_response_bytes:,} bytes; ask for fewer results")
        warnings.append(message)
        details.append({"code": "response_truncated", "message": message})
    out["warnings"] = warnings
    out["warning_details"] = details
    return out
