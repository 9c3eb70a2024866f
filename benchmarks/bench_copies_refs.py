"""Copies' refs (issues 12 + 14): what naming the refs that contain each listed copy costs,
the way before session 2 (one ``git for-each-ref --contains`` per copy, at most 8 per
response, 4 processes at a time, no cache: a one-shot CLI query) against the index's ref bit
sets (``history.refs_contain.RefContainment``, which ``history.pipeline.copies`` uses now),
on the copies that real queries list; and whether both name the same refs.

Usage::

    python benchmarks/bench_copies_refs.py INDEX_DB --queries benchmarks/queries/git-git.jsonl \\
        [--git-responses 4] > benchmarks/results/copies-refs-<repo>-<date>.json

The old way is timed only on the first ``--git-responses`` responses with copies (on git.git
each process takes seconds).

INDEX_DB is an index file of yours (it is opened read-write: a migration may run). Prints
JSON: the bit sets' build time (once per process and index state), per response with copies
the median/p95 milliseconds of each way, the search's own median latency, and
``answers_equal`` (git's refs, restricted to the refs the index read, as short names, equal the
bit sets' names for every copy checked).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gitquarry.gitio.refs import display_ref, ref_from_bytes
from gitquarry.history.index.refs_contain import RefContainment, short_ref
from gitquarry.history.search.engine import search_git_history
from gitquarry.store import open_store

#: the old bounds: copies looked up per response, git processes at once
OLD_LOOKUPS = 8
OLD_PARALLEL = 4


def _git_contains(git_dir: str, commit: str) -> list[str]:
    out = subprocess.run(["git", f"--git-dir={git_dir}", "for-each-ref", "--format=%(refname)",
                          f"--contains={commit}"], capture_output=True, check=True).stdout
    return [ref_from_bytes(line) for line in out.split(b"\n") if line]


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(len(values) * q))], 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("index_db", type=Path)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--top-n", type=int, default=10)
    ap.add_argument("--git-responses", type=int, default=4,
                    help="responses whose copies are also asked of git the old way (each "
                    "git process costs seconds on a large history without a commit-graph)")
    args = ap.parse_args()
    queries = [json.loads(line)["query"] for line in args.queries.read_text().splitlines()
               if line.strip()]
    store = open_store(args.index_db)
    conn = store.conn
    git_dir = conn.execute("SELECT common_dir FROM repositories ORDER BY path LIMIT 1"
                           ).fetchone()[0]
    indexed = {ref_from_bytes(r[0]) if isinstance(r[0], bytes) else str(r[0])
               for r in conn.execute("SELECT ref FROM repo_refs")}
    refs = RefContainment()
    t0 = time.perf_counter()
    refs.refresh(conn)
    build_s = time.perf_counter() - t0
    search_ms: list[float] = []
    new_ms: list[float] = []
    old_ms: list[float] = []
    checked = equal = copies_listed = 0
    with ThreadPoolExecutor(max_workers=OLD_PARALLEL) as pool:
        for query in queries:
            t = time.perf_counter()
            response = search_git_history(store, query, mode="lexical", top_n=args.top_n,
                                          refs=refs)
            search_ms.append((time.perf_counter() - t) * 1000)
            hashes = [c["hash"] for r in response.results for c in r.copies]
            if not hashes:
                continue
            copies_listed += len(hashes)
            t = time.perf_counter()  # the new way: id look-up + bit-set names, all copies
            marks = ",".join("?" * len(hashes))
            ids = dict(conn.execute(f"SELECT hash, id FROM git_commits WHERE hash IN ({marks})",
                                    hashes))
            named = {h: refs.names(int(ids[h]), 10**6)[0] for h in hashes}
            new_ms.append((time.perf_counter() - t) * 1000)
            if len(old_ms) >= args.git_responses:
                continue
            asked = hashes[:OLD_LOOKUPS]
            t = time.perf_counter()  # the old way: git per copy, at most 8
            found = list(pool.map(lambda h: _git_contains(git_dir, h), asked))
            old_ms.append((time.perf_counter() - t) * 1000)
            for h, full in zip(asked, found, strict=True):
                want = set()
                for ref in full:
                    if ref not in indexed:
                        continue
                    short, kind = short_ref(ref)
                    want.add(display_ref(short) if kind < 3 else display_ref(ref))
                checked += 1
                equal += want == set(named[h])
    print(json.dumps({
        "commits": int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]),
        "refs": len(indexed), "queries": len(queries), "top_n": args.top_n,
        "git_commit_graph": any((Path(git_dir) / "objects" / "info" / name).exists()
                                for name in ("commit-graph", "commit-graphs")),
        "git_responses_timed": len(old_ms),
        "responses_with_copies": len(new_ms), "copies_listed": copies_listed,
        "bit_sets_build_s": round(build_s, 3),
        "search_with_copies_p50_ms": round(statistics.median(search_ms), 1),
        "copies_refs_bit_sets_p50_ms": _pct(new_ms, 0.5) if new_ms else None,
        "copies_refs_bit_sets_p95_ms": _pct(new_ms, 0.95) if new_ms else None,
        "copies_refs_git_p50_ms": _pct(old_ms, 0.5) if old_ms else None,
        "copies_refs_git_p95_ms": _pct(old_ms, 0.95) if old_ms else None,
        "copies_checked_against_git": checked, "answers_equal": equal == checked,
        "answers_equal_count": equal,
        "load": [round(x, 2) for x in os.getloadavg()],
    }, indent=2))
    store.close()


if __name__ == "__main__":
    main()
