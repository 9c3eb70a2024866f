"""Issue 22, pseudo-relevance feedback from the vector side into the lexical side, end to
end: the whole hybrid search (``engine._fuse`` with the shape weights, ``rrf_k``, the lexical
guard and floor, then introduction ordering and the result pipeline), with a third RRF list
built from the first hits of the vectors (one process, same index, same queries).

Paraphrase questions share no word with the commit's title or message, so BM25 rarely finds
them; the first semantic hits' documents carry the identifiers and file names of the code
area the user means. Variants (``GRID``, fixed before any result was read; ``prf_choose.py``
holds the rule):

* ``rm3-[fused-]mM-tT-wW`` (a): the top ``M`` semantic hits (``fused``: the top ``M`` of the
  shipped hybrid fusion, a first pass) are the feedback documents. Their FTS5 documents
  (title, message, files_changed and diff columns, exactly as ``commit_fts`` indexes them:
  ``fts_values`` under the ``porter unicode61`` tokenizer) give term weights
  ``sum_d tf(w, d) / |d| * ln(N / df(w))`` (``df`` over the whole index). Excluded: the
  query's own terms, English stop words, terms shorter than 3 characters or all digits,
  terms in fewer than 2 commits (they only find the feedback document again) or in more
  than 10 % of all commits, and stems porter does not map to themselves (a quoted stem
  would search another term). The ``T`` best terms (ties by term) make one OR query, ranked
  by BM25 with ``BM25_WEIGHTS`` under the same filters, as deep as the lexical list; that
  ranking is a third RRF list of weight ``W`` (the lexical list weighs 1.0 for every shape).
* ``rm3-prose-...`` (b): the same, only for queries of the ``natural`` shape
  (``retrieval.fusion.query_shape``); other queries rank as shipped.
* ``files-[prose-]mM-fF-wW`` (c): the files touched by the top ``M`` semantic hits, each
  weighted ``count among the M * ln(N / commits touching it)``, the ``F`` best; the third
  list holds the commits touching any of them, by the sum of the weights of the files they
  touch, ties by their place in the shipped fusion (absent ones after, newest first).
* ``shipped`` (the engine as it ships) and ``empty`` (the third-list fusion with an empty
  third list: a harness check, must rank exactly as ``shipped``).

Usage::

    python benchmarks/eval_prf.py --repo PATH --queries FILE --index-dir DIR \\
        [--variants NAME,...] > REPORT.json

The index must already hold the document vectors (``eval_history.py --index-dir DIR``).
Lexical runs once (``lexical``); hybrid once per variant. Each variant also reports the
feedback's added CPU per query (``feedback_ms``: the term extraction, df lookups and the
extra BM25 query, mean and p50 over the queries where it ran). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sqlite3
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_history import load_queries, make_workspace, run_queries, summarise
from gitquarry.history.search import engine as engine_mod
from gitquarry.history.search.lexical import lexical_sql
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.retrieval.fusion import query_shape
from gitquarry.retrieval.tokenize import FTS5_TOKENIZE, index_diff_text, index_text
from gitquarry.store.compression import inflate_text

#: name -> (kind, source, m, t_or_f, weight, prose_only); fixed before any result was read
GRID: dict[str, tuple[str, str, int, int, float, bool]] = {
    "rm3-m3-t10-w0.5": ("rm3", "semantic", 3, 10, 0.5, False),
    "rm3-m3-t10-w0.25": ("rm3", "semantic", 3, 10, 0.25, False),
    "rm3-m5-t10-w0.5": ("rm3", "semantic", 5, 10, 0.5, False),
    "rm3-m2-t5-w0.5": ("rm3", "semantic", 2, 5, 0.5, False),
    "rm3-m3-t15-w0.5": ("rm3", "semantic", 3, 15, 0.5, False),
    "rm3-fused-m3-t10-w0.5": ("rm3", "fused", 3, 10, 0.5, False),
    "rm3-prose-m3-t10-w0.5": ("rm3", "semantic", 3, 10, 0.5, True),
    "rm3-prose-m3-t10-w1.0": ("rm3", "semantic", 3, 10, 1.0, True),
    "rm3-prose-fused-m3-t10-w0.5": ("rm3", "fused", 3, 10, 0.5, True),
    "files-m3-f3-w0.5": ("files", "semantic", 3, 3, 0.5, False),
    "files-m5-f5-w0.5": ("files", "semantic", 5, 5, 0.5, False),
    "files-prose-m3-f3-w0.5": ("files", "semantic", 3, 3, 0.5, True),
}

#: a small English stop-word list (what a question's glue words are)
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can did do does doing down during each few for from further had has
have having he her here hers him his how i if in into is it its itself just me more most my
no nor not now of off on once only or other our out over own same she should so some such
than that the their them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours
""".split())  # noqa: SIM905

