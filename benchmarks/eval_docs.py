"""Relevance of ``gitquarry repo-docs search``: Recall@5, Recall@10 and MRR@10 for fulltext
and hybrid search over a docs repository.

Usage::

    python benchmarks/eval_docs.py --repo PATH --queries benchmarks/relevance/docs_queries.jsonl
        [--provider minilm-onnx|fake|none] [--modes fulltext,hybrid] [--out FILE] [--verbose]
        [--set search.max_chunks_per_doc=3 ...] [--cache-dir DIR]

``FILE`` is JSON Lines: ``{"query": "...", "path": "docs/x.rst", "line_start": 10,
"line_end": 40}``. A hit is relevant when its citation is in that file and its line range
overlaps the span (or one of the spans in the optional ``also`` list: further sections
judged to answer the question too). Per query and mode: rank of the first relevant hit in
the top 10 (None if absent). Recall@k (k = 3, 5, 10) = share of queries with a relevant hit
in the top k; MRR@10 = mean of 1/rank. The repository is registered in a private, temporary
registry and indexed (its cache goes to a temporary directory unless ``--cache-dir``, never
into the repository). Prints one JSON object.
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
from gitquarry.repo_docs.api import RepoDocsService  # noqa: E402
from gitquarry.repo_docs.registry import Registry, Selector  # noqa: E402


def relevant(hit: dict[str, Any], q: dict[str, Any]) -> bool:
    """Whether ``hit``'s citation is in the judged file and overlaps the judged span, or one
    of the further spans judged relevant (``also``: a list of ``{path, line_start,
    line_end}``)."""
    c = hit["citation"]
    return any(c["path"] == s["path"] and c["line_start"] <= s["line_end"]
               and c["line_end"] >= s["line_start"] for s in [q, *q.get("also", ())])


def metrics(ranks: list[int | None]) -> dict[str, float]:
    """Recall@3/5/10 (share of queries with a relevant hit at rank <= k) and MRR@10 (mean
    of 1/rank, 0 when none in the top 10), rounded to 3 places."""
    n = len(ranks) or 1
    return {
        "recall@3": round(sum(1 for k in ranks if k and k <= 3) / n, 3),
        "recall@5": round(sum(1 for k in ranks if k and k <= 5) / n, 3),
        "recall@10": round(sum(1 for k in ranks if k and k <= 10) / n, 3),
        "mrr@10": round(sum(1 / k for k in ranks if k and k <= 10) / n, 3),
    }


def apply_settings(config: Config, settings: list[str]) -> Config:
    """``config`` with ``section.key=value`` overrides (``search.max_chunks_per_doc=3``),
    typed like the current value."""
    for item in settings:
        key, _, raw = item.partition("=")
        section, _, name = key.partition(".")
        target = getattr(config, section)
        current = getattr(target, name)
        value: Any = raw
        if isinstance(current, bool):
            value = raw.lower() in ("1", "true", "yes")
        elif isinstance(current, int):
            value = int(raw)
        elif isinstance(current, float):
            value = float(raw)
        config = config.replaced(**{section: {name: value}})
    return config


def evaluate(repo: Path, queries: list[dict[str, Any]], *, provider: str, modes: list[str],
             verbose: bool = False, settings: list[str] | None = None,
             cache_dir: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = apply_settings(Config().replaced(
            embedding={"provider": provider},
            indexing={"index_dir": str(cache_dir or Path(tmp) / "cache")}), settings or [])
        if provider == "fake":
            from gitquarry.embedding.fake import fake_provider_registered

            ctx = fake_provider_registered()
            ctx.__enter__()
        service = RepoDocsService(config, Registry(Path(tmp) / "registry.json"))
        try:
            service.register("eval/docs", repo)
            sel = Selector("eval/docs")
            started, cpu = time.perf_counter(), time.process_time()
            index = service.index(sel)
            index_s, index_cpu = time.perf_counter() - started, time.process_time() - cpu
            out: dict[str, Any] = {
                "repo": repo.name, "queries": len(queries), "provider": provider,
                "settings": settings or [],
                "index": {"seconds": round(index_s, 2), "cpu_seconds": round(index_cpu, 2),
                          "files": index.eligible_files, "chunks": index.eligible_chunks,
                          "embedded": index.embedded,
                          "headings_embedded": index.headings_embedded,
                          "warnings": [w["code"] for w in index.warnings]},
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
                        for d in r["warning_details"]:
                            out.setdefault("warning_codes", set()).add(d["code"])
                out["modes"][mode] = {**metrics(ranks), "ranks": ranks}
            for name in ("effective_modes", "warning_codes"):
                if name in out:
                    out[name] = sorted(out[name])
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
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="a config override, e.g. search.max_chunks_per_doc=3")
    parser.add_argument("--cache-dir", type=Path,
                        help="keep the docs cache here between runs (vectors are reused when "
                             "the chunks are the same); default: a temporary directory")
    args = parser.parse_args()
    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line]
    os.environ.setdefault("GITQUARRY_LOG", "error")
    result = evaluate(args.repo.resolve(), queries, provider=args.provider,
                      modes=args.modes.split(","), verbose=args.verbose,
                      settings=args.set, cache_dir=args.cache_dir)
    result["load"] = os.getloadavg()[0]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
