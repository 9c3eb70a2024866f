"""Issue 21 target 6: the whole embedding pipeline with the shipped model against a baseline
model file, commits per CPU-second, alternating in one run.

Usage::

    python benchmarks/bench_embedding_pipeline_ab.py --repo /tmp/click [--baseline-model F]
        [--commits 200] [--rounds 4] [--threads 0]

The repository (a clone; never written) is cloned once more and indexed without vectors into
a temporary directory. Each round runs ``embed_pending`` (read rows, build the commit
documents, embed one text per model call, write the vectors) over the same ``--commits``
newest commits with the shipped ``model.onnx`` and with ``--baseline-model`` (default: the
shipped file with ``tools/build_minilm_int8.py::refuse_skip_layer_norm`` applied, i.e. the
file shipped before session 8, byte for byte), the order alternating per round (ABBA...).
CPU is ``time.process_time`` (every thread of the process, ONNX Runtime's included), with the
load average before and after each measurement. Both variants run through the same
``MiniLMOnnxEmbedder``; only the model file differs. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder, minilm
from gitquarry.history.index.document import default_format
from gitquarry.history.index.embed import embed_pending, ensure_namespace
from gitquarry.history.index.indexer import index_workspace
from gitquarry.history.index.progress import NullProgress

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_embedding_runtime import index_copy

ROOT = Path(__file__).resolve().parents[1]


def baseline_from_shipped(dest: Path) -> Path:
    """The shipped file with the SkipLayerNormalization rewrite undone (needs ``onnx``)."""
    import onnx

    spec = importlib.util.spec_from_file_location("build_minilm_int8",
                                                  ROOT / "tools" / "build_minilm_int8.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool
    spec.loader.exec_module(tool)
    model = onnx.load(str(minilm.model_files()[0]))
    tool.refuse_skip_layer_norm(model)
    dest.write_bytes(model.SerializeToString())
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--baseline-model", type=Path, default=None)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", type=int, default=0, help="0: the runtime's automatic count")
    args = ap.parse_args(argv)
    shipped, tokenizer = minilm.model_files()
    with tempfile.TemporaryDirectory(prefix="gq-bench-pipeline-ab-") as tmp:
        baseline = args.baseline_model or baseline_from_shipped(Path(tmp) / "baseline.onnx")
        files = {"shipped": shipped, "baseline": baseline}
        workspace = index_copy(args.repo, Path(tmp))
        embedder = create_embedder(EmbeddingConfig(threads=args.threads), purpose="index")
        assert embedder is not None
        fmt = default_format()
        store = workspace.open_store(create=True)
        index_workspace(workspace.root, store, workspace.config, progress=NullProgress())
        rates: dict[str, list[float]] = {k: [] for k in files}
        loads: list[tuple[float, float]] = []
        vectors: dict[str, bytes] = {}
        try:
            ns = ensure_namespace(store, embedder.namespace(fmt.name))
            keep = {int(r[0]) for r in store.conn.execute(
                "SELECT id FROM git_commits ORDER BY timestamp DESC, id DESC LIMIT ?",
                (args.commits,))}
            others = [i for (i,) in store.conn.execute("SELECT id FROM git_commits")
                      if i not in keep]
            blob = np.zeros(embedder.dimensions, dtype="<f4").tobytes()
            for path in files.values():  # load both sessions before timing
                minilm.model_files = lambda p=path: (p, tokenizer)  # type: ignore[assignment]
                embedder.embed(["warm up"] * 8)
            for rnd in range(args.rounds):
                order = list(files) if rnd % 2 == 0 else list(files)[::-1]
                for name in order:
                    minilm.model_files = (  # type: ignore[assignment]
                        lambda p=files[name]: (p, tokenizer))
                    with store.atomic() as c:  # only the benchmark's commits pending
                        c.execute("DELETE FROM commit_vectors WHERE namespace_id = ?", (ns,))
                        c.executemany(
                            "INSERT INTO commit_vectors (namespace_id, commit_id, text_sha256, "
                            "vector) VALUES (?, ?, ?, ?)", [(ns, i, f"x{i}", blob) for i in others])
                    load = os.getloadavg()[0]
                    cpu = time.process_time()
                    report = embed_pending(store, embedder, batch_size=100)
                    spent = time.process_time() - cpu
                    loads.append((load, os.getloadavg()[0]))
                    assert report.embedded + report.reused == len(keep), report
                    rates[name].append(report.embedded / spent)  # texts the model ran
                    digest = hashlib.sha256()
                    for (v,) in store.conn.execute(
                            "SELECT vector FROM commit_vectors WHERE namespace_id = ? "
                            "AND commit_id IN (SELECT value FROM json_each(?)) ORDER BY commit_id",
                            (ns, json.dumps(sorted(keep)))):
                        digest.update(v)
                    vectors.setdefault(name, digest.hexdigest())
                    assert vectors[name] == digest.hexdigest(), f"{name}: vectors changed"
                    print(f"round {rnd + 1} {name}: {rates[name][-1]:.1f} commits/CPU-s",
                          file=sys.stderr, flush=True)
        finally:
            store.close()
        models = {k: {"path": str(p), "sha256": hashlib.sha256(Path(p).read_bytes()).hexdigest()}
                  for k, p in files.items()}
    medians = {k: statistics.median(v) for k, v in rates.items()}
    out: dict[str, Any] = {
        "repo": str(args.repo), "commits": len(keep), "rounds": args.rounds,
        "threads": embedder.threads if hasattr(embedder, "threads") else args.threads,
        "document_format": fmt.name,
        "models": models,
        "pipeline_commits_per_cpu_s": {k: [round(x, 2) for x in v] for k, v in rates.items()},
        "median": {k: round(v, 2) for k, v in medians.items()},
        "ratio_shipped_to_baseline": round(medians["shipped"] / medians["baseline"], 3),
        "load_1min_before_after": loads,
        "vectors_sha256_stable_across_rounds": True,
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
