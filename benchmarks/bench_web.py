"""Web page latency (issue 11): server-side time to answer a History search page, p50/p95,
on a flask-sized workspace with the embedding model warm. Prints one JSON object.

Fixture: a local clone of pallets/flask (the ``fetch`` tool's mirror, or ``--repo``), indexed
with ``gitquarry index --no-embed``; commit vectors are random unit vectors in the real
model's namespace (as in bench_hybrid.py: latency depends on the matrix size, not on the
values; embedding 12,000 commits takes about half an hour on 2 cores). Query vectors come
from the real model, loaded once by a warm-up request.

The daemon runs as its own process, started by ``gitquarry web`` as for a user. Measured
side by side in one run, per query of ``QUERIES``, alternating:
- ``page``: ``GET /history?q=…&explain=1`` (hybrid, HTML with histogram) over HTTP on
  127.0.0.1 from a signed-in client: the whole server-side cost plus a loopback round trip;
- ``api``: ``GET /api/history?q=…`` (the same data as JSON);
- ``search``: ``HistorySearcher.search`` alone, in this process on the same index (what the
  page adds is roughly ``page - search``).

Usage: python benchmarks/bench_web.py [--repo /work/.mirror/pallets+flask/repo] [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote_plus

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

QUERIES = ["blueprint url prefix", "session cookie secure", "json provider", "async view",
           "fix typo in docs", "request context teardown", "static files cache timeout",
           "cli run reload", "test client cookies", "config from env"]


def log(msg: str) -> None:
    print(f"[bench_web] {msg}", file=sys.stderr, flush=True)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def summary(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 1),
            "p95_ms": round(pct(ms, 95), 1), "max_ms": round(max(ms), 1)}


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default="/work/.mirror/pallets+flask/repo")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    top = Path(tempfile.mkdtemp(prefix="gqbw"))
    config = top / "config.toml"
    config.write_text("[daemon]\nembed = false\nreconcile_s = 3600\n", encoding="utf-8")
    os.environ.update({"HOME": str(top), "XDG_STATE_HOME": str(top / "state"),
                       "XDG_RUNTIME_DIR": str(top / "run"), "GITQUARRY_CONFIG": str(config)})
    (top / "run").mkdir(mode=0o700)
    ws = top / "ws"
    ws.mkdir()
    subprocess.run(["git", "clone", "-q", args.repo, str(ws / "flask")], check=True)
    log("indexing (keywords only)")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gitquarry", "index", "--no-embed", str(ws)],
                   check=True, capture_output=True)
    index_s = time.perf_counter() - t0
    from bench_hybrid import fill_random_vectors

    vectors = fill_random_vectors(ws / ".gitquarry" / "index.db")
    from tests.web.http_client import request, sign_in

    from gitquarry.config import load_config
    from gitquarry.history.search.searcher import HistorySearcher
    from gitquarry.workspace import Workspace

    def cli(*argv: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "gitquarry", *argv], check=True,
                              capture_output=True, text=True)
        return proc.stdout

    try:
        # the daemon is its own process, as for a user: `gitquarry web` starts it
        cli("daemon", "watch", str(ws))
        info = json.loads(cli("web", "--no-open", "--json"))
        base = info["url"]
        headers = {"Cookie": sign_in(base, info["login_url"])}
        while '"status": "running"' in cli("jobs", "list", "--json") or \
                '"status": "queued"' in cli("jobs", "list", "--json"):
            time.sleep(0.5)
        log("warming up (loads the model in the daemon)")
        t0 = time.perf_counter()
        first = request(base, "GET", f"/history?q={quote_plus(QUERIES[0])}&explain=1",
                        headers=headers)
        warm_s = time.perf_counter() - t0
        assert first.status == 200 and "matching commit" in first.body, first.body[:500]
        searcher = HistorySearcher(Workspace(root=ws.resolve(), config=load_config(ws)))
        searcher.search(QUERIES[0], top_n=10)  # this process's model, warm too
        for q in QUERIES:
            request(base, "GET", f"/history?q={quote_plus(q)}", headers=headers)
        page: list[float] = []
        api: list[float] = []
        search: list[float] = []
        for _ in range(args.rounds):
            for q in QUERIES:
                t0 = time.perf_counter()
                r = request(base, "GET", f"/history?q={quote_plus(q)}&explain=1",
                            headers=headers)
                page.append(time.perf_counter() - t0)
                assert r.status == 200
                t0 = time.perf_counter()
                r = request(base, "GET", f"/api/history?q={quote_plus(q)}", headers=headers)
                api.append(time.perf_counter() - t0)
                assert r.status == 200
                t0 = time.perf_counter()
                resp = searcher.search(q, top_n=10)
                search.append(time.perf_counter() - t0)
                assert resp.effective_mode == "hybrid", resp.effective_mode
        # CPU time per request (less sensitive to the machine's load than wall time): the
        # daemon's CPU over page-only requests, this process's CPU over searches
        status = json.loads(cli("daemon", "status", "--json"))
        pid = int(status["daemon"]["pid"])
        n = len(QUERIES) * max(1, args.rounds // 2)
        before = proc_cpu_s(pid)
        for i in range(n):
            request(base, "GET", f"/history?q={quote_plus(QUERIES[i % len(QUERIES)])}"
                    "&explain=1", headers=headers)
        page_cpu = (proc_cpu_s(pid) - before) / n
        t0 = time.process_time()
        for i in range(n):
            searcher.search(QUERIES[i % len(QUERIES)], top_n=10)
        search_cpu = (time.process_time() - t0) / n
        result = {
            "benchmark": "web_history_page",
            "fixture": {"repository": "pallets/flask (local clone)",
                        "commits": int(resp.total_commits_indexed), "vectors": vectors,
                        "vectors_note": "random unit vectors in the real model's namespace",
                        "index_no_embed_s": round(index_s, 1)},
            "model_warmup_first_page_s": round(warm_s, 2),
            "queries": QUERIES, "rounds": args.rounds,
            "page_hybrid_html": summary(page), "api_hybrid_json": summary(api),
            "search_only_hybrid_other_process": summary(search),
            "page_over_search_p50_ratio": round(statistics.median(page)
                                                / statistics.median(search), 2),
            "cpu_ms_per_page_in_daemon": round(page_cpu * 1000, 1),
            "cpu_ms_per_search_in_process": round(search_cpu * 1000, 1),
            "cpu_requests": n,
            "bar_p95_ms": 150,
            "load_avg_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
        }
        print(json.dumps(result, indent=2))
    finally:
        subprocess.run([sys.executable, "-m", "gitquarry", "daemon", "stop"],
                       capture_output=True, check=False)


if __name__ == "__main__":
    main()
