"""Score a peer's history answers with ``eval_history.py``'s scorer (same ``=`` alternatives,
same Recall@k / MRR@k), so the peer's row and gitquarry's come from one scorer.

Input: JSON ``{"rows": [{"query", "kind", "relevant": [...], "top": [hash, ...]}, ...]}``
(what the git-semantic-similarity runner in docs/performance.md writes). Prints metrics by
kind as JSON.

Usage: python benchmarks/score_peer_history.py PEER.json [--k 10]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import score_results, summarise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("answers", type=Path)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)
    data = json.loads(args.answers.read_text("utf-8"))
    rows: list[dict[str, Any]] = []
    for r in data["rows"]:
        rank, recall = score_results(r["top"][: args.k], [str(x).lower() for x in r["relevant"]])
        rows.append({"query": r["query"], "kind": r.get("kind"),
                     "peer": {"rank": rank, "recall": round(recall, 4)}})
    out = {k: v for k, v in data.items() if k != "rows"}
    out["metrics"] = summarise(rows, ["peer"], args.k)["peer"]
    cpu = sorted(r.get("cpu_ms", 0.0) for r in data["rows"])
    if cpu:
        out["query_cpu_ms_p50"] = cpu[len(cpu) // 2]
    out["ranks"] = [r["peer"]["rank"] for r in rows]
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
