"""Model files side by side: documents per CPU-second and cosine to the fp32 graph.

Usage::

    python benchmarks/bench_embedding_model_ab.py --fp32 KEEP/fp32.onnx --docs DOCS.jsonl \\
        NAME:MODEL.onnx[:DISABLED_OPTIMIZER...] ... [--rounds 4] [--speed-docs 100] [--threads 1]

``KEEP/fp32.onnx`` comes from ``tools/build_minilm_int8.py --keep KEEP``; ``DOCS.jsonl`` holds
one ``{"text": ...}`` per line (real commit documents). Every text is cut at 128 tokens (the
commit document budget) and runs one per ONNX call (``ORT_ENABLE_ALL``, spinning off, as the
runtime); vectors are mean-pooled and L2-normalised. Prints two JSON lines: the mean/min
cosine of each variant to the fp32 graph over all documents, then documents per CPU-second
(``time.process_time``) over the first ``--speed-docs``, rounds alternating the order, with
the ratios to the first variant. ``:SkipLayerNormFusion`` after a path turns that ONNX
Runtime transformer off (needed for a file from ``tools/unfuse_skip_layer_norm.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from gitquarry.embedding import minilm

TOKENS = 128


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+", help="NAME:MODEL.onnx[:DISABLED_OPTIMIZER...]")
    ap.add_argument("--fp32", type=Path, required=True)
    ap.add_argument("--docs", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--speed-docs", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    import onnxruntime as ort

    model, tokenizer = minilm.model_files()
    texts = [json.loads(line)["text"] for line in args.docs.read_text("utf-8").splitlines()
             if line.strip()]
    runtime = minilm.Runtime(model, tokenizer, "cpu", 1)
    rows = [runtime._ids(e, TOKENS) for e in runtime.tokenizer.encode_batch(texts)]

    def session(path: str, disabled: list[str] | None = None) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=disabled)

    def run(s: Any, todo: list[list[int]]) -> np.ndarray:
        names = {i.name for i in s.get_inputs()}
        out = []
        for r in todo:
            ids = np.array([r], np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            out.append(s.run(None, feeds)[0][0].mean(axis=0))
        v = np.array(out)
        unit: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
        return unit

    reference = run(session(str(args.fp32)), rows)
    variants = {}
    for spec in args.variants:
        name, path, *disabled = spec.split(":")
        variants[name] = session(path, disabled or None)
    quality = {}
    for name, s in variants.items():
        cosines = (run(s, rows) * reference).sum(axis=1)
        quality[name] = {"mean": round(float(cosines.mean()), 5),
                         "min": round(float(cosines.min()), 5)}
    print(json.dumps({"quality_vs_fp32": quality, "docs": len(rows)}), flush=True)
    rates: dict[str, list[float]] = {k: [] for k in variants}
    load = os.getloadavg()
    for rnd in range(args.rounds):
        for name in (list(variants) if rnd % 2 == 0 else list(variants)[::-1]):
            cpu = time.process_time()
            run(variants[name], rows[: args.speed_docs])
            rates[name].append(args.speed_docs / (time.process_time() - cpu))
    first = next(iter(variants))
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(json.dumps({
        "threads": args.threads, "speed_docs": args.speed_docs, "load_before": load,
        "load_after": os.getloadavg(),
        "docs_per_cpu_s": {k: round(v, 2) for k, v in med.items()},
        "ratio": {k: round(v / med[first], 3) for k, v in med.items()},
        "rounds": {k: [round(x, 1) for x in v] for k, v in rates.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
