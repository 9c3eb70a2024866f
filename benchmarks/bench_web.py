"""Web page latency (issue 11): server-side time to answer a History search page, p50/p95,
on a flask-sized workspace with the embedding model warm. Prints one JSON object.

Fixture: a local clone of pallets/flask (the ``fetch`` tool's mirror, or ``--repo``), indexed
with ``gitquarry index --no-embed``; commit vectors are random unit vectors in the real
model's namespace (as in bench_hybrid.py: latency depends on the matrix size, not on the
values; embedding 12,000 commits takes about half an hour on 2 cores). Query vectors come
from the real model, loaded once by a warm-up request.

Measured side by side in one run, per query of ``QUERIES``, alternating:
- ``page``: ``GET /history?q=…&explain=1`` (hybrid, HTML with histogram) over HTTP on
  127.0.0.1 from a signed-in client: the whole server-side cost plus a loopback round trip;
- ``api``: ``GET /api/history?q=…`` (the same data as JSON);
- ``search``: ``HistorySearcher.search`` alone, in the same process (what the page adds is
  ``page - search``).

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
import threading
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
    from gitquarry.service.daemon import Daemon

    daemon = Daemon(load_config(None).daemon)
    ready = threading.Event()
    thread = threading.Thread(target=daemon.run, kwargs={"on_ready": ready.set}, daemon=True)
    thread.start()
    assert ready.wait(60)
    try:
        daemon.op_watch({"path": str(ws)})
        while daemon.state.list_jobs(statuses=("queued", "running"), limit=5) or \
                daemon.runner.current is not None:
            time.sleep(0.2)
        info = daemon.op_web_start({})
        base = info["url"]
        cookie = sign_in(base, info["login_url"])
        headers = {"Cookie": cookie}
        web = daemon.web
        searcher_of = web.backend._searcher  # the searcher the page uses (same object)
        log("warming up (loads the model)")
        t0 = time.perf_counter()
        first = request(base, "GET", f"/history?q={quote_plus(QUERIES[0])}&explain=1",
                        headers=headers)
        warm_s = time.perf_counter() - t0
        assert first.status == 200 and "matching commit" in first.body, first.body[:500]
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
                _public, _ws, searcher, lock = searcher_of(None)
                t0 = time.perf_counter()
                with lock:
                    resp = searcher.search(q, top_n=10)
                search.append(time.perf_counter() - t0)
                assert resp.effective_mode == "hybrid", resp.effective_mode
        result = {
            "benchmark": "web_history_page",
            "fixture": {"repository": "pallets/flask (local clone)",
                        "commits": int(resp.total_commits_indexed), "vectors": vectors,
                        "vectors_note": "random unit vectors in the real model's namespace",
                        "index_no_embed_s": round(index_s, 1)},
            "model_warmup_first_page_s": round(warm_s, 2),
            "queries": QUERIES, "rounds": args.rounds,
            "page_hybrid_html": summary(page), "api_hybrid_json": summary(api),
            "search_only_hybrid": summary(search),
            "page_over_search_p50_ratio": round(statistics.median(page)
                                                / statistics.median(search), 2),
            "bar_p95_ms": 150,
            "load_avg_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
        }
        print(json.dumps(result, indent=2))
    finally:
        daemon.stop()
        thread.join(timeout=30)


if __name__ == "__main__":
    main()
