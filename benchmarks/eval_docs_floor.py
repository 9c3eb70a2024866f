"""Why hybrid docs search can drop a full-text hit, and what a lexical floor would cost.

Usage::

    python benchmarks/eval_docs_floor.py --repo PATH --queries FILE [--cache-dir DIR]
        [--rules every:1,every:3,every:5,every:10,top:1,top:2,top:3] [--out FILE]

For one docs set (the ``eval_docs.py`` inputs) it runs, in one process and one index:

1. **Diagnosis**: per query, full-text's first 10 hits (chunk ids standing for their heading
   sections), each with whether it is relevant (``eval_docs.relevant``), whether its section
   holds every query word, its rank in the cosine ranking (chunk and section, None when
   outside the 100 candidates), its place in the hybrid fused order, and the query's first
   relevant rank in full-text and hybrid (the product's answers, end to end).
2. **Rules**: hybrid end to end (``RepoDocsService.search``, limit 10) with each floor rule
   swapped in (``repo_docs.search.DOCS_LEXICAL_FLOOR``): ``every:K`` = full-text's first K
   hits whose section holds every word stay in the top 10 (the product's rule); ``top:K`` =
   full-text's first K hits stay in the top 10 whatever they hold (a guaranteed interleave).
   Per rule: recall@3/5/10 and MRR@10, how many queries' top 10 (chunk ids, in order) the
   rule changed (``top10_changed``: whether it fired), and every query whose first relevant
   rank changed against no floor (``none``).

Prints one JSON object (and writes it to ``--out``). CPU seconds are this process's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from eval_docs import metrics, relevant  # noqa: E402
from gitquarry.config import Config  # noqa: E402
from gitquarry.repo_docs import search as docs_search  # noqa: E402
from gitquarry.repo_docs.api import RepoDocsService  # noqa: E402
from gitquarry.repo_docs.lexical import LexicalIndex, Row, section_key  # noqa: E402
from gitquarry.repo_docs.registry import Registry, Selector  # noqa: E402
from gitquarry.retrieval.fusion import LexicalFloor  # noqa: E402


def _row_relevant(row: Row, q: dict[str, Any]) -> bool:
    return relevant({"citation": {"path": row.path, "line_start": row.line_start,
                                  "line_end": row.line_end}}, q)


def _first(ranks: list[str], rows: dict[str, Row], q: dict[str, Any]) -> int | None:
    return next((n for n, c in enumerate(ranks, 1) if _row_relevant(rows[c], q)), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path)
    parser.add_argument("--rules", default="every:1,every:3,every:5,every:10,"
                        "top:1,top:2,top:3,top:5,top:10")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("GITQUARRY_LOG", "error")
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line]
    captured: dict[str, Any] = {}
    real_fuse = docs_search.fuse_sections
    real_search = LexicalIndex.search

    def fuse_spy(fused: list[tuple[str, float]], rankings: list[list[str]],
                 weights: list[float], rrf_k: int, rows: dict[str, Row], *,
                 embedded: set[str] | None = None) -> list[tuple[str, float]]:
        out = real_fuse(fused, rankings, weights, rrf_k, rows, embedded=embedded)
        captured.update(rankings=rankings, rows=rows, fused=[c for c, _ in out])
        return out

    def search_spy(self: LexicalIndex, query: str, limit: int) -> list[tuple[Row, float]]:
        captured["index"] = self
        return real_search(self, query, limit)

    docs_search.fuse_sections = fuse_spy  # type: ignore[assignment]
    LexicalIndex.search = search_spy  # type: ignore[method-assign]
    every_word = LexicalIndex.holding_every_word
    cpu0 = time.process_time()
    result: dict[str, Any] = {"repo": args.repo.name, "queries": len(queries),
                              "floor_shipped": repr(docs_search.DOCS_LEXICAL_FLOOR)}
    with tempfile.TemporaryDirectory() as tmp:
        config = Config().replaced(indexing={"index_dir": str(args.cache_dir
                                                              or Path(tmp) / "cache")})
        service = RepoDocsService(config, Registry(Path(tmp) / "registry.json"))
        try:
            service.register("eval/docs", args.repo.resolve())
            sel = Selector("eval/docs")
            index = service.index(sel)
            result["index_warnings"] = [w["code"] for w in index.warnings]

            tops: dict[str, list[list[str]]] = {}

            def run(rule: str) -> list[int | None]:
                kind, _, k = rule.partition(":")
                keep = int(k or 0)
                docs_search.DOCS_LEXICAL_FLOOR = LexicalFloor(keep=keep if kind != "none"
                                                              else 0, window=10)
                if kind == "top":
                    LexicalIndex.holding_every_word = (  # type: ignore[method-assign]
                        lambda self, query, ids: set(ids))
                else:
                    LexicalIndex.holding_every_word = every_word  # type: ignore[method-assign]
                ranks = []
                tops[rule] = []
                for q in queries:
                    r = service.search(sel, q["query"], mode="hybrid", limit=10)
                    ranks.append(next((h["rank"] for h in r["hits"] if relevant(h, q)), None))
                    tops[rule].append([h["chunk_id"] for h in r["hits"]])
                return ranks

            # 1. diagnosis (no floor)
            docs_search.DOCS_LEXICAL_FLOOR = LexicalFloor(keep=0, window=10)
            diagnosis = []
            for n, q in enumerate(queries):
                ft = service.search(sel, q["query"], mode="fulltext", limit=10)
                ft_rank = next((h["rank"] for h in ft["hits"] if relevant(h, q)), None)
                captured.clear()
                hy = service.search(sel, q["query"], mode="hybrid", limit=10)
                hy_rank = next((h["rank"] for h in hy["hits"] if relevant(h, q)), None)
                rows: dict[str, Row] = captured["rows"]
                lex, sem = captured["rankings"][0], captured["rankings"][1]
                fused = captured["fused"]
                idx: LexicalIndex = captured["index"]
                every = every_word(idx, q["query"], lex[:10])
                sem_sections = list(dict.fromkeys(section_key(rows[c]) for c in sem))

                def pos(seq: Iterable[object], item: object) -> int | None:
                    return next((i for i, x in enumerate(seq, 1) if x == item), None)

                diagnosis.append({
                    "n": n, "query": q["query"], "fulltext_rank": ft_rank,
                    "hybrid_rank": hy_rank,
                    "lexical_top10": [{
                        "relevant": _row_relevant(rows[c], q), "every_word": c in every,
                        "semantic_chunk_rank": pos(sem, c),
                        "semantic_section_rank": pos(sem_sections, section_key(rows[c])),
                        "fused_rank": pos(fused, c),
                    } for c in lex[:10]],
                    "lexical_first_relevant": _first(lex, rows, q),
                    "semantic_first_relevant": _first(sem, rows, q),
                    "fused_first_relevant": _first(fused, rows, q),
                })
            result["diagnosis"] = diagnosis
            # 2. rules
            base = run("none")
            rules: dict[str, Any] = {"none": {**metrics(base), "ranks": base}}
            for rule in args.rules.split(","):
                ranks = run(rule)
                rules[rule] = {**metrics(ranks), "top10_changed": sum(
                    1 for a, b in zip(tops["none"], tops[rule], strict=True) if a != b),
                    "changed": [
                    {"n": i, "none": a, "rule": b} for i, (a, b) in
                    enumerate(zip(base, ranks, strict=True)) if a != b]}
            result["rules"] = rules
        finally:
            service.close()
    result["cpu_seconds"] = round(time.process_time() - cpu0, 2)
    result["load"] = os.getloadavg()[0]
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