#: the longest share of all commits a feedback term (or file) may occur in
MAX_DF_FRACTION = 0.10
MIN_DF = 2
MIN_TERM_CHARS = 3
_DIGITS = re.compile(r"^\d+$")

STATE: dict[str, Any] = {"variant": "shipped", "costs": []}


class Tokens:
    """FTS5's tokenizer (``FTS5_TOKENIZE``) on texts, through an in-memory FTS5 table and its
    ``fts5vocab`` instance view: the terms exactly as ``commit_fts`` indexes them."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS5_TOKENIZE}')")
        self.conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        self._idem: dict[str, bool] = {}

    def counts(self, texts: list[str]) -> list[Counter[str]]:
        """Per text: its terms with their counts."""
        self.conn.execute("DELETE FROM t")
        self.conn.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)",
                              list(enumerate(texts, start=1)))
        out: list[Counter[str]] = [Counter() for _ in texts]
        for term, doc in self.conn.execute("SELECT term, doc FROM v"):
            out[int(doc) - 1][term] += 1
        return out

    def idempotent(self, term: str) -> bool:
        """Whether the tokenizer maps ``term`` to itself (a quoted stem searches the stem)."""
        if term not in self._idem:
            got = self.counts([term])[0]
            self._idem[term] = list(got) == [term]
        return self._idem[term]


class Index:
    """What the feedback reads from the index once per run: N, df per term, commits per
    path."""

    def __init__(self, db: Path) -> None:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, commit_fts, row)")
        self.df = {t: int(d) for t, d in conn.execute("SELECT term, doc FROM temp.vocab")}
        self.n = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
        conn.close()


def feedback_terms(tokens: Tokens, index: Index, query: str, docs: list[tuple[str, ...]],
                   t: int) -> list[str]:
    """The ``t`` best feedback terms of ``docs`` (each the FTS texts of one commit) for
    ``query`` (module doc, variant a)."""
    own = set(tokens.counts([index_text(query)])[0])
    counts = tokens.counts([" ".join(d) for d in docs])
    weight: dict[str, float] = {}
    for c in counts:
        length = sum(c.values()) or 1
        for term, tf in c.items():
            weight[term] = weight.get(term, 0.0) + tf / length
    scored = []
    for term, w in weight.items():
        df = index.df.get(term, 0)
        if (term in own or term in STOP_WORDS or len(term) < MIN_TERM_CHARS
                or _DIGITS.match(term) or df < MIN_DF or df > MAX_DF_FRACTION * index.n
                or not tokens.idempotent(term)):
            continue
        scored.append((-w * math.log(index.n / df), term))
    scored.sort()
    return [term for _, term in scored[:t]]


def _docs(conn: sqlite3.Connection, ids: list[int]) -> list[tuple[str, ...]]:
    """The FTS texts (title, message, files, diff) of ``ids``, in that order."""
    if not ids:
        return []
    rows = {int(r[0]): r for r in conn.execute(
        "SELECT id, title, message, files_changed, delta_truncated FROM git_commits "
        f"WHERE id IN ({','.join('?' * len(ids))})", ids)}
    return [(index_text(rows[i][1]), index_text(rows[i][2]), index_text(rows[i][3]),
             index_diff_text(inflate_text(rows[i][4]))) for i in ids if i in rows]


def _bm25_or(search: Any, terms: list[str], limit: int) -> list[int]:
    """The OR query of ``terms`` ranked by BM25 under the search's filters (glob applied
    inside the query when materialised, else after it)."""
    if not terms:
        return []
    filters, glob = search.filters, search.glob
    _, params = filters.row_conditions
    inside = glob is not None and glob.materialized
    sql = lexical_sql(has_glob=inside, has_after=filters.after is not None,
                      has_before=filters.before is not None, has_merges="is_merge" in params)
    asked = limit * (4 if glob is not None and not inside else 1)
    args: dict[str, Any] = {"match": " OR ".join(f'"{w}"' for w in terms), "limit": asked}
    args.update(params)
    ids = [int(r[0]) for r in search.conn.execute(sql, args)]
    if glob is not None and not inside:
        keep = glob.keep(ids)
        ids = [i for i in ids if i in keep]
    return ids[:limit]


def _files_list(search: Any, top: list[int], f: int, fused_order: list[int], n: int,
                limit: int) -> list[int]:
    """Variant c's third list (module doc)."""
    conn = search.conn
    if not top:
        return []
    marks = ",".join("?" * len(top))
    touched = Counter(int(r[0]) for r in conn.execute(
        f"SELECT path_id FROM commit_paths WHERE commit_id IN ({marks})", top))
    scored = []
    for pid, count in touched.items():
        df = int(conn.execute("SELECT count(*) FROM commit_paths WHERE path_id = ?",
                              (pid,)).fetchone()[0])
        if df > MAX_DF_FRACTION * n:
            continue
        scored.append((-count * math.log(n / df), pid))
    scored.sort()
    chosen = {pid: -w for w, pid in scored[:f]}
    if not chosen:
        return []
    marks = ",".join("?" * len(chosen))
    score: dict[int, float] = {}
    for pid, cid in conn.execute(
            f"SELECT path_id, commit_id FROM commit_paths WHERE path_id IN ({marks})",
            list(chosen)):
        score[int(cid)] = score.get(int(cid), 0.0) + chosen[int(pid)]
    ids = list(score)
    if search.glob is not None:
        keep = search.glob.keep(ids)
        ids = [i for i in ids if i in keep]
    conditions, params = search.filters.row_conditions
    if conditions and ids:
        kept = {int(r[0]) for r in conn.execute(
            f"SELECT id FROM git_commits WHERE id IN ({','.join(str(i) for i in ids)}) AND "
            + " AND ".join(conditions), params)}
        ids = [i for i in ids if i in kept]
    place = {cid: n for n, cid in enumerate(fused_order)}
    times = {int(r[0]): int(r[1]) for r in conn.execute(
        f"SELECT id, timestamp FROM git_commits WHERE id IN ({','.join(str(i) for i in ids)})")
    } if ids else {}
    ids.sort(key=lambda c: (-score[c], place.get(c, len(place)), -times.get(c, 0), c))
    return ids[:limit]


