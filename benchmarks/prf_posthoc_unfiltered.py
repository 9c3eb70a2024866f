"""A post-hoc reading of the ``eval_prf.py`` reports, NOT a decision (the rule of
``prf_choose.py`` was fixed first and chose ``shipped``): each variant as if the feedback
were off for every query that carries a filter (files glob, after or before), i.e. with
shipped's rank and recall for those queries. On these sets exactly the ``filtered`` kind
carries filters. A hypothesis for a later round, which must fix its own rule first and be
judged on questions none of these runs has seen.

Usage::

    python benchmarks/prf_posthoc_unfiltered.py NAME=REPORT.json:QUERIES.jsonl ... > OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    out: dict[str, Any] = {"note": __doc__.split("\n\n")[0], "variants": {}}
    for item in argv:
        name, _, paths = item.partition("=")
        report_path, _, queries_path = paths.partition(":")
        report = json.loads(Path(report_path).read_text("utf-8"))
        queries = [json.loads(line) for line in Path(queries_path).read_text("utf-8")
                   .splitlines() if line.strip() and not line.startswith("#")]
        filtered = [bool(q.get("files_glob") or q.get("after") or q.get("before"))
                    for q in queries]
        shipped = report["variants"]["shipped"]
        for variant, v in report["variants"].items():
            ranks = [shipped["ranks"][i] if f else v["ranks"][i]
                     for i, f in enumerate(filtered)]
            recall = [shipped["recall"][i] if f else v["recall"][i]
                      for i, f in enumerate(filtered)]
            n = len(queries)
            out["variants"].setdefault(variant, {})[name] = {
                "recall@10": round(sum(recall) / n, 4),
                "mrr@10": round(sum(1 / r for r in ranks if r) / n, 4)}
    for variant, row in out["variants"].items():
        print(f"{variant:28s} " + " ".join(f"{s}:{m['recall@10']}/{m['mrr@10']}"
                                           for s, m in row.items()), file=sys.stderr)
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
