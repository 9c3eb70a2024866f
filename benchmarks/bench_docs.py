"""Repository-docs benchmarks (issue 9). Prints one JSON object.

Usage::

    python benchmarks/bench_docs.py --source /path/to/a/docs/repo --fixture /tmp/click-docs \
        [--out benchmarks/results/docs-DATE.json] [--skip index,latency,hybrid,chunking]

``--source`` is a real repository with a large docs tree (its HEAD's built-in-preset files
are used: Markdown, reStructuredText, text); ``--fixture`` the relevance fixture
(``benchmarks/relevance/build_docs_fixture.py``). Measured:

- ``chunking``: chunker throughput (MiB/s) over every eligible blob of ``--source`` (bytes
  read first, outside the timing), per content class.
- ``index``: the fixture indexed with the bundled model (seconds), then re-indexed after a
  rename-only commit and after an unrelated commit (vector reuse, must be 100 %), then after
  editing one file (only its chunks embedded).
- ``latency``: full-text query latency for repositories of the first 100 and 1,000 docs of
  ``--source``: warm (one long-lived service, as in the MCP server: 100 queries after the
  first) and cold (a new ``gitquarry repo-docs search --mode fulltext --json`` process per
  query, with an indexed set and without one), wall and CPU (the CLI process and its
  children): the fast path (``cli/fast_docs.py``) alternating with the Typer app
  (``*_typer``, ``GITQUARRY_FAST=0``), outputs compared; then the same command while a
  daemon runs (``cold_cli_daemon``: client CPU, the daemon's CPU per query beside it).
- ``hybrid``: warm hybrid latency over a set of about 20,000 chunks (``--source``'s docs cut at
  ``chunk_max_chars = 700``). Vectors are random unit vectors in the bundled model's
  namespace (embedding 20,000 chunks takes hours on 2 cores; latency depends on the matrix
  size, not the values); query vectors come from the real model.

Warm figures also give the process CPU time per query (``cpu_p50_ms``/``cpu_p95_ms``, every
thread of this process, not the ``git cat-file`` child): on a loaded machine it tells the
query's own cost from time spent waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gitquarry.config import Config  # noqa: E402
from gitquarry.embedding.base import Embedder  # noqa: E402
from gitquarry.gitio.catfile import BlobReader  # noqa: E402
from gitquarry.repo_docs.api import RepoDocsService  # noqa: E402
from gitquarry.repo_docs.chunker import ChunkPolicy, chunk_document  # noqa: E402
from gitquarry.repo_docs.plan import RevisionView  # noqa: E402
from gitquarry.repo_docs.registry import Registry, Selector  # noqa: E402

QUERIES = [
    "dependency injection", "background tasks", "path parameters", "query parameters",
    "request body", "response model", "security oauth2", "cors middleware",
    "websockets", "testing the app", "deploy with docker", "sql databases",
    "upload files", "custom response", "settings environment variables", "async await",
    "error handling exceptions", "openapi schema", "static files", "templates",
]


def _proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of a running process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(q * (len(values) - 1))))
    return round(values[k] * 1000, 2)


def git(*args: str, cwd: Path) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True,
                          capture_output=True).stdout.decode().strip()


def source_docs(source: Path) -> list[tuple[str, str, bytes]]:
    """(path, content class, bytes) of every eligible file at ``source``'s HEAD (builtin)."""
    from gitquarry.gitio.tree import list_tree, resolve_commit
    from gitquarry.repo_docs.plan import plan_view
    from gitquarry.repo_docs.policy import DocsPolicy

    git_dir = Path(git("rev-parse", "--absolute-git-dir", cwd=source))
    commit = resolve_commit(git_dir, "HEAD")
    view = RevisionView(commit, {e.path: e for e in list_tree(git_dir, commit)})
    out = []
    with BlobReader(git_dir) as reader:
        for doc, data in plan_view(view, DocsPolicy(), reader):
            assert data is not None
            out.append((doc.path, doc.content_class, data))
    return out


