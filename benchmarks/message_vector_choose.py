"""The decision on the message-vector lever (issue 22, session 8), by a rule fixed before any
result of this round was read, over the dev sets together (never one query, never one set).
Inputs are ``eval_message_vector.py`` reports (``--modes semantic,hybrid``), one per dev set.

The rule, for each candidate variant (``third-list``, ``third-list-split``) against
``shipped`` (the document vector alone, as the product ships):

* **allowed**: on every set, hybrid R@10 >= lexical R@10 overall and on every kind; and on
  every set, hybrid keyword and filtered R@10 >= shipped's (on click, both 1.0 today, so
  they must stay 1.0);
* **wins**: on every set, hybrid R@10 and MRR@10 (all queries) >= shipped's, and their sum
  strictly above shipped's;
* the **choice**: the allowed winner with the largest R@10 + MRR@10 summed over the sets;
  ``shipped`` when there is none (the lever is not built);
* **semantic mode**: if a variant is chosen, semantic mode is defined over the two vector
  lists only if that ranking's semantic R@10 and MRR@10 (all queries) are >= shipped
  semantic's on every set; otherwise semantic mode stays the document vector alone.

Usage::

    python benchmarks/message_vector_choose.py NAME=REPORT.json [NAME=REPORT.json ...] \\
        > OUT.json

Prints one JSON object: the rule, every candidate with its per-set figures and verdicts, the
choice and the semantic-mode verdict; a table on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

CANDIDATES = ("third-list", "third-list-split")
CONSTRAINED_KINDS = ("keyword", "filtered")


def _fig(metrics: dict[str, Any], kind: str = "all") -> tuple[float, float]:
    m = metrics[kind]
    return float(m["recall@10"]), float(m["mrr@10"])


def verdict(sets: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """The rule of the module doc for variant ``name`` over ``sets`` (set -> report)."""
    allowed = wins = semantic_ok = True
    total = 0.0
    why: list[str] = []
    per: dict[str, Any] = {}
    for set_name, report in sets.items():
        variant = report["variants"][name]["metrics"]
        base = report["variants"]["shipped"]["metrics"]
        lexical = report["lexical"]["metrics"]
        hyb, base_h = variant["hybrid"], base["hybrid"]
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
        (sr, sm), (bsr, bsm) = _fig(variant["semantic"]), _fig(base["semantic"])
        semantic_ok &= sr >= bsr and sm >= bsm
        per[set_name] = {
            "hybrid": [r, m], "shipped_hybrid": [br, bm],
            "semantic": [sr, sm], "shipped_semantic": [bsr, bsm],
            "kinds": {k: [x["recall@10"], x["mrr@10"]] for k, x in hyb.items() if k != "all"},
            "shipped_kinds": {k: [x["recall@10"], x["mrr@10"]]
                              for k, x in base_h.items() if k != "all"},
            "lexical_kinds": {k: [x["recall@10"], x["mrr@10"]]
                              for k, x in lexical.items() if k != "all"}}
    return {"variant": name, "allowed": allowed, "wins": wins, "sum": round(total, 4),
            "semantic_over_both_lists": semantic_ok, "why_not": why, "sets": per}


def choose(sets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    rows = [verdict(sets, name) for name in CANDIDATES]
    winners = sorted((row for row in rows if row["allowed"] and row["wins"]),
                     key=lambda row: -row["sum"])
    chosen = winners[0] if winners else None
    return {"rule": __doc__.split("\n\n")[1:3],
            "choice": chosen["variant"] if chosen else "shipped",
            "semantic_mode": ("both lists" if chosen and chosen["semantic_over_both_lists"]
                              else "document vector"),
            "variants": rows}


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
        print(f"{row['variant']:18s} allowed={row['allowed']!s:5s} wins={row['wins']!s:5s} "
              f"sum={row['sum']:.4f} " + " ".join(
                  f"{s}:{v['hybrid'][0]}/{v['hybrid'][1]}" for s, v in row["sets"].items()),
              file=sys.stderr)
        for line in row["why_not"]:
            print(f"    {line}", file=sys.stderr)
    print(f"choice: {out['choice']}; semantic mode: {out['semantic_mode']}", file=sys.stderr)
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
