"""Detail levels and token budgets for commit-history answers.

``detail``:

- ``full``: every field of the seed's ``CommitResult`` (as without a budget);
- ``compact``: ``hash``, ``date`` (committer day, ``YYYY-MM-DD`` UTC), ``author`` (name
  only), ``title``, ``files`` (at most ``COMPACT_FILES``; ``files_total`` counts them all),
  ``score`` (4 decimals), ``excerpt`` (±3 lines of the diff around its best-matching changed
  line under a ``path:LINE`` line, ``history.hunks.excerpt``), ``refs``/``refs_total`` when
  computed (at most two refs that are not tags and the first tag:
  ``history.refs_contain``), ``repo_path`` when the results come from several repositories
  (``index_state`` names the one otherwise);
- ``ids``: ``hash`` and ``score`` (and ``repo_path`` when results come from several
  repositories).

``max_tokens`` (estimated with ``gitquarry.token_budget``, which bounds the real counts of the
common tokenizers from above): the whole serialized response must fit. When it would not:

1. (``full``) each diff is cut to its best-matching hunks (``history.hunks.best_hunks_diff``)
   — the diffs share what the other fields leave, small diffs keep all they have — and, only
   if a result's other fields alone exceed its share, its message is cut too;
2. results are dropped from the bottom (lowest score first) until it fits.

``truncated`` says what happened: ``results_dropped``, ``deltas_cut`` (results whose diff
lost hunks), ``messages_cut``. The caller turns dropped results into a ``next_cursor``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gitquarry.bounded import cut_text
from gitquarry.history.search.hunks import best_hunks_diff, excerpt
from gitquarry.token_budget import estimate_tokens, fit_prefix, json_tokens

COMPACT_FILES = 10
#: tokens kept back for ``next_cursor`` and ``truncated``, added after fitting
RESERVE_TOKENS = 110
#: a diff is never cut below this many tokens while results are kept (its best hunk)
MIN_DELTA_TOKENS = 120
MIN_MESSAGE_TOKENS = 60


@dataclass
class Truncation:
    results_dropped: int = 0
    deltas_cut: int = 0
    messages_cut: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"results_dropped": self.results_dropped, "deltas_cut": self.deltas_cut,
                "messages_cut": self.messages_cut}


def _date(ts: Any) -> str:
    try:
        return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%d")
    except (TypeError, ValueError, OverflowError, OSError):
        return ""


def compact_result(r: dict[str, Any], query: str) -> dict[str, Any]:
    """The ``compact`` form of a full result dict."""
    files = list(r.get("files_changed") or [])
    out: dict[str, Any] = {
        "hash": r.get("hash"),
        "date": _date(r.get("timestamp")),
        "author": str(r.get("author", "")).split(" <")[0],
        "title": r.get("title"),
        "files": [cut_text(str(f), 200)[0] for f in files[:COMPACT_FILES]],
        "files_total": len(files),
        "score": round(float(r["score"]), 4) if r.get("score") is not None else None,
        "excerpt": excerpt(str(r.get("delta_truncated") or ""), query),
    }
    for key in ("refs", "refs_total", "repo_path", "lexical_rank", "semantic_rank", "bm25",
                "similarity"):
        if key in r:
            out[key] = r[key]
    return out


def ids_result(r: dict[str, Any], with_repo: bool) -> dict[str, Any]:
    out = {"hash": r.get("hash"), "score": r.get("score")}
    if with_repo:
        out["repo_path"] = r.get("repo_path")
    return out


def apply_detail(results: list[dict[str, Any]], detail: str, query: str) -> list[dict[str, Any]]:
    """``results`` (full dicts) in the ``detail`` form."""
    if detail == "compact":
        several = len({r.get("repo_path") for r in results}) > 1
        out = [compact_result(r, query) for r in results]
        if not several:
            for r in out:
                r.pop("repo_path", None)
        return out
    if detail == "ids":
        repos = {r.get("repo_path") for r in results}
        return [ids_result(r, len(repos) > 1) for r in results]
    return results


def _share(costs: list[int], room: int) -> int:
    """The largest per-item cap c with sum(min(cost, c)) <= room (water-filling)."""
    lo, hi = 0, max(costs, default=0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(c, mid) for c in costs) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _jt(text: str) -> int:
    """Estimated tokens of ``text`` as a JSON string (escapes included)."""
    return estimate_tokens(json.dumps(text, ensure_ascii=False))


def _cut_to_tokens(text: str, tokens: int, cut: Any) -> str:
    """``cut(text, max_chars)`` with max_chars chosen so the result is about ``tokens``."""
    have = _jt(text)
    if have <= tokens:
        return text
    chars = max(1, int(len(text) * tokens / have * 0.92))
    for _ in range(8):
        out = cut(text, chars)
        if _jt(out) <= tokens or chars <= 1:
            return str(out)
        chars = int(chars * 0.8)
    return str(cut(text, 1))


def _fit_full(results: list[dict[str, Any]], room: int, query: str,
              t: Truncation) -> list[dict[str, Any]] | None:
    """``results`` with diffs (then messages) cut to fit ``room`` tokens, or None."""
    fixed = [json_tokens({**r, "delta_truncated": ""}) + 1 for r in results]
    deltas = [_jt(str(r.get("delta_truncated") or "")) for r in results]
    if sum(fixed) + sum(min(d, MIN_DELTA_TOKENS) for d in deltas) > room:
        # the other fields alone are too big: cut messages to a fair share first
        costs = [_jt(str(r.get("message") or "")) for r in results]
        msg_room = room - sum(fixed) + sum(costs)
        msg_room -= sum(min(d, MIN_DELTA_TOKENS) for d in deltas)
        cap = _share(costs, max(0, msg_room))
        if cap < MIN_MESSAGE_TOKENS:
            return None
        new = []
        for r, c in zip(results, costs, strict=True):
            if c > cap:
                r = {**r, "message": _cut_to_tokens(
                    str(r["message"]), cap, lambda s, n: cut_text(s, n)[0])}
                t.messages_cut += 1
            new.append(r)
        results = new
        fixed = [json_tokens({**r, "delta_truncated": ""}) + 1 for r in results]
    delta_room = room - sum(fixed)
    if delta_room < 0:
        return None
    cap = _share(deltas, delta_room)
    out = []
    for r, d in zip(results, deltas, strict=True):
        if d > cap:
            text = str(r.get("delta_truncated") or "")
            r = {**r, "delta_truncated": _cut_to_tokens(
                text, cap, lambda s, n: best_hunks_diff(s, query, n)[0])}
        out.append(r)
    return out


def fit_results(results: list[dict[str, Any]], room: int, detail: str,
                query: str) -> tuple[list[dict[str, Any]], Truncation]:
    """The longest prefix of ``results`` (in ``detail`` form) that fits ``room`` tokens,
    diffs cut first (see the module docstring)."""
    t = Truncation()
    costs = [json_tokens(r) + 1 for r in results]
    if sum(costs) <= room:
        return results, t
    if detail == "full":
        for k in range(len(results), 0, -1):
            trial = Truncation()
            fitted = _fit_full(results[:k], room, query, trial)
            if fitted is not None and sum(json_tokens(r) + 1 for r in fitted) <= room:
                trial.results_dropped = len(results) - k
                trial.deltas_cut = sum(
                    1 for a, b in zip(results, fitted, strict=False)
                    if a.get("delta_truncated") != b.get("delta_truncated"))
                return fitted, trial
        t.results_dropped = len(results)
        return [], t
    k = fit_prefix(costs, room)
    t.results_dropped = len(results) - k
    return results[:k], t


def fit_response(data: dict[str, Any], max_tokens: int, detail: str,
                 query: str) -> tuple[dict[str, Any], Truncation]:
    """``data`` (a response with ``results`` in ``detail`` form) within ``max_tokens``
    (less ``RESERVE_TOKENS`` for the cursor and the ``truncated`` note the caller adds)."""
    rest = {k: v for k, v in data.items() if k != "results"}
    room = max_tokens - RESERVE_TOKENS - json_tokens({**rest, "results": []})
    results, t = fit_results(list(data.get("results", [])), max(0, room), detail, query)
    return {**data, "results": results}, t
