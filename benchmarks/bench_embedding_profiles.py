"""Embedding profiles side by side in one run (issue 13): the default ``fast`` model against
encoder directories (provider ``onnx``, e.g. the ``accurate`` profile), same documents.

Usage::

    python benchmarks/relevance/click_set.py build /tmp/click
    python tools/build_encoder_int8.py --out /opt/models/mpnet-int8
    python benchmarks/bench_embedding_profiles.py --repo /tmp/click \\
        --profile accurate=/opt/models/mpnet-int8 [--docs 300] [--threads 2] [--rounds 2]

Prints one JSON object:

* ``throughput``: the same ``--docs`` real commit documents (the repository's newest non-merge
  commits in the default document layout, built once with a 256-token character budget) cut
  at 128 and at 256 tokens by each model's own tokenizer, embedded by each profile through
  the runtime gitquarry uses (one text per ONNX call, mean pooling); rounds alternate the
  order; documents/s from wall time (``--threads`` intra-op threads) and from process CPU
  time (medians), and each profile's CPU-time ratio to ``fast``.
* ``query_latency_ms``: one short query per call (10 queries × 5), median and p95.
* ``load``: ``os.getloadavg()`` before and after. On a shared machine compare the ratios
  within one run, not absolute figures across runs.

The repository's history is indexed into a temporary directory first (no vectors).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_embedding_runtime import QUERIES, documents, index_copy, log, query_latency, rate
from gitquarry.embedding import minilm
from gitquarry.embedding.onnx_dir import OnnxDirEmbedder


def throughput(runtimes: dict[str, minilm.Runtime], texts: list[str], rounds: int
               ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tokens in (128, 256):
        walls: dict[str, list[float]] = {name: [] for name in runtimes}
        cpus: dict[str, list[float]] = {name: [] for name in runtimes}
        for rnd in range(rounds):
            names = list(runtimes) if rnd % 2 == 0 else list(reversed(runtimes))
            for name in names:
                runtime = runtimes[name]
                wall, cpu = rate(lambda rt=runtime, t=tokens: rt.encode(texts, t), len(texts))
                walls[name].append(wall)
                cpus[name].append(cpu)
                log(f"{tokens} tokens, round {rnd + 1}: {name} {wall:.2f} docs/s wall, "
                    f"{cpu:.2f} docs/s CPU")
        entry: dict[str, Any] = {
            name: {"docs_per_s_wall": round(statistics.median(walls[name]), 2),
                   "docs_per_s_cpu": round(statistics.median(cpus[name]), 2),
                   "rounds_wall": [round(x, 2) for x in walls[name]],
                   "rounds_cpu": [round(x, 2) for x in cpus[name]]}
            for name in runtimes
        }
        fast = entry["fast"]
        for name in runtimes:
            if name != "fast":
                entry[name]["slowdown_vs_fast_cpu"] = round(
                    fast["docs_per_s_cpu"] / entry[name]["docs_per_s_cpu"], 2)
                entry[name]["slowdown_vs_fast_wall"] = round(
                    fast["docs_per_s_wall"] / entry[name]["docs_per_s_wall"], 2)
        out[f"{tokens}_tokens"] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--profile", action="append", default=[], metavar="NAME=DIR",
                        help="an encoder directory (provider 'onnx') to compare; repeatable")
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    runtimes: dict[str, minilm.Runtime] = {"fast": minilm._runtime("cpu", args.threads)}
    models: dict[str, str] = {"fast": minilm.MODEL_ID}
    for spec in args.profile:
        name, _, directory = spec.partition("=")
        if not directory or name == "fast":
            parser.error(f"--profile takes NAME=DIR (NAME not 'fast'), not {spec!r}")
        embedder = OnnxDirEmbedder(Path(directory), threads=args.threads)
        runtimes[name] = embedder.runtime()
        models[name] = embedder.model
    with tempfile.TemporaryDirectory(prefix="gq-bench-profiles-") as tmp:
        workspace = index_copy(args.repo, Path(tmp))
        texts = documents(workspace, args.docs)
    log(f"{len(texts)} documents; profiles {models}")
    for runtime in runtimes.values():
        runtime.encode(texts[:5])  # load and warm up
    result = {
        "benchmark": "embedding_profiles",
        "repo": str(args.repo.resolve()),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "threads": args.threads,
        "documents": len(texts),
        "rounds": args.rounds,
        "models": models,
        "throughput": throughput(runtimes, texts, args.rounds),
        "query_latency_ms": query_latency(runtimes),
        "queries": len(QUERIES),
    }
    result["load"] = {"before": [round(x, 2) for x in load_before],
                      "after": [round(x, 2) for x in os.getloadavg()],
                      "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
