"""Select the training pairs where vectors can add to fusion: the positive is not in BM25's top 10.

The s4-encoder model (trained on every pairs_v2 pair) gained semantic recall on commits that
BM25 already finds, so hybrid search gained nothing. This tool keeps every pair of a pairs_v2
file (``tools/commit_encoder/pairs_v2.py``) whose positive commit is *not* in the top
``--depth`` (10) of a BM25 search for the pair's query over its own repository's commit
documents as the index stores them (``doc_full``: title + message + diff side, one document per
commit), plus a seeded ``--keep-share`` (20 %) of the other pairs, so the model does not forget
what it already matches. The order of the input file is kept, so ``--max-pairs N`` of the
trainer takes the first N selected pairs.

BM25 here is SQLite FTS5 ``bm25`` with the query's words (``[A-Za-z0-9_]{2,}``, lowercased)
OR-ed, ties broken by first appearance in the file: the same search the trainer mines hard
negatives with (:func:`train_commit_encoder.mine_hard_negatives`). A query with no such word,
or whose positive is not in the top ``--depth``, counts as a miss.

``--against doc_full`` (default) searches the indexed document, which holds the query
itself (the title, or the message's first paragraph), so BM25 nearly always finds it: 63 of
the 15,688 pairs_v2 pairs are misses (s5-encoder, docs/embedding.md). ``--against document``
searches each pair's own shape of every commit (``doc_body`` for a title pair: message + diff
side without the title; ``doc_title`` for a body pair: title + diff side without the message),
the lexical evidence left once the query's own words are taken away: 2,521 of the first 7,000
pairs are misses there.

Every selected line gets ``bm25_rank`` (1-based, ``null`` = not in the top ``--depth``).
Deterministic (seed): the same input gives the same bytes. ``--limit N`` stops searching once
N pairs are selected (the selection of the pairs searched does not depend on where it stops).
A pairs file naming an evaluation repository (pallets/click, pallets/flask, psf/requests) is
refused. The s5-encoder selection::

    python tools/commit_encoder/select_bm25_misses.py --pairs /tmp/pairs_v2.jsonl \
        --out /tmp/pairs_v2_docmisses.jsonl \
        --against document --limit 3200
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sqlite3
import sys
from pathlib import Path

EVALUATION_REPOSITORIES = frozenset({"pallets/click", "pallets/flask", "psf/requests"})
_WORD = re.compile(r"[A-Za-z0-9_]{2,}")


def bm25_ranks(pairs: list[dict[str, str]], depth: int,
               start: int = 0, until: int = 0, field: str = "doc_full") -> list[int | None]:
    """1-based rank of each pair's positive commit among its repository's commit documents
    (``doc_full``, one per commit, first occurrence) for a BM25 OR-search of its query words;
    ``None`` when the positive is not in the first ``depth`` (or the query has no word).
    Only pairs ``start:until`` are searched (``until`` 0 = to the end; CPU), every commit
    is a document. ``field`` = ``document``: each pair is searched against its own shape of
    every commit (``doc_body`` for a title pair, ``doc_title`` for a body pair: the indexed
    document without the part the query was taken from)."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE d USING fts5(repo UNINDEXED, commit_id UNINDEXED, "
               "full, title, body)")
    seen: set[tuple[str, str]] = set()
    rows = []
    for i, p in enumerate(pairs):
        key = (p["repo"], p["commit"])
        if key not in seen:
            seen.add(key)
            rows.append((i, p["repo"], p["commit"], p["doc_full"], p["doc_title"],
                         p["doc_body"]))
    db.executemany("INSERT INTO d(rowid, repo, commit_id, full, title, body) "
                   "VALUES (?, ?, ?, ?, ?, ?)", rows)
    out: list[int | None] = []
    for p in pairs[start : until or None]:
        words = sorted({w.lower() for w in _WORD.findall(p["query"])})
        if not words:
            out.append(None)
            continue
        match = " OR ".join(f'"{w}"' for w in words)
        column = ("full" if field == "doc_full"
                  else "title" if p.get("mode") == "body" else "body")
        hits = db.execute(
            "SELECT commit_id FROM d WHERE d MATCH ? AND repo = ? ORDER BY bm25(d), rowid "
            "LIMIT ?", (f"{column} : ({match})", p["repo"], depth)).fetchall()
        rank = next((r for r, (c,) in enumerate(hits, 1) if c == p["commit"]), None)
        out.append(rank)
    return out


def select(pairs: list[dict[str, str]], ranks: list[int | None], depth: int,
           keep_share: float, seed: int) -> list[dict[str, object]]:
    """Pairs whose rank is ``None`` or > ``depth``, plus a seeded ``keep_share`` of the rest,
    in input order, each with ``bm25_rank`` added."""
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for p, rank in zip(pairs, ranks, strict=True):
        hit = rank is not None and rank <= depth
        draw = rng.random()  # one draw per pair, so the selection does not depend on ranks seen
        if hit and draw >= keep_share:
            continue
        out.append({**p, "bm25_rank": rank})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, required=True, help="pairs_v2 JSONL")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--keep-share", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--against", choices=("doc_full", "document"), default="doc_full",
                        help="search the indexed document (doc_full) or the pair's own shape")
    parser.add_argument("--limit", type=int, default=0,
                        help="stop once this many pairs are selected (0 = search every pair)")
    args = parser.parse_args(argv)
    pairs = [json.loads(line) for line in args.pairs.read_text("utf-8").splitlines() if line]
    bad = sorted({p["repo"] for p in pairs} & EVALUATION_REPOSITORIES)
    if bad:
        raise SystemExit(f"refused: {args.pairs} holds evaluation repositories {bad}")
    ranks: list[int | None] = []
    chosen: list[dict[str, object]] = []
    # search in chunks until --limit pairs are selected (each chunk's selection does not
    # depend on how far the search went: one seeded draw per pair, in file order)
    step = 500
    while len(ranks) < len(pairs) and (not args.limit or len(chosen) < args.limit):
        ranks += bm25_ranks(pairs, args.depth, len(ranks), len(ranks) + step, args.against)
        chosen = select(pairs[: len(ranks)], ranks, args.depth, args.keep_share, args.seed)
    if args.limit:
        chosen = chosen[: args.limit]
    pairs = pairs[: len(ranks)]
    args.out.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in chosen),
                        "utf-8")
    misses = sum(1 for r in ranks if r is None or r > args.depth)
    print(json.dumps({"pairs_searched": len(pairs), "misses": misses, "hits": len(pairs) - misses,
                      "selected": len(chosen),
                      "selected_misses": sum(1 for p in chosen if p["bm25_rank"] is None
                                             or p["bm25_rank"] > args.depth)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