def bench_chunking(docs: list[tuple[str, str, bytes]]) -> dict[str, Any]:
    policy = ChunkPolicy()
    result: dict[str, Any] = {}
    for cls in [*sorted({c for _p, c, _d in docs}), "all"]:
        subset = [(c, d) for _p, c, d in docs if cls in ("all", c)]
        size = sum(len(d) for _c, d in subset)
        runs, cpu = [], []
        for _ in range(3):
            started, cpu0 = time.perf_counter(), time.process_time()
            chunks = sum(len(chunk_document(d, c, policy)) for c, d in subset)
            runs.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu0)
        best = statistics.median(runs)
        result[cls] = {"files": len(subset), "mib": round(size / 2**20, 2), "chunks": chunks,
                       "mib_per_s": round(size / 2**20 / best, 2),
                       "mib_per_cpu_s": round(size / 2**20 / statistics.median(cpu), 2)}
    return result


def make_repo(dest: Path, docs: list[tuple[str, str, bytes]]) -> Path:
    dest.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=dest)
    for path, _cls, data in docs:
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    git("add", "-A", cwd=dest)
    git("-c", "commit.gpgsign=false", "commit", "-q", "-m", "docs", cwd=dest)
    return dest


def bench_index(fixture: Path, tmp: Path) -> dict[str, Any]:
    repo = tmp / "fixture"
    shutil.copytree(fixture, repo, symlinks=True)
    config = Config().replaced(indexing={"index_dir": str(tmp / "index-cache")})
    out: dict[str, Any] = {}
    with RepoDocsService(config, Registry(tmp / "index-registry.json")) as service:
        service.register("bench/fixture", repo)
        sel = Selector("bench/fixture")

        def run(label: str) -> None:
            started = time.perf_counter()
            r = service.index(sel)
            out[label] = {"seconds": round(time.perf_counter() - started, 2),
                          "chunks": r.eligible_chunks, "embedded": r.embedded,
                          "reused": r.reused, "blobs_read": r.blobs_read,
                          "reuse_fraction": round(r.reused / r.eligible_chunks, 4)}

        run("first_index")
        files = sorted(p for p in (repo / "docs").glob("*.rst"))
        git("mv", str(files[0].relative_to(repo)), "docs/renamed-" + files[0].name, cwd=repo)
        git("commit", "-q", "-m", "rename", cwd=repo)
        run("after_rename")
        (repo / "unrelated.py").write_text("x = 1\n")
        git("add", "-A", cwd=repo)
        git("commit", "-q", "-m", "code", cwd=repo)
        run("after_unrelated_commit")
        edited = files[1]
        edited.write_text(edited.read_text() + "\nA new closing paragraph.\n")
        git("commit", "-qam", "edit", cwd=repo)
        run("after_one_file_edit")
    return out


