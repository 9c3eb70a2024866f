"""What issue 12 adds to ``repository_docs_search`` answers: ``index_state`` (how fresh the
answer is) and a ``max_tokens`` budget, as the commit-history tools have.

``index_state`` (cheap: one revision resolution and one read of the cache's set rows, the
same as ``repository_docs_status``):

- ``checked_at`` (Unix seconds), ``head_revision`` (the registered source's HEAD now) and
  ``answered_revision`` (the commit the hits cite), ``answered_is_head``;
- ``revision_set_state``: the coverage of the vectors the answer used (``ready``,
  ``partial``, ``none`` when full text was computed from Git on the spot) and
  ``embedded_fraction`` (embedded / eligible chunks);
- ``revision_set_updated_at`` / ``revision_set_completed_at`` (Unix seconds) of that set,
  and ``head_set_state``: whether a revision set for HEAD exists (its coverage state, or
  ``none``), so a client knows a semantic answer for HEAD is not available yet.

Budget: the whole serialised response within ``max_tokens`` estimated tokens
(``gitquarry.token_budget``, which bounds the common tokenizers from above); hits are dropped from
the bottom (snippets are already short: at most 800 bytes), ``truncated.results_dropped``
says how many, with a ``token_budget`` warning. No paging: ask again with a higher
``max_tokens`` or a lower ``limit``. ``repository_docs_plan`` takes the same budget: its
``files``/``exclusions`` lists are cut (``fit_plan``), its counts never.
"""

from __future__ import annotations

import time
from typing import Any

from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Selector
from gitquarry.token_budget import fit_prefix, json_tokens

#: tokens kept for ``truncated`` and the budget warning, added after fitting
RESERVE_TOKENS = 90


def index_state(service: RepoDocsService, selector: Selector,
                response: dict[str, Any]) -> dict[str, Any]:
    """The ``index_state`` of a ``RepoDocsService.search`` response (module docstring)."""
    status = service.status(selector)
    coverage = response.get("coverage") or {}
    eligible = int(coverage.get("eligible_chunks") or 0)
    embedded = int(coverage.get("embedded_chunks") or 0)
    used = next((s for s in status.get("revision_sets", [])
                 if s.get("revision_set_id") == response.get("revision_set_id")
                 and response.get("revision_set_id") is not None), None)
    head_set = status.get("head_set")
    answered = response.get("effective_revision")
    return {
        "checked_at": int(time.time()),
        "head_revision": status.get("head_revision"),
        "answered_revision": answered,
        "answered_is_head": answered == status.get("head_revision"),
        "revision_set_state": coverage.get("state", "none"),
        "embedded_fraction": round(embedded / eligible, 4) if eligible else 0.0,
        "revision_set_updated_at": used.get("updated_at") if used else None,
        "revision_set_completed_at": used.get("completed_at") if used else None,
        "head_set_state": (head_set.get("coverage") or {}).get("state", "none")
        if head_set else "none",
    }


def fit_hits(response: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """``response`` with its ``hits`` cut to fit ``max_tokens`` (module docstring):
    ``truncated.results_dropped``."""
    return fit_lists(response, {"hits": "results_dropped"}, max_tokens,
                     advice="ask with a higher max_tokens or a lower limit",
                     what="lower-ranked hit(s)")


def fit_plan(response: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """A ``repository_docs_plan`` response within ``max_tokens``: its ``files`` and
    ``exclusions`` lists (present with ``list_files``) keep their first entries (path order)
    and the room is shared between them; the counts (``eligible_files``,
    ``exclusions_by_reason``, ...) stay whole. ``truncated.files_dropped`` /
    ``exclusions_dropped`` say how many entries were left out, with a ``token_budget``
    warning."""
    return fit_lists(response, {"files": "files_dropped", "exclusions": "exclusions_dropped"},
                     max_tokens, advice="ask with a higher max_tokens, or without list_files "
                     "for the counts only", what="file and exclusion entries")


def _shares(needs: list[int], room: int) -> list[int]:
    """Split ``room`` between lists needing ``needs`` tokens: equal shares, a list needing
    less than its share gets its need and the rest is shared by the others."""
    shares = [0] * len(needs)
    open_ = [i for i, need in enumerate(needs) if need > 0]
    while open_ and room > 0:
        share = room // len(open_)
        small = [i for i in open_ if needs[i] <= share]
        if not small:
            for i in open_:
                shares[i] = share
            break
        for i in small:
            shares[i] = needs[i]
            room -= needs[i]
        open_ = [i for i in open_ if i not in small]
    return shares


def fit_lists(response: dict[str, Any], lists: dict[str, str], max_tokens: int, *,
              advice: str, what: str) -> dict[str, Any]:
    """``response`` within ``max_tokens``: each list named in ``lists`` (key -> its
    ``truncated`` field) keeps a prefix, the room shared between them (``_shares``); every
    other field whole. ``truncated`` counts what each list left out; when anything was,
    a ``token_budget`` warning names ``what`` and the ``advice``."""
    present = [k for k in lists if isinstance(response.get(k), list)]
    items = {k: list(response[k]) for k in present}
    rest = {k: v for k, v in response.items() if k not in present}
    room = max(0, max_tokens - RESERVE_TOKENS
               - json_tokens({**rest, **{k: [] for k in present}}))
    costs = {k: [json_tokens(x) + 1 for x in items[k]] for k in present}
    shares = _shares([sum(costs[k]) for k in present], room)
    kept = {k: fit_prefix(costs[k], share) for k, share in zip(present, shares, strict=True)}
    while True:  # RESERVE_TOKENS covers the notes added below; a last check makes sure
        out = _with_notes(response, lists, items, kept, max_tokens, advice, what)
        if not any(kept.values()) or json_tokens(out) <= max_tokens:
            return out
        longest = max(kept, key=lambda k: kept[k])
        kept[longest] -= 1


def _with_notes(response: dict[str, Any], lists: dict[str, str], items: dict[str, list[Any]],
                kept: dict[str, int], max_tokens: int, advice: str,
                what: str) -> dict[str, Any]:
    out = {**response, **{k: items[k][:n] for k, n in kept.items()}}
    dropped = {field: len(items[k]) - kept[k] if k in kept else 0 for k, field in lists.items()}
    out["truncated"] = dropped
    if any(dropped.values()):
        message = (f"{sum(dropped.values())} {what} left out to fit max_tokens "
                   f"{max_tokens:,}; {advice}")
        out["warnings"] = [*response.get("warnings", []), message]
        out["warning_details"] = [*response.get("warning_details", []),
                                  {"code": "token_budget", "message": message}]
    return out
