"""Embedding CPU cost by ONNX Runtime thread count and thread spinning (issue 21 §6).

Usage::

    python benchmarks/bench_embedding_spinning.py MODEL.onnx TOKENIZER.json DOCS.jsonl \\
        THREADS SPIN BATCH [OUT.npy]

``DOCS.jsonl`` holds ``{"text": ...}`` per line (commit documents; cut at 128 tokens as the
commit corpus does). ``SPIN`` is ONNX Runtime's ``session.intra_op.allow_spinning`` (0 or 1).
The documents run once to warm up, then once timed. Prints one JSON line: documents per
CPU-second (process CPU time) and per wall second. Run the settings alternately in one run and
compare ratios (the machine is shared).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main(argv: list[str]) -> int:
    model, tok_path, docs_path = argv[0], argv[1], argv[2]
    threads, spin, batch = int(argv[3]), argv[4], int(argv[5])
    with open(docs_path, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    tok = Tokenizer.from_file(tok_path)
    tok.no_padding()
    tok.enable_truncation(max_length=128)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", spin)
    session = ort.InferenceSession(model, sess_options=options,
                                   providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    enc = [e.ids for e in tok.encode_batch(texts)]
    order = np.argsort([len(e) for e in enc], kind="stable")

    def run() -> np.ndarray:
        out = np.zeros((len(enc), 384), np.float32)
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            width = max(len(enc[r]) for r in rows)
            ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros_like(ids)
            for i, r in enumerate(rows):
                ids[i, : len(enc[r])] = enc[r]
                mask[i, : len(enc[r])] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(1) / m.sum(1)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    run()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    vectors = run()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    if len(argv) > 6:
        np.save(argv[6], vectors)
    print(json.dumps({"model": model, "threads": threads, "spin": spin, "batch": batch,
                      "docs": len(texts), "docs_per_cpu_s": round(len(texts) / cpu, 1),
                      "docs_per_wall_s": round(len(texts) / wall, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
