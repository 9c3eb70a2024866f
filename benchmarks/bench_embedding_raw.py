"""Raw throughput of the default embedder (all-MiniLM-L6-v2 int8 on ONNX Runtime).

Measures, on synthetic commit-like texts:

* ``first_vector_s``: wall time from starting a fresh Python process to holding the first
  vector (interpreter start, imports, model load, one embed), median of ``--cold-runs``;
* ``short``: texts/s for one-line commit subjects (~10-15 tokens);
* ``long``: texts/s for commit message + diff texts cut to the model's 256 tokens.

Prints one JSON object on stdout. Usage::

    .venv/bin/python benchmarks/bench_embedding_raw.py [--n 256] [--cold-runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time

_COLD_SCRIPT = """
from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder
create_embedder(EmbeddingConfig(), purpose="index").embed(["fix crash when config is empty"])
"""

_VERBS = ["fix", "add", "remove", "refactor", "update", "handle", "document", "test", "rename"]
_NOUNS = [
    "parser",
    "config loader",
    "HTTP client",
    "index writer",
    "retry logic",
    "CLI flags",
    "SQLite schema",
    "watcher",
    "embedding batcher",
    "glob filter",
    "README",
    "release script",
]


def _subject(rng: random.Random) -> str:
    return (
        f"{rng.choice(_VERBS)} {rng.choice(_NOUNS)} when {rng.choice(_NOUNS)} "
        f"is {rng.choice(['empty', 'missing', 'stale', 'locked'])}"
    )


def _long_text(rng: random.Random) -> str:
    lines = [_subject(rng), "", f"The {rng.choice(_NOUNS)} failed on large inputs.", ""]
    for i in range(60):
        name = rng.choice(_NOUNS).replace(" ", "_").lower()
        lines.append(f"+    {name}_{i} = compute_{name}(value_{i}, limit={rng.randint(1, 999)})")
        lines.append(f"-    {name}_{i} = old_{name}(value_{i})")
    return "\n".join(lines)


def _throughput(texts: list[str]) -> dict[str, float]:
    from gitquarry.config import EmbeddingConfig
    from gitquarry.embedding import create_embedder

    embedder = create_embedder(EmbeddingConfig(), purpose="index")
    assert embedder is not None
    embedder.embed(texts[:4])  # load the model outside the timing
    start = time.perf_counter()
    vectors = embedder.embed(texts)
    elapsed = time.perf_counter() - start
    assert vectors.shape == (len(texts), embedder.dimensions)
    return {
        "n": len(texts),
        "seconds": round(elapsed, 3),
        "texts_per_s": round(len(texts) / elapsed, 1),
    }


def _tokens(texts: list[str]) -> float:
    from gitquarry.embedding.minilm import MiniLMOnnxEmbedder, _runtime
    from gitquarry.embedding.text import truncate_to_token_budget

    runtime = _runtime(MiniLMOnnxEmbedder().device)

    cut = [truncate_to_token_budget(t, 256) for t in texts]
    return statistics.mean(len(e.ids) for e in runtime.tokenizer.encode_batch(cut))


def _first_vector(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _COLD_SCRIPT], check=True)
        times.append(time.perf_counter() - start)
    return times


def _cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256, help="texts per throughput run")
    parser.add_argument("--cold-runs", type=int, default=3, help="fresh processes to time")
    args = parser.parse_args()

    rng = random.Random(1234)
    short = [_subject(rng) for _ in range(args.n)]
    long = [_long_text(rng) for _ in range(args.n)]
    cold = _first_vector(args.cold_runs)
    result = {
        "benchmark": "embedding_raw",
        "provider": "minilm-onnx",
        "model": "all-MiniLM-L6-v2-onnx-int8",
        "cpus": _cpus(),
        "python": platform.python_version(),
        "first_vector_s": {
            "median": round(statistics.median(cold), 3),
            "runs": [round(t, 3) for t in cold],
        },
        "short": {**_throughput(short), "mean_tokens": round(_tokens(short), 1)},
        "long": {**_throughput(long), "mean_tokens": round(_tokens(long), 1)},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
