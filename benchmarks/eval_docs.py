"""Relevance of ``gitquarry repo-docs search``: Recall@5, Recall@10 and MRR@10 for fulltext
and hybrid search over a docs repository.

Usage::

    python benchmarks/eval_docs.py --repo PATH --queries benchmarks/relevance/docs_queries.jsonl
        [--provider minilm-onnx|fake|none] [--modes fulltext,hybrid] [--out FILE] [--verbose]

``FILE`` is JSON Lines: ``{"query": "...", "path": "docs/x.rst", "line_start": 10,
"line_end": 40}``. A hit is relevant when its citation is in that file and its line range
overlaps the span. Per query and mode: rank of the first relevant hit in the top 10 (None if
absent). Recall@k = share of queries with a relevant hit in the top k; MRR@10 = mean of
1/rank. The repository is registered in a private, temporary registry and indexed (its cache
goes to a temporary directory, never into the repository). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gitquarry.config import Config  # noqa: E402
from gitquarry.repo_docs.registry import Registry, Selector  # noqa: E402
from gitquarry.repo_docs.service import RepoDocsService  # noqa: E402


def relevant(hit: dict[str, Any], q: dict[str, Any]) -> bool:
    c = hit["citation"]
    return bool(c["path"] == q["path"] and c["line_start"] <= q["line_end"]
                and c["line_end"] >= q["line_start"])


def evaluate(repo: Path, queries: list[dict[str, Any]], *, provider: str, modes: list[str],
             verbose: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = Config()
        config.embedding.provider = provider
        config.indexing.index_dir = str(Path(tmp) / "cache")
        if provider == "fake":
            from gitquarry.embedding.fake import fake_provider_registered

            ctx = fake_provider_registered()
            ctx.__enter__()
        service = RepoDocsService(config, Registry(Path(tmp) / "registry.json"))
        try:
            service.register("eval/docs", repo)
            sel = Selector("eval/docs")
            started = time.perf_counter()
            index = service.index(sel)
            index_s = time.perf_counter() - started
            out: dict[str, Any] = {
                "repo": repo.name, "queries": len(queries), "provider": provider,
                "index": {"seconds": round(index_s, 2), "files": index.eligible_files,
                          "chunks": index.eligible_chunks, "embedded": index.embedded},
                "modes": {},
            }
            for mode in modes:
                ranks: list[int | None] = []
                for q in queries:
                    r = service.search(sel, q["query"], mode=mode, limit=10)
                    rank = next((h["rank"] for h in r["hits"] if relevant(h, q)), None)
                    ranks.append(rank)
                    if verbose:
                        top = [f"{h['citation']['path']}:{h['citation']['line_start']}"
                               for h in r["hits"][:3]]
                        print(f"{mode:8} {rank!s:>4}  {q['query']}  {top}", file=sys.stderr)
                    if mode == "hybrid":
                        out.setdefault("effective_modes", set()).add(r["effective_mode"])
                n = len(ranks)
                out["modes"][mode] = {
                    "recall@5": round(sum(1 for k in ranks if k and k <= 5) / n, 3),
                    "recall@10": round(sum(1 for k in ranks if k) / n, 3),
                    "mrr@10": round(sum(1 / k for k in ranks if k) / n, 3),
                }
            if "effective_modes" in out:
                out["effective_modes"] = sorted(out["effective_modes"])
            return out
        finally:
            service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--provider", default="minilm-onnx")
    parser.add_argument("--modes", default="fulltext,hybrid")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line]
    os.environ.setdefault("GITQUARRY_LOG", "error")
    result = evaluate(args.repo.resolve(), queries, provider=args.provider,
                      modes=args.modes.split(","), verbose=args.verbose)
    result["load"] = os.getloadavg()[0]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
