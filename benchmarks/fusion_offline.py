"""Fusion rules compared offline on dumped rankings (``benchmarks/dump_rankings.py``): each
rule fuses the same lexical and semantic lists per query (top 50 each, as the result pipeline
returned them), and is scored with ``eval_history.py``'s scorer, per kind; a rule "holds" on a
set when its R@10 is at least lexical's on every kind. No model, no index: milliseconds.

Usage::

    python benchmarks/fusion_offline.py DUMP.json [DUMP.json ...]

This approximates the end-to-end hybrid (the pipeline's copy collapsing and merge folding
run once per list here, not on the fused list); the ``shipped`` row beside the dumped
end-to-end hybrid shows how close. Prints one JSON object.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import score_results
from gitquarry.retrieval.fusion import LexicalGuard, guard_lexical, rrf_fuse

SHAPES = {"keyword": (1.0, 0.5), "mixed": (1.0, 1.0), "natural": (1.0, 2.0)}
Rule = Callable[[dict[str, Any]], list[str]]


def _rrf(row: dict[str, Any], k: int = 20, shapes: dict[str, tuple[float, float]] = SHAPES
         ) -> list[tuple[str, float]]:
    return rrf_fuse([row["lexical"], row["semantic"]], list(shapes[row["shape"]]), k=k)


def shipped(row: dict[str, Any]) -> list[str]:
    return [h for h, _ in _rrf(row)]


def guard(keep: int, slot: int, blind: int = 0) -> Rule:
    def rule(row: dict[str, Any]) -> list[str]:
        fused = guard_lexical(_rrf(row), row["lexical"], row["semantic"],
                              LexicalGuard(keep, slot, blind))
        return [h for h, _ in fused]
    return rule


def weights(shapes: dict[str, tuple[float, float]], k: int = 20) -> Rule:
    def rule(row: dict[str, Any]) -> list[str]:
        return [h for h, _ in _rrf(row, k, shapes)]
    return rule


RULES: dict[str, Rule] = {
    "lexical": lambda row: row["lexical"],
    "semantic": lambda row: row["semantic"],
    "end-to-end hybrid (dumped)": lambda row: row["hybrid"],
    "shipped (rrf k=20, shapes)": shipped,
    "guard top1 slot2": guard(1, 2),
    "guard top3 slot2": guard(3, 2),
    "guard top5 slot2": guard(5, 2),
    "guard top5 slot2 blind50": guard(5, 2, 50),
    "guard top3 slot3": guard(3, 3),
    "equal weights, k=20": weights({s: (1.0, 1.0) for s in SHAPES}),
    "shapes, prose 1/1.5": weights({**SHAPES, "natural": (1.0, 1.5)}),
    "shapes, k=60": weights(SHAPES, 60),
}


def score(rows: list[dict[str, Any]], rule: Rule, k: int = 10) -> dict[str, dict[str, float]]:
    per: dict[str, list[tuple[int | None, float]]] = {}
    for row in rows:
        rank, recall = score_results(rule(row)[:k], row["relevant"])
        for kind in ("all", row["kind"] or "other"):
            per.setdefault(kind, []).append((rank, recall))
    return {kind: {"n": len(v), "recall@10": round(sum(r for _, r in v) / len(v), 4),
                   "mrr@10": round(sum(1 / x for x, _ in v if x) / len(v), 4)}
            for kind, v in per.items()}


def main(argv: list[str]) -> int:
    report: dict[str, Any] = {}
    for path in argv:
        rows = json.loads(Path(path).read_text("utf-8"))["rows"]
        sets = {name: score(rows, rule) for name, rule in RULES.items()}
        lexical = dict(sets["lexical"])
        for metrics in sets.values():
            metrics["holds"] = all(  # type: ignore[assignment]
                metrics[kind]["recall@10"] >= lexical[kind]["recall@10"] for kind in lexical)
        report[path] = sets
        for name, m in sets.items():
            print(f"{Path(path).stem:12s} {name:30s} holds={m['holds']!s:5s} " + " ".join(
                f"{kind}:{v['recall@10']}/{v['mrr@10']}" for kind, v in m.items()
                if kind != "holds"), file=sys.stderr)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
