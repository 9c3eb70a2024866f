"""Effect of the result pipeline (issue 14) on a real relevance set: copies collapsed, n-gram
dedup and MMR, against the plain fused ranking.

    python benchmarks/relevance/click_set.py build /tmp/click
    python benchmarks/eval_pipeline.py --repo /tmp/click \\
        --queries benchmarks/relevance/click_queries.jsonl \\
        > benchmarks/results/pipeline-click-<date>.json

For each configuration and mode it prints Recall@k and MRR@k (``eval_history``'s scoring:
a relevant entry ``a=b`` is matched by either hash), once counting only the shown hashes and
once also crediting a relevant commit listed among a result's ``copies``, and the mean number
of **distinct topics in the top 5**. Topics are judged from git itself, not from the
pipeline: two results are one topic when they have the same ``git patch-id --stable`` (a
cherry-pick, backport, single-commit merge) or when one is a merge that brought the other in
(``git rev-list P2 ^P1``), or both are merges bringing in a common change.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_history import build_index, load_queries, make_workspace, score_results
from gitquarry.history.search.searcher import HistorySearcher

CONFIGS: dict[str, dict[str, Any]] = {
    "plain": {"collapse_copies": False, "ngram_dedup_enabled": False, "mmr_enabled": False},
    "collapse": {"collapse_copies": True, "ngram_dedup_enabled": False, "mmr_enabled": False},
    "defaults": {"collapse_copies": True, "ngram_dedup_enabled": True, "mmr_enabled": False},
    "defaults+mmr": {"collapse_copies": True, "ngram_dedup_enabled": True, "mmr_enabled": True},
}


class Topics:
    """Topic identity of commits, from git: patch-ids and what each merge brought in."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._pid: dict[str, str] = {}
        self._brought: dict[str, frozenset[str]] = {}

    def _git(self, *args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", "-C", str(self.repo), *args], input=stdin, text=True,
                              capture_output=True, check=True).stdout

    def patch_id(self, commit: str) -> str:
        if commit not in self._pid:
            diff = self._git("log", "-1", "-p", "-M", "--diff-merges=first-parent",
                             "--format=commit %H", commit)
            out = subprocess.run(["git", "patch-id", "--stable"], input=diff, text=True,
                                 capture_output=True, check=True).stdout.split()
            self._pid[commit] = out[0] if out else f"empty:{commit}"
        return self._pid[commit]

    def changes(self, commit: str) -> frozenset[str]:
        """The patch-ids of the change a commit is: its own, or for a merge those of every
        commit it brought in (and its own first-parent patch-id)."""
        if commit not in self._brought:
            parents = self._git("rev-list", "--parents", "-n1", commit).split()[1:]
            ids = {self.patch_id(commit)}
            if len(parents) > 1:
                brought = self._git("rev-list", "--max-count=200", *parents[1:],
                                    f"^{parents[0]}").split()
                ids |= {self.patch_id(h) for h in brought}
            self._brought[commit] = frozenset(ids)
        return self._brought[commit]

    def distinct(self, commits: list[str]) -> int:
        """Connected components of 'shares a change' among ``commits``."""
        groups: list[set[str]] = []
        for commit in commits:
            mine = set(self.changes(commit))
            touching = [g for g in groups if g & mine]
            for g in touching:
                mine |= g
                groups.remove(g)
            groups.append(mine)
        return len(groups)


def run(searcher: HistorySearcher, queries: list[Any], mode: str, k: int,
        topics: Topics) -> dict[str, Any]:
    strict_mrr = strict_recall = credit_mrr = credit_recall = 0.0
    distinct_top5 = 0
    latencies: list[float] = []
    for q in queries:
        t = time.perf_counter()
        response = searcher.search(q.query, top_n=k, files_glob=q.files_glob, after=q.after,
                                   before=q.before, mode=mode)
        latencies.append(time.perf_counter() - t)
        hashes = [r.hash for r in response.results]
        rank, recall = score_results(hashes, q.relevant)
        strict_mrr += 1 / rank if rank else 0.0
        strict_recall += recall
        # a relevant commit listed under a result (as a copy) counts at that result's rank
        expanded = [[r.hash, *(c["hash"] for c in r.copies)] for r in response.results]
        flat_rank = next((n for n, group in enumerate(expanded, start=1)
                          if score_results(group, q.relevant)[0]), None)
        found = sum(1 for rel in q.relevant
                    if any(score_results(group, [rel])[0] for group in expanded))
        credit_mrr += 1 / flat_rank if flat_rank else 0.0
        credit_recall += found / len(q.relevant)
        distinct_top5 += topics.distinct(hashes[:5])
    n = len(queries)
    latencies.sort()
    return {
        f"recall@{k}": round(strict_recall / n, 4), f"mrr@{k}": round(strict_mrr / n, 4),
        f"recall@{k}_with_copies": round(credit_recall / n, 4),
        f"mrr@{k}_with_copies": round(credit_mrr / n, 4),
        "distinct_topics_top5": round(distinct_top5 / n, 3),
        "latency_p50_ms": round(1000 * latencies[n // 2], 1),
        "latency_p95_ms": round(1000 * latencies[min(n - 1, int(n * 0.95))], 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--modes", default="lexical,hybrid")
    parser.add_argument("--index-dir", default=None,
                        help="index location (default: <repo>/.gitquarry)")
    parser.add_argument("--no-embed", action="store_true")
    args = parser.parse_args()
    queries = load_queries(args.queries)
    workspace = make_workspace(args.repo, args.index_dir)
    t = time.monotonic()
    index = build_index(workspace, embed=not args.no_embed)
    index["seconds"] = round(time.monotonic() - t, 1)
    topics = Topics(workspace.root)
    out: dict[str, Any] = {"repo": str(args.repo), "queries": len(queries), "k": args.k,
                           "index": index, "loadavg": list(os.getloadavg()), "results": {}}
    for mode in args.modes.split(","):
        for name, settings in CONFIGS.items():
            workspace.config = workspace.config.replaced(search=dict(settings))
            searcher = HistorySearcher(workspace)
            try:
                out["results"][f"{mode}/{name}"] = run(searcher, queries, mode, args.k, topics)
            finally:
                searcher.close()
            print(f"{mode}/{name}: {out['results'][f'{mode}/{name}']}", file=sys.stderr,
                  flush=True)
    out["loadavg_after"] = list(os.getloadavg())
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