def bench_latency(docs: list[tuple[str, str, bytes]], tmp: Path,
                  sizes: tuple[int, ...] = (100, 1000), cold_runs: bool = True,
                  cold_queries: int = 10) -> dict[str, Any]:
    out: dict[str, Any] = {}
    exe = Path(sys.executable).parent / "gitquarry"
    for n in sizes:
        repo = make_repo(tmp / f"docs{n}", docs[:n])
        state = tmp / f"state{n}"
        env = dict(os.environ, XDG_STATE_HOME=str(state), GITQUARRY_CONFIG="/dev/null")
        subprocess.run([str(exe), "repo-docs", "register", "--repo", f"bench/d{n}",
                        "--repository-path", str(repo)], env=env, check=True,
                       capture_output=True)

        entry: dict[str, Any] = {"docs": n, "bytes": sum(len(d) for _p, _c, d in docs[:n])}

        def one(q: str, run_env: dict[str, str]) -> tuple[float, float, bytes]:
            started = time.perf_counter()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run([str(exe), "repo-docs", "search", q, "--mode", "fulltext",
                                   "--json"], env=run_env, check=True, capture_output=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            # CPU of the CLI process and its children (git cat-file included)
            return (time.perf_counter() - started,
                    after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                    proc.stdout)

        def summary(times: list[float], cpu: list[float]) -> dict[str, Any]:
            return {"p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95),
                    "cpu_p50_ms": pct(cpu, 0.5), "cpu_p95_ms": pct(cpu, 0.95),
                    "runs": len(times)}

        def cold(label: str, env: dict[str, str] = env,
                 entry: dict[str, Any] = entry) -> None:
            """The command (framework-free fast path, no daemon) and, alternating with
            it, the Typer app (``GITQUARRY_FAST=0``: what every cold search paid before
            ``cli/fast_docs.py``); their stdout compared."""
            got: dict[str, tuple[list[float], list[float]]] = {"fast": ([], []),
                                                                "typer": ([], [])}
            same = True
            for i, q in enumerate(QUERIES[:cold_queries]):
                pair = [("fast", dict(env, GITQUARRY_FAST="local")),
                        ("typer", dict(env, GITQUARRY_FAST="0"))]
                outs = []
                for name, run_env in (pair if i % 2 == 0 else pair[::-1]):
                    wall, cpu, out = one(q, run_env)
                    got[name][0].append(wall)
                    got[name][1].append(cpu)
                    outs.append(out)
                same = same and outs[0] == outs[1]
            entry[label] = summary(*got["fast"])
            entry[label + "_typer"] = summary(*got["typer"])
            entry[label + "_same_stdout"] = same

        def cold_daemon(env: dict[str, str] = env, entry: dict[str, Any] = entry) -> None:
            """The command while a daemon runs (``cli/daemon_docs.py``): the client's CPU;
            the daemon's own CPU per query from /proc beside it; the first query (the
            daemon builds the revision's tables) apart; stdout checked equal to the local
            answer's."""
            runtime = Path(tempfile.mkdtemp(prefix="gqd", dir="/tmp"))
            denv = dict(env, XDG_RUNTIME_DIR=str(runtime))
            daemon = subprocess.Popen([str(exe), "daemon", "run"], env=denv,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            try:
                for _ in range(600):  # wait until it answers
                    if subprocess.run([str(exe), "daemon", "status", "--json"], env=denv,
                                      capture_output=True).returncode == 0:
                        break
                    time.sleep(0.5)
                first = one(QUERIES[0], denv)
                times, cpu, dcpu = [], [], []
                same = True
                for q in QUERIES[:cold_queries]:
                    d0 = _proc_cpu_s(daemon.pid)
                    wall, c, out = one(q, denv)
                    dcpu.append(_proc_cpu_s(daemon.pid) - d0)
                    times.append(wall)
                    cpu.append(c)
                    local = one(q, dict(env, GITQUARRY_FAST="local"))[2]
                    same = same and out == local
                entry["cold_cli_daemon"] = {
                    **summary(times, cpu), "daemon_cpu_p50_ms": pct(dcpu, 0.5),
                    "daemon_cpu_p95_ms": pct(dcpu, 0.95),
                    "first_query_wall_ms": round(first[0] * 1000, 1),
                    "first_query_client_cpu_ms": round(first[1] * 1000, 1),
                    "same_stdout_as_local": same}
            finally:
                daemon.terminate()
                daemon.wait(timeout=60)
                shutil.rmtree(runtime, ignore_errors=True)

        if cold_runs:
            cold("cold_cli_no_index")
        subprocess.run([str(exe), "repo-docs", "index", "--foreground", "--json"],
                       env=dict(env, GITQUARRY_CONFIG=str(tmp / "none.toml")), check=True,
                       capture_output=True)
        if cold_runs:
            cold("cold_cli_indexed")
            cold_daemon()
        config = Config().replaced(embedding={"provider": "none"})
        registry = Registry(state / "gitquarry" / "repo-docs-registry.json")
        # the children's state directory: the cache's owner token is recorded there
        os.environ["XDG_STATE_HOME"] = str(state)
        with RepoDocsService(config, registry) as service:
            sel = Selector(f"bench/d{n}")
            started = time.perf_counter()
            first = service.search(sel, QUERIES[0], mode="fulltext")
            entry["warm_first_query_ms"] = round((time.perf_counter() - started) * 1000, 1)
            entry["chunks"] = first["coverage"]["eligible_chunks"]
            times, cpu = [], []
            for i in range(100):
                started, cpu0 = time.perf_counter(), time.process_time()
                service.search(sel, QUERIES[i % len(QUERIES)], mode="fulltext")
                times.append(time.perf_counter() - started)
                cpu.append(time.process_time() - cpu0)
            entry["warm"] = {"p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95),
                             "runs": len(times), "cpu_p50_ms": pct(cpu, 0.5),
                             "cpu_p95_ms": pct(cpu, 0.95)}
        out[str(n)] = entry
    return out


class RandomMiniLM(Embedder):
    """Random unit vectors in the bundled model's namespace (benchmark only)."""

    def __init__(self, provider: str, model: str, dims: int) -> None:
        self.provider, self.model, self._dims = provider, model, dims
        self.data_boundary = "local_process"
        self._rng = np.random.default_rng(7)

    @property
    def dimensions(self) -> int:
        return self._dims

    @property
    def max_tokens(self) -> int:
        return 256

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self._rng.standard_normal((len(texts), self._dims)).astype(np.float32)


def bench_hybrid(docs: list[tuple[str, str, bytes]], tmp: Path) -> dict[str, Any]:
    from gitquarry.embedding import create_embedder

    repo = make_repo(tmp / "hybrid", docs)
    config = Config().replaced(docs={"chunk_max_chars": 700, "chunk_min_chars": 100},
                               embedding={"batch_size": 2000},
                               indexing={"index_dir": str(tmp / "hybrid-cache")})
    real = create_embedder(config.embedding, purpose="query")
    assert real is not None
    fake = RandomMiniLM(real.provider, real.model, real.dimensions)
    with RepoDocsService(config, Registry(tmp / "hybrid-registry.json")) as service:
        service.register("bench/hybrid", repo)
        sel = Selector("bench/hybrid")
        started = time.perf_counter()
        result = service.index(sel, embedder=fake)
        index_s = time.perf_counter() - started
        service.search(sel, QUERIES[0])  # warm: lexical table, matrix, model
        times, cpu = [], []
        modes = set()
        for i in range(100):
            started, cpu0 = time.perf_counter(), time.process_time()
            r = service.search(sel, QUERIES[i % len(QUERIES)] + f" {i}")
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu0)
            modes.add(r["effective_mode"])
    real.close()
    return {"chunks": result.eligible_chunks, "files": result.eligible_files,
            "index_seconds_random_vectors": round(index_s, 1), "effective_modes": sorted(modes),
            "warm": {"p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95), "runs": 100,
                     "cpu_p50_ms": pct(cpu, 0.5), "cpu_p95_ms": pct(cpu, 0.95)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--fixture", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--skip", default="")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold CLI runs")
    parser.add_argument("--sizes", default="100,1000",
                        help="repository sizes (documents) of the latency step")
    parser.add_argument("--cold-queries", type=int, default=10,
                        help="cold CLI runs per size and state (at most 20)")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    os.environ.setdefault("GITQUARRY_CONFIG", "/dev/null")
    result: dict[str, Any] = {"load_start": os.getloadavg()[0]}
    docs = source_docs(args.source.resolve())
    result["source"] = {"repo": args.source.name, "files": len(docs),
                        "mib": round(sum(len(d) for _p, _c, d in docs) / 2**20, 2)}
    steps: list[tuple[str, Callable[[Path], Any]]] = [
        ("chunking", lambda tmp: bench_chunking(docs)),
        ("index", lambda tmp: bench_index(args.fixture, tmp) if args.fixture else None),
        ("latency", lambda tmp: bench_latency(
            docs, tmp, sizes=tuple(int(x) for x in args.sizes.split(",")),
            cold_runs=not args.no_cold, cold_queries=args.cold_queries)),
        ("hybrid", lambda tmp: bench_hybrid(docs, tmp)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "none.toml").write_text('[embedding]\nprovider = "none"\n')
        for name, step in steps:
            if name in skip:
                continue
            started = time.perf_counter()
            result[name] = step(Path(tmp))
            print(f"{name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    result["load_end"] = os.getloadavg()[0]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
