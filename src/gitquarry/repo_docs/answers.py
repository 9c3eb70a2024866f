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
(``gitquarry.tokens``, which bounds the common tokenizers from above); hits are dropped from
the bottom (snippets are already short: at most 800 bytes), ``truncated.results_dropped``
says how many, with a ``token_budget`` warning. No paging: ask again with a higher
``max_tokens`` or a lower ``limit``.
"""

from __future__ import annotations

import time
from typing import Any

from gitquarry.repo_docs.registry import Selector
from gitquarry.repo_docs.service import RepoDocsService
from gitquarry.tokens import fit_prefix, json_tokens

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
    """``response`` with its ``hits`` cut to fit ``max_tokens`` (module docstring)."""
    hits = list(response.get("hits", []))
    rest = {k: v for k, v in response.items() if k != "hits"}
    room = max(0, max_tokens - RESERVE_TOKENS - json_tokens({**rest, "hits": []}))
    kept = fit_prefix([json_tokens(h) + 1 for h in hits], room)
    while True:  # RESERVE_TOKENS covers the notes added below; a last check makes sure
        out = _with_notes(response, hits, kept, max_tokens)
        if kept == 0 or json_tokens(out) <= max_tokens:
            return out
        kept -= 1


def _with_notes(response: dict[str, Any], hits: list[Any], kept: int,
                max_tokens: int) -> dict[str, Any]:
    out = {**response, "hits": hits[:kept], "truncated": {"results_dropped": len(hits) - kept}}
    if kept < len(hits):
        message = (f"{len(hits) - kept} lower-ranked hit(s) left out to fit max_tokens "
                   f"{max_tokens:,}; ask with a higher max_tokens or a lower limit")
        out["warnings"] = [*response.get("warnings", []), message]
        out["warning_details"] = [*response.get("warning_details", []),
                                  {"code": "token_budget", "message": message}]
    return out
