"""A static (calibrated) int8 MiniLM against the shipped dynamic int8 file (issue 21 §6).

Usage (files from ``tools/build_minilm_static_int8.py --keep DIR``)::

    python benchmarks/bench_static_int8.py --static DIR/model.onnx --fp32 DIR/fp32.onnx \\
        [--docs tests/data/commit_documents.jsonl] [--rounds 3] [--threads 2]

Embeds the same commit documents (128 tokens, the default document format's budget) with
the shipped model one text per call (what the pipeline does), the static model one text per
call, and the static model in length-sorted batches of 16 (what a batch-independent model
allows); rounds alternate the order. Prints one JSON object: documents per CPU second
(process time: ONNX Runtime's threads included) per variant, the ratios to the shipped
model, the mean/min cosine of each to the fp32 graph, and the largest difference between a
static vector computed alone and in a batch.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from gitquarry.embedding import minilm

TOKENS = 128


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--static", type=Path, required=True)
    ap.add_argument("--fp32", type=Path, required=True)
    ap.add_argument("--docs", type=Path,
                    default=Path(__file__).resolve().parents[1] / "tests" / "data"
                    / "commit_documents.jsonl")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args(argv)
    texts = [json.loads(line)["text"] for line in args.docs.read_text("utf-8").splitlines()
             if line.strip()]
    model, tokenizer = minilm.model_files()
    runtimes = {
        "shipped": minilm.Runtime(model, tokenizer, "cpu", args.threads),
        "static": minilm.Runtime(args.static, tokenizer, "cpu", args.threads, model_id="s"),
    }
    fp32 = minilm.Runtime(args.fp32, tokenizer, "cpu", args.threads, model_id="fp32")
    reference = _unit(fp32.encode(texts, TOKENS))
    variants = [("shipped", 1), ("static", 1), ("static", args.batch)]
    rates: dict[str, list[float]] = {f"{n}_batch{b}": [] for n, b in variants}
    vectors: dict[str, np.ndarray] = {}
    load_before = os.getloadavg()
    for rnd in range(args.rounds):
        for name, batch in (variants if rnd % 2 == 0 else variants[::-1]):
            minilm.BATCH_TEXTS = batch  # the runtime's batch size (1 is what ships)
            cpu = time.process_time()
            vectors[f"{name}_batch{batch}"] = runtimes[name].encode(texts, TOKENS)
            rates[f"{name}_batch{batch}"].append(len(texts) / (time.process_time() - cpu))
    minilm.BATCH_TEXTS = 1
    base = statistics.median(rates["shipped_batch1"])
    out = {
        "documents": len(texts), "tokens": TOKENS, "threads": args.threads,
        "rounds": args.rounds, "load_before": load_before, "load_after": os.getloadavg(),
        "docs_per_cpu_s": {k: round(statistics.median(v), 2) for k, v in rates.items()},
        "rounds_docs_per_cpu_s": {k: [round(x, 2) for x in v] for k, v in rates.items()},
        "ratio_to_shipped": {k: round(statistics.median(v) / base, 3) for k, v in rates.items()},
        "cosine_to_fp32": {},
        "static_alone_vs_batched_max_abs": float(np.abs(
            vectors["static_batch1"] - vectors[f"static_batch{args.batch}"]).max()),
    }
    for k, v in vectors.items():
        cos = (_unit(v) * reference).sum(axis=1)
        out["cosine_to_fp32"][k] = {"mean": round(float(cos.mean()), 5),
                                    "min": round(float(cos.min()), 5)}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
