"""Tokens per answer for realistic agent questions (issue 12), before and after.

For each question of a judged set (``benchmarks/agent/click_questions.json``: question,
the tool arguments an agent would pass, the commit that answers it) the same search is
answered four ways, each serialised exactly as the MCP tool sends it (compact JSON,
``ensure_ascii=False``):

* ``seed``: the response before issue 12 (``GitSearchResponse.to_dict()`` bounded by
  ``bound_history_response``, plus the ``filters`` echo): every field, no token budget;
* ``full``: ``search_git_history`` now, with its defaults (``detail=full``, ``max_tokens``
  8,000): refs, ``index_state``, diffs cut to their best hunks to fit;
* ``compact``: ``detail=compact`` within the same 8,000-token default;
* ``compact_unbudgeted``: ``detail=compact`` without a budget (the detail level alone).

Tokens are counted with gitquarry's estimate and, with ``--tokenizers DIR``, with the real
Claude, cl100k_base and o200k_base tokenizers (see ``bench_token_estimate.py`` for DIR).
For each answer the rank of the judged commit is recorded (``rank``; ``rank_or_merge`` also
accepts the merge commit that brought it into main). Prints JSON.

Usage::

    python benchmarks/agent/build_repo.py /work/.mirror/pallets+click/repo /tmp/agentws
    gitquarry index /tmp/agentws
    python benchmarks/bench_agent_tokens.py /tmp/agentws --tokenizers DIR
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from gitquarry.bounded import bound_history_response
from gitquarry.history.answers.answers import MCP_DEFAULT_MAX_TOKENS, AnswerOptions, HistoryAnswers
from gitquarry.history.search.narrow import Narrowing
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval.filters import interpret_time
from gitquarry.token_budget import estimate_tokens
from gitquarry.workspace import resolve_workspace

sys.path.insert(0, str(Path(__file__).parent))
from bench_token_estimate import encodings

VARIANTS = ("seed", "full", "compact", "compact_unbudgeted")
DEFAULT_QUESTIONS = Path(__file__).parent / "agent" / "click_questions.json"


def _filters(args: dict[str, Any]) -> tuple[dict[str, Any], Narrowing]:
    bounds = {name: interpret_time(args[name], end_of_day=name == "before").seconds
              for name in ("after", "before") if name in args}
    narrowing = Narrowing(author=args.get("author"), committer=args.get("committer"),
                          path=args.get("path"), pickaxe=args.get("pickaxe"))
    return {"files_glob": args.get("files_glob"), "after": bounds.get("after"),
            "before": bounds.get("before")}, narrowing


def answer(answers: HistoryAnswers, variant: str, question: str, args: dict[str, Any],
           top_n: int, mode: str | None) -> dict[str, Any]:
    """The payload the MCP tool sends for ``variant`` (see the module docstring)."""
    where, narrowing = _filters(args)
    if variant == "seed":
        response = answers.searcher.search(question, top_n=top_n, mode=mode,
                                           narrowing=narrowing, **where)
        data = bound_history_response(response.to_dict())
    else:
        detail = "full" if variant == "full" else "compact"
        budget = None if variant == "compact_unbudgeted" else MCP_DEFAULT_MAX_TOKENS
        data = answers.search(question, top_n=top_n, mode=mode, narrowing=narrowing,
                              options=AnswerOptions(detail=detail, max_tokens=budget),
                              **where)
    data["filters"] = {"files_glob": args.get("files_glob"),
                       **{k: v for k, v in args.items() if k != "files_glob"}}
    return data


def _rank(hashes: list[str], wanted: set[str]) -> int | None:
    return next((i for i, h in enumerate(hashes, 1) if h in wanted), None)


def _stats(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"median": round(statistics.median(values), 1),
            "mean": round(statistics.fmean(values), 1),
            "min": round(values[0], 1), "max": round(values[-1], 1),
            "total": round(sum(values), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    ap.add_argument("--tokenizers", type=Path, help="folder of bench_token_estimate.py")
    ap.add_argument("--top-n", type=int, default=5, help="the MCP tool's default: 5")
    ap.add_argument("--mode", help="default: the workspace's (hybrid)")
    args = ap.parse_args()
    qset = json.loads(args.questions.read_text())
    counters: dict[str, Any] = {"estimate": estimate_tokens}
    if args.tokenizers:
        for name, enc in encodings(args.tokenizers).items():
            counters[name] = lambda text, enc=enc: len(enc.encode(text,  # type: ignore
                                                                  disallowed_special=()))
    searcher = HistorySearcher(resolve_workspace(args.workspace, for_search=True))
    answers = HistoryAnswers(searcher)
    rows = []
    started = time.perf_counter()
    try:
        for q in qset["questions"]:
            strict = {q["commit"]}
            loose = strict | set(q.get("also_accepted", []))
            row: dict[str, Any] = {"id": q["id"], "question": q["question"]}
            for variant in VARIANTS:
                data = answer(answers, variant, q["question"], q.get("args", {}),
                              args.top_n, args.mode)
                text = json.dumps(data, ensure_ascii=False)
                hashes = [r["hash"] for r in data.get("results", [])]
                row[variant] = {
                    "tokens": {name: count(text) for name, count in counters.items()},
                    "bytes": len(text.encode()), "results": len(hashes),
                    "rank": _rank(hashes, strict), "rank_or_merge": _rank(hashes, loose),
                    "truncated": data.get("truncated"), "mode": data.get("effective_mode"),
                    "hashes": [h[:12] for h in hashes],
                }
            rows.append(row)
    finally:
        answers.close()
        searcher.close()
    seconds = time.perf_counter() - started
    summary: dict[str, Any] = {}
    for name in counters:
        per = {v: [r[v]["tokens"][name] for r in rows] for v in VARIANTS}
        ratios = [s / c for s, c in zip(per["seed"], per["compact"], strict=True)]
        summary[name] = {
            **{f"{v}_tokens": _stats(per[v]) for v in VARIANTS},
            "seed_over_compact_ratio": {**_stats(ratios),
                                        "of_totals": round(sum(per["seed"])
                                                           / sum(per["compact"]), 2)},
            "seed_over_full_ratio_of_totals": round(sum(per["seed"]) / sum(per["full"]), 2),
        }
    found = {v: {"rank_found": sum(r[v]["rank"] is not None for r in rows),
                 "rank_or_merge_found": sum(r[v]["rank_or_merge"] is not None for r in rows),
                 "rank1": sum(r[v]["rank"] == 1 for r in rows)} for v in VARIANTS}
    same_ranking = sum(
        r["compact"]["hashes"] == r["seed"]["hashes"][:len(r["compact"]["hashes"])]
        for r in rows)
    print(json.dumps({
        "repository": qset["repository"], "branches": qset["branches"],
        "questions": len(rows), "top_n": args.top_n,
        "max_tokens": MCP_DEFAULT_MAX_TOKENS,
        "mode": rows[0]["compact"]["mode"] if rows else None,
        "summary": summary, "right_commit_in_results": found,
        "compact_ranking_is_a_prefix_of_seed": same_ranking,
        "compact_lost_the_right_commit": [r["id"] for r in rows
                                          if r["seed"]["rank"] is not None
                                          and r["compact"]["rank"] is None],
        "seconds": round(seconds, 1), "load": [round(x, 2) for x in os.getloadavg()],
        "per_question": rows,
    }, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
