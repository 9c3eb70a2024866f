"""Why hybrid drops lexical hits, and which lexical-protect rule is free (issue 22, "hybrid is
never below lexical alone"): offline, on rankings dumped by ``benchmarks/dump_rankings.py``
(lexical and semantic top 50 with their scores, and the end-to-end hybrid top 10, per query).

Two parts, one JSON object on stdout:

* ``precision``: on prose ("natural") questions, how often an item is the answer, by where it
  stands: fused ranks 6-10 and 8-10 (the slots a protected hit would take), lexical top-5 hits
  the vectors do not rank (not in semantic's top 50), lexical top-5 hits holding every query
  word (lexical score >= 0.5).
* ``rules``: R@10 / MRR@10 per kind for each protect rule, with ``holds`` (R@10 >= lexical on
  every kind) and the questions whose recall changes against plain RRF. A protected hit that
  is not in the fused top 10 takes a place at the bottom of the top 10
  (``retrieval.fusion.floor_lexical``).

Usage::

    python benchmarks/eval_fusion_floor.py DUMP.json [DUMP.json ...] > OUT.json

Offline approximation: the result pipeline ran on each list, not on the fused one, and
introduction questions are not re-ordered here; the end-to-end row shows the gap.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import _matches, score_results
from fusion_offline import score  # R@10 / MRR@10 per kind of one rule
from gitquarry.retrieval.fusion import floor_lexical, rrf_fuse

SHAPES = {"keyword": (1.0, 0.5), "mixed": (1.0, 1.0), "natural": (1.0, 2.0)}
BLIND = 50  # the dump's depth: "not in semantic's top 50"
Row = dict[str, Any]
Rule = Callable[[Row], list[str]]


def fused(row: Row) -> list[tuple[str, float]]:
    return rrf_fuse([row["lexical"], row["semantic"]], list(SHAPES[row["shape"]]), k=20)


def protect(keep: int, every_word: bool, blind_only: bool) -> Rule:
    """Lexical top-``keep`` hits (holding every word, and/or unseen by the vectors) kept in
    the fused top 10."""
    def rule(row: Row) -> list[str]:
        seen = set(row["semantic"][:BLIND])
        chosen = [h for h, s in zip(row["lexical"][:keep], row["lexical_scores"], strict=False)
                  if (not every_word or s >= 0.5) and (not blind_only or h not in seen)]
        return [h for h, _ in floor_lexical(fused(row), chosen, 10)]
    return rule


RULES: dict[str, Rule] = {
    "lexical": lambda row: row["lexical"],
    "end-to-end hybrid (dumped, shipped before s4)": lambda row: row["hybrid"],
    "plain RRF (k=20, shapes)": lambda row: [h for h, _ in fused(row)],
}
def protect_seen(keep: int, depth: int) -> Rule:
    """Lexical top-``keep`` hits that the vectors rank in their top ``depth`` (both rankers
    agree) kept in the fused top 10."""
    def rule(row: Row) -> list[str]:
        seen = set(row["semantic"][:depth])
        chosen = [h for h in row["lexical"][:keep] if h in seen]
        return [h for h, _ in floor_lexical(fused(row), chosen, 10)]
    return rule


for _m in (1, 3, 5, 10):
    RULES[f"top {_m}, vector-blind"] = protect(_m, False, True)
    RULES[f"top {_m}, every word"] = protect(_m, True, False)
    RULES[f"top {_m}, every word, vector-blind"] = protect(_m, True, True)
for _m in (3, 5, 10):
    for _d in (20, 30, 50):
        RULES[f"top {_m}, seen in semantic top {_d}"] = protect_seen(_m, _d)


def _relevant(row: Row) -> Callable[[str], bool]:
    return lambda h: any(_matches(h, r) for r in row["relevant"])


def precision(rows: list[Row]) -> dict[str, dict[str, float]]:
    tally: dict[str, list[int]] = {}

    def add(key: str, hit: bool) -> None:
        t = tally.setdefault(key, [0, 0])
        t[0] += 1
        t[1] += int(hit)

    for row in rows:
        if row["shape"] != "natural":
            continue
        rel, seen = _relevant(row), set(row["semantic"][:BLIND])
        top = [h for h, _ in fused(row)][:10]
        for n, h in enumerate(top, start=1):
            if n >= 6:
                add("fused ranks 6-10", rel(h))
            if n >= 8:
                add("fused ranks 8-10", rel(h))
        for h, s in zip(row["lexical"][:5], row["lexical_scores"], strict=False):
            if h not in seen:
                add("lexical top 5, vector-blind", rel(h))
                if h not in top:
                    add("lexical top 5, vector-blind, not in fused top 10", rel(h))
            if s >= 0.5:
                add("lexical top 5, every word", rel(h))
    return {k: {"n": n, "relevant": r, "precision": round(r / n, 4)}
            for k, (n, r) in tally.items()}


def main(argv: list[str]) -> int:
    report: dict[str, Any] = {}
    for path in argv:
        rows = json.loads(Path(path).read_text("utf-8"))["rows"]
        base = [score_results([h for h, _ in fused(r)][:10], r["relevant"])[1] for r in rows]
        lexical = score(rows, RULES["lexical"])
        rules: dict[str, Any] = {}
        for name, rule in RULES.items():
            metrics = score(rows, rule)
            changed = []
            for n, row in enumerate(rows):
                recall = score_results(rule(row)[:10], row["relevant"])[1]
                if recall != base[n]:
                    changed.append(f"{n}{'+' if recall > base[n] else '-'}")
            rules[name] = {"holds": all(metrics[k]["recall@10"] >= lexical[k]["recall@10"]
                                        for k in lexical),
                           "changed_vs_plain_rrf": changed, **metrics}
            print(f"{Path(path).stem:14s} {name:46s} holds={rules[name]['holds']!s:5s} "
                  + " ".join(f"{k}:{v['recall@10']}/{v['mrr@10']}" for k, v in metrics.items())
                  + " " + " ".join(changed), file=sys.stderr)
        report[path] = {"precision": precision(rows), "rules": rules}
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
