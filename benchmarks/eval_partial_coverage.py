"""Hybrid search while vectors are still being computed (issue 20 §4): Recall@k / MRR@k of
lexical and hybrid search on a relevance set with 5 %, 25 %, 50 % and 100 % of commits
embedded. Prints one JSON object on stdout.

Usage::

    python benchmarks/eval_partial_coverage.py --repo PATH --queries FILE --index-dir DIR
        [--k 10] [--coverage 0.05,0.25,0.5,1] [--seed 20] [--no-build]

The repository is indexed with embeddings into ``DIR`` (reused, incremental, on the next run:
``eval_history.build_index``). For each coverage a copy of the index keeps the vectors of a
seeded random sample of that share of commits (the rest deleted, as an interrupted embedding
run leaves an index), and every query runs in lexical and hybrid mode against the copy. Per
coverage: the summary per mode, ``hybrid_worse`` (queries where hybrid ranks the first
relevant commit lower than lexical, or misses it) split by whether that commit had a vector,
and the embedded fraction the search reported.

``--no-build``: use the index in ``DIR`` as it is (an embedding run stopped part way: vectors
for the commits it reached); each coverage then samples from the commits that have a vector,
a coverage above what the index holds is reported as ``not_reached``, and ``as_is`` is the
index exactly as the stopped run left it (the order ``gitquarry index`` embeds in).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import (
    _matches,
    build_index,
    load_queries,
    make_workspace,
    run_queries,
    summarise,
)
from gitquarry.history.search.searcher import HistorySearcher

MODES = ("lexical", "hybrid")


def _cut(db: Path, coverage: float | None, seed: int) -> int | None:
    """Keep the vectors of ``coverage`` of the commits in ``db`` (a seeded sample of those
    that have one; None: all of them); returns how many, or None when fewer have one."""
    conn = sqlite3.connect(db)
    try:
        total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
        have = [int(r[0]) for r in conn.execute(
            "SELECT DISTINCT commit_id FROM commit_vectors ORDER BY commit_id")]
        want = len(have) if coverage is None else max(1, round(coverage * total))
        if want > len(have):
            return None
        keep = set(random.Random(seed).sample(have, want))
        conn.execute("CREATE TEMP TABLE keep (id INTEGER PRIMARY KEY)")
        conn.executemany("INSERT INTO keep VALUES (?)", ((i,) for i in keep))
        conn.execute("DELETE FROM commit_vectors WHERE commit_id NOT IN (SELECT id FROM keep)")
        conn.commit()
        return int(conn.execute("SELECT count(DISTINCT commit_id) FROM commit_vectors")
                   .fetchone()[0])
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--coverage", default="0.05,0.25,0.5,1")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args(argv)
    queries = load_queries(args.queries)
    full = make_workspace(args.repo, args.index_dir)
    index = {"reused": True} if args.no_build else build_index(full)
    out: dict[str, Any] = {"index": index, "queries": len(queries), "k": args.k,
                           "coverage": {}}
    shares: list[float | None] = [float(x) for x in args.coverage.split(",")]
    if args.no_build:
        shares.append(None)
    for share in shares:
        with tempfile.TemporaryDirectory(prefix="gq-coverage-") as tmp:
            src = full.index_dir
            conn = sqlite3.connect(src / "index.db")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            shutil.copy2(src / "index.db", Path(tmp) / "index.db")
            kept = _cut(Path(tmp) / "index.db", share, args.seed)
            if kept is None:
                out["coverage"][str(share)] = "not_reached"
                continue
            conn = sqlite3.connect(Path(tmp) / "index.db")
            embedded = {str(h) for (h,) in conn.execute(
                "SELECT hash FROM git_commits WHERE id IN "
                "(SELECT commit_id FROM commit_vectors)")}
            conn.close()
            ws = make_workspace(args.repo, tmp)
            searcher = HistorySearcher(ws)
            try:
                rows, facts = run_queries(searcher, queries, k=args.k, modes=MODES)
            finally:
                searcher.close()
        worse = {"with_vector": 0, "without_vector": 0}
        for q, row in zip(queries, rows, strict=True):
            lex, hyb = row["lexical"]["rank"], row["hybrid"]["rank"]
            if lex is not None and (hyb is None or hyb > lex):
                has_vector = any(_matches(h, r) for h in embedded for r in q.relevant)
                worse["with_vector" if has_vector else "without_vector"] += 1
        out["coverage"]["as_is" if share is None else str(share)] = {
            "commits_with_vectors": kept,
            "summary": summarise(rows, MODES, args.k),
            "hybrid_worse_than_lexical": worse,
            **facts,
        }
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
