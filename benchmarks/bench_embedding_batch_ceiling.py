"""Issue 21 target 6: does batching pay for the shipped model at all? (the ceiling)

Usage::

    python benchmarks/bench_embedding_batch_ceiling.py [--model F] [--tokens 128]
        [--threads 1] [--rounds 3] [--docs tests/data/commit_documents.jsonl]

Takes the real commit documents with at least ``--tokens`` tokens, cut to exactly that many
(so a batch needs no padding and every variant runs the same tokens), and runs the ONNX
session (``ORT_ENABLE_ALL``, spinning off, as the runtime) one text per call and in batches
of 4, 8 and 16 texts, rounds alternating the order. Prints documents per CPU-second
(``time.process_time``) per batch size and the ratios to one per call. It ignores "same
text, same vector" on purpose (with dynamic int8 a batched vector depends on its neighbours):
it measures only what batching could gain if the quantisation allowed it.
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

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--docs", type=Path, default=ROOT / "tests" / "data" / "commit_documents.jsonl")
    args = ap.parse_args(argv)
    import onnxruntime as ort

    shipped, tokenizer = minilm.model_files()
    model = args.model or shipped
    texts = [json.loads(line)["text"] for line in args.docs.read_text("utf-8").splitlines()
             if line.strip()]
    runtime = minilm.Runtime(shipped, tokenizer, "cpu", 1)
    rows = [runtime._ids(e, args.tokens) for e in runtime.tokenizer.encode_batch(texts)]
    rows = [r for r in rows if len(r) == args.tokens][:48]
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    ids = np.array(rows, dtype=np.int64)

    def run(batch: int) -> None:
        for start in range(0, len(ids), batch):
            feeds = {"input_ids": ids[start : start + batch],
                     "attention_mask": np.ones_like(ids[start : start + batch])}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
            session.run(None, feeds)

    sizes = (1, 4, 8, 16)
    run(16)
    run(1)
    rates: dict[int, list[float]] = {b: [] for b in sizes}
    load = os.getloadavg()
    for rnd in range(args.rounds):
        for batch in (sizes if rnd % 2 == 0 else sizes[::-1]):
            cpu = time.process_time()
            run(batch)
            rates[batch].append(len(ids) / (time.process_time() - cpu))
    med = {b: statistics.median(v) for b, v in rates.items()}
    print(json.dumps({
        "model": str(model), "documents": len(ids), "tokens": args.tokens,
        "threads": args.threads, "rounds": args.rounds, "load_before": load,
        "load_after": os.getloadavg(),
        "docs_per_cpu_s": {str(b): round(v, 2) for b, v in med.items()},
        "ratio_to_batch_1": {str(b): round(v / med[1], 3) for b, v in med.items()},
        "rounds_docs_per_cpu_s": {str(b): [round(x, 2) for x in v] for b, v in rates.items()},
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
