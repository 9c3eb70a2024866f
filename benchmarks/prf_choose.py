"""The decision on pseudo-relevance feedback from the vector side into the lexical side
(issue 22, session 8, s8-prf), by a rule fixed before any result of this round was read,
over the dev sets together (never one query, never one set). Inputs are ``eval_prf.py``
reports, one per dev set (click, flask dev); the held-out set is never an input.

The grid (``eval_prf.GRID``, fixed in advance, 12 variants; no per-query tuning):
``rm3-*`` (a: RM3-style term feedback from the top m semantic or first-pass hybrid hits,
t terms, a third RRF list of weight w), ``rm3-prose-*`` (b: the same, only for queries of
the ``natural`` shape), ``files-*`` (c: commits touching the files most touched by the top
m semantic hits as a third list).

The rule, for each variant against ``shipped`` (the engine as it ships, same run):

* **allowed**: on every set, hybrid R@10 >= lexical R@10 overall and on every kind; and on
  every set, hybrid keyword and filtered R@10 >= shipped's (on click, both 1.0 today, so
  they must stay 1.0);
* **wins**: on every set, hybrid R@10 and MRR@10 (all queries) >= shipped's, and their sum
  strictly above shipped's;
* the **choice**: the allowed winner with the largest R@10 + MRR@10 summed over the sets
  (ties: the earlier variant of the grid, the simpler one); ``shipped`` when there is none
  (the lever is not built);
* the harness check ``empty`` (the third list empty) must equal ``shipped`` rank for rank on
  every set, or no verdict is given.

Usage::

    python benchmarks/prf_choose.py NAME=REPORT.json [NAME=REPORT.json ...] > OUT.json

Prints one JSON object: the rule, every variant with its per-set figures and verdicts and
the choice; a table on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

CONSTRAINED_KINDS = ("keyword", "filtered")


def _fig(metrics: dict[str, Any], kind: str = "all") -> tuple[float, float]:
    m = metrics[kind]
    return float(m["recall@10"]), float(m["mrr@10"])


def verdict(sets: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """The rule of the module doc for variant ``name`` over ``sets`` (set -> report)."""
    allowed = wins = True
    total = 0.0
    why: list[str] = []
    per: dict[str, Any] = {}
    for set_name, report in sets.items():
        hyb = report["variants"][name]["metrics"]["hybrid"]
        base_h = report["variants"]["shipped"]["metrics"]["hybrid"]
        lexical = report["lexical"]["metrics"]
        for kind, lex in lexical.items():
            if kind in hyb and hyb[kind]["recall@10"] < lex["recall@10"]:
                allowed = False
                why.append(f"{set_name} {kind}: hybrid R@10 {hyb[kind]['recall@10']} < "
                           f"lexical {lex['recall@10']}")
        for kind in CONSTRAINED_KINDS:
            if kind in hyb and hyb[kind]["recall@10"] < base_h[kind]["recall@10"]:
                allowed = False
                why.append(f"{set_name} {kind}: hybrid R@10 {hyb[kind]['recall@10']} < "
                           f"shipped {base_h[kind]['recall@10']}")
        (r, m), (br, bm) = _fig(hyb), _fig(base_h)
        if not (r >= br and m >= bm and r + m > br + bm):
            wins = False
            why.append(f"{set_name}: hybrid {r}/{m} against shipped {br}/{bm}")
        total += r + m
        per[set_name] = {
            "hybrid": [r, m], "shipped_hybrid": [br, bm],
            "kinds": {k: [x["recall@10"], x["mrr@10"]] for k, x in hyb.items() if k != "all"},
            "shipped_kinds": {k: [x["recall@10"], x["mrr@10"]]
                              for k, x in base_h.items() if k != "all"},
            "lexical_kinds": {k: [x["recall@10"], x["mrr@10"]]
                              for k, x in lexical.items() if k != "all"}}
    return {"variant": name, "allowed": allowed, "wins": wins, "sum": round(total, 4),
            "why_not": why, "sets": per}


def harness_ok(sets: dict[str, dict[str, Any]]) -> bool:
    """The ``empty`` variant ranks exactly as ``shipped`` on every set."""
    return all(r["variants"]["empty"]["ranks"] == r["variants"]["shipped"]["ranks"]
               for r in sets.values())


def choose(sets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    first = next(iter(sets.values()))
    names = [n for n in first["variants"] if n not in ("shipped", "empty")]
    ok = harness_ok(sets)
    rows = [verdict(sets, name) for name in names]
    winners = [row for row in rows if row["allowed"] and row["wins"]]
    # stable sort: ties keep grid order
    winners.sort(key=lambda row: -row["sum"])
    chosen = winners[0] if winners and ok else None
    return {"rule": __doc__.split("\n\n")[2:5], "harness_ok": ok,
            "choice": chosen["variant"] if chosen else "shipped", "variants": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+", help="NAME=REPORT.json")
    args = parser.parse_args(argv)
    sets = {}
    for item in args.reports:
        name, _, path = item.partition("=")
        sets[name] = json.loads(Path(path).read_text("utf-8"))
    out = choose(sets)
    for row in out["variants"]:
        print(f"{row['variant']:24s} allowed={row['allowed']!s:5s} wins={row['wins']!s:5s} "
              f"sum={row['sum']:.4f} " + " ".join(
                  f"{s}:{v['hybrid'][0]}/{v['hybrid'][1]}" for s, v in row["sets"].items()),
              file=sys.stderr)
        for line in row["why_not"]:
            print(f"    {line}", file=sys.stderr)
    print(f"harness ok: {out['harness_ok']}; choice: {out['choice']}", file=sys.stderr)
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