_ORIGINAL_FUSE = engine_mod._HistorySearch._fuse
_ORIGINAL_RRF = engine_mod.rrf_fuse


def patched_fuse(self: Any, lexical: Any, semantic_hits: Any, effective: str,
                 embedded_fraction: float) -> Any:
    """``engine._fuse`` with a third RRF list (the variant's feedback) inserted where the
    shipped fusion calls ``rrf_fuse``, so the guard and floor run on it exactly as shipped."""
    variant = STATE["variant"]
    if variant == "shipped" or effective != "hybrid":
        return _ORIGINAL_FUSE(self, lexical, semantic_hits, effective, embedded_fraction)
    if embedded_fraction < 1:
        raise SystemExit("the feedback variants need every commit embedded")
    limit = max(len(lexical), len(semantic_hits))
    extra: list[int] = []
    weight = 0.0
    if variant != "empty":
        kind, source, m, tf, weight, prose = GRID[variant]
        if not prose or query_shape(self.ranked_query) == "natural":
            c0 = time.process_time()
            first = None
            if source == "fused" or kind == "files":
                first = _ORIGINAL_FUSE(self, lexical, semantic_hits, effective,
                                       embedded_fraction)[2]
            top = ([cid for cid, _ in first[:m]] if source == "fused" and first is not None
                   else [cid for cid, _ in semantic_hits[:m]])
            if kind == "rm3":
                terms = feedback_terms(STATE["tokens"], STATE["index"], self.ranked_query,
                                       _docs(self.conn, top), tf)
                extra = _bm25_or(self, terms, limit)
                STATE["terms"].append(terms)
            else:
                assert first is not None
                extra = _files_list(self, top, tf, [cid for cid, _ in first],
                                    STATE["index"].n, limit)
            STATE["costs"].append(time.process_time() - c0)

    def rrf_with_extra(rankings: Any, weights: Any, k: int = 60) -> Any:
        return _ORIGINAL_RRF([*rankings, extra], [*weights, weight], k=k)

    engine_mod.rrf_fuse = rrf_with_extra
    try:
        rankings, weights, fused = _ORIGINAL_FUSE(self, lexical, semantic_hits, effective,
                                                  embedded_fraction)
    finally:
        engine_mod.rrf_fuse = _ORIGINAL_RRF
    return [*rankings, extra], [*weights, weight], fused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--queries", type=Path, required=True)
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--variants", default=",".join(["shipped", "empty", *GRID]))
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args(argv)
    ws = make_workspace(args.repo, args.index_dir)
    STATE["tokens"] = Tokens()
    STATE["index"] = Index(Path(args.index_dir).resolve() / "index.db")
    engine_mod._HistorySearch._fuse = patched_fuse
    queries = load_queries(args.queries)
    searcher = HistorySearcher(ws)
    k = args.k
    report: dict[str, Any] = {"repo": str(args.repo), "queries": len(queries), "k": k,
                              "grid": {n: list(v) for n, v in GRID.items()},
                              "loadavg": Path("/proc/loadavg").read_text().split()[:3],
                              "variants": {}}
    try:
        STATE["variant"] = "shipped"
        rows_l, _ = run_queries(searcher, queries, k=k, modes=["lexical"])
        lexical = summarise(rows_l, ["lexical"], k)["lexical"]
        report["lexical"] = {"metrics": lexical, "ranks": [r["lexical"]["rank"] for r in rows_l]}
        for name in [v for v in args.variants.split(",") if v]:
            if name not in GRID and name not in ("shipped", "empty"):
                parser.error(f"unknown variant {name}")
            STATE["variant"], STATE["costs"], STATE["terms"] = name, [], []
            rows_q, facts = run_queries(searcher, queries, k=k, modes=["hybrid"])
            metrics = summarise(rows_q, ["hybrid"], k)
            costs = sorted(STATE["costs"])
            report["variants"][name] = {
                "metrics": metrics, "latency_ms": facts["latency_ms"],
                "hybrid_at_least_lexical": {
                    kind: metrics["hybrid"][kind][f"recall@{k}"] >= v[f"recall@{k}"]
                    for kind, v in lexical.items()},
                "feedback_ms": {
                    "runs": len(costs),
                    "mean": round(1000 * sum(costs) / len(costs), 2) if costs else None,
                    "p50": round(1000 * costs[len(costs) // 2], 2) if costs else None},
                "ranks": [r["hybrid"]["rank"] for r in rows_q],
                "recall": [r["hybrid"]["recall"] for r in rows_q],
                "terms_sample": STATE["terms"][:5]}
            print(f"{name:28s} " + " ".join(
                f"{kind}:{v.get(f'recall@{k}')}/{v.get(f'mrr@{k}')}"
                for kind, v in metrics["hybrid"].items()), file=sys.stderr)
    finally:
        searcher.close()
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
