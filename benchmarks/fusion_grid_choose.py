"""The choice among ``eval_fusion_grid.py`` variants, by a rule fixed before reading them
(issue 22 lever 4), over the dev sets together (never one query, never one set):

* **allowed**: on every set, hybrid R@10 >= lexical's on every kind (``holds``), and on the
  set named ``--strict`` (click) keyword and filtered R@10 are 1.0;
* **wins**: on **every** set, R@10 and MRR@10 (all queries) at least the shipped variant's and
  their sum strictly above it;
* the chosen variant: the allowed winner with the largest sum of R@10 + MRR@10 over the sets;
  none when no variant is an allowed winner (the shipped constants stay).

Usage::

    python benchmarks/fusion_grid_choose.py NAME=GRID.json [NAME=GRID.json ...] \\
        [--strict NAME] > OUT.json

Prints one JSON object: every variant with its per-set all-query figures, whether it is
allowed and whether it wins, ordered by the summed score; and the choice.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _fig(variant: dict[str, Any]) -> tuple[float, float]:
    m = variant["metrics"]["all"]
    return float(m["recall@10"]), float(m["mrr@10"])


def choose(sets: dict[str, dict[str, Any]], strict: str | None) -> dict[str, Any]:
    """The rule of the module doc over ``sets`` (name -> an ``eval_fusion_grid`` report)."""
    names = [n for n in next(iter(sets.values()))["variants"] if n != "shipped (again)"]
    rows = []
    for name in names:
        per: dict[str, Any] = {}
        allowed = wins = True
        total = 0.0
        for set_name, report in sets.items():
            v, base = report["variants"][name], report["variants"]["shipped"]
            (r, m), (br, bm) = _fig(v), _fig(base)
            allowed &= bool(v["holds"])
            if set_name == strict:
                allowed &= all(v["metrics"][kind]["recall@10"] == 1.0
                               for kind in ("keyword", "filtered"))
            wins &= r >= br and m >= bm and r + m > br + bm
            total += r + m
            per[set_name] = {"recall@10": r, "mrr@10": m,
                             "kinds": {k: [x["recall@10"], x["mrr@10"]]
                                       for k, x in v["metrics"].items() if k != "all"}}
        rows.append({"variant": name, "allowed": allowed, "wins": wins and name != "shipped",
                     "sum": round(total, 4), "sets": per})
    rows.sort(key=lambda row: -row["sum"])
    winners = [row for row in rows if row["allowed"] and row["wins"]]
    return {"rule": __doc__.split("\n\n")[1], "choice": winners[0]["variant"] if winners
            else "shipped", "variants": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grids", nargs="+", help="NAME=GRID.json")
    parser.add_argument("--strict", default=None,
                        help="the set whose keyword and filtered R@10 must stay 1.0")
    args = parser.parse_args(argv)
    sets = {}
    for item in args.grids:
        name, _, path = item.partition("=")
        sets[name] = json.loads(Path(path).read_text("utf-8"))
    out = choose(sets, args.strict)
    for row in out["variants"]:
        print(f"{row['variant']:52s} allowed={row['allowed']!s:5s} wins={row['wins']!s:5s} "
              f"sum={row['sum']:.4f} " + " ".join(
                  f"{s}:{v['recall@10']}/{v['mrr@10']}" for s, v in row["sets"].items()),
              file=sys.stderr)
    print(f"choice: {out['choice']}", file=sys.stderr)
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
