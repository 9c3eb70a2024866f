"""CPU cost of the docs lexical floor: hybrid ``repo-docs search`` over every query of a set,
floor on (``repo_docs.search.DOCS_LEXICAL_FLOOR`` as shipped) and off (``keep = 0``),
alternated round by round in one process and one index.

Usage::

    python benchmarks/eval_docs_floor_cost.py --repo PATH --queries FILE [--cache-dir DIR]
        [--rounds 5] [--out FILE]

Prints per arm the CPU milliseconds per query (``time.process_time``) of each round, their
median, and the ratio on / off of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gitquarry.config import Config  # noqa: E402
from gitquarry.repo_docs import search as docs_search  # noqa: E402
from gitquarry.repo_docs.api import RepoDocsService  # noqa: E402
from gitquarry.repo_docs.registry import Registry, Selector  # noqa: E402
from gitquarry.retrieval.fusion import LexicalFloor  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("GITQUARRY_LOG", "error")
    queries = [json.loads(line)["query"] for line in args.queries.read_text().splitlines()
               if line]
    shipped = docs_search.DOCS_LEXICAL_FLOOR
    arms = {"on": shipped, "off": LexicalFloor(keep=0, window=shipped.window)}
    per_query_ms: dict[str, list[float]] = {name: [] for name in arms}
    with tempfile.TemporaryDirectory() as tmp:
        config = Config().replaced(indexing={"index_dir": str(args.cache_dir
                                                              or Path(tmp) / "cache")})
        service = RepoDocsService(config, Registry(Path(tmp) / "registry.json"))
        try:
            service.register("eval/docs", args.repo.resolve())
            sel = Selector("eval/docs")
            service.index(sel)
            for q in queries:  # warm: models, tables, heading matrix
                service.search(sel, q, mode="hybrid", limit=10)
            for _ in range(args.rounds):
                for name, floor in arms.items():
                    docs_search.DOCS_LEXICAL_FLOOR = floor
                    cpu = time.process_time()
                    for q in queries:
                        service.search(sel, q, mode="hybrid", limit=10)
                    per_query_ms[name].append(
                        round(1000 * (time.process_time() - cpu) / len(queries), 2))
        finally:
            docs_search.DOCS_LEXICAL_FLOOR = shipped
            service.close()
    medians = {name: statistics.median(v) for name, v in per_query_ms.items()}
    result = {"repo": args.repo.name, "queries": len(queries), "floor": repr(shipped),
              "cpu_ms_per_query": per_query_ms, "median": medians,
              "ratio_on_off": round(medians["on"] / medians["off"], 3),
              "load": os.getloadavg()[0]}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
