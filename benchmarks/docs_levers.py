"""Docs-relevance levers measured on the dev sets, in one process per set (issue 22 lever 1).

Usage::

    python benchmarks/docs_levers.py --configs LEVERS.json \\
        --set click=/tmp/click_docs:benchmarks/relevance/docs_queries.jsonl:/tmp/cache/click \\
        --set flask=/tmp/flask_docs:benchmarks/relevance/flask_docs_queries.jsonl:/tmp/c/flask \\
        [--modes fulltext,hybrid] [--out RESULTS.jsonl] [--ranks]

``LEVERS.json`` is a list of objects, each one configuration (every key optional)::

    {"name": "...",
     "weights": [1, 2, 3, 1],          # lexical.WEIGHTS: path, title, heading, body
     "section_k": 10,                  # lexical.SECTION_RRF_K
     "section_mode": "rrf",            # full-text section scoring, see SECTION_MODES
     "hybrid_sections": "first",       # hybrid section vote, see HYBRID_SECTION_MODES
     "embed": "product",               # the text embedded per chunk (_variant_text)
     "section_vectors": false,         # one vector per section (its chunks' text together)
     "extra": [["headonly", false, 0.5]],  # more vectors per chunk: variant, per section, weight
     "combine": "sum",                 # the extra cosines added (times weight) or "max"
     "fusion": "rrf",                  # or "score": weighted sum of normalised scores
     "norm": "minmax",                 # score fusion's normalisation, or "max"
     "set": ["docs.rrf_k=10", ...]}    # config overrides (eval_docs.apply_settings)

The product code is patched in this process only (module attributes); nothing here changes
chunk boundaries, the stored sets or the cache. ``embed`` variants other than ``product``
embed every chunk again in-process with the configured model (vectors kept in memory, keyed
by variant) and replace the set's matrix for the search; ``product`` uses the stored vectors
(and, with no ``extra``, the product's ranking by chunk plus heading-path vectors, ``[docs]
heading_weight``; ``"set": ["docs.heading_weight=0"]`` is the chunk vectors alone, the
configuration the ``extra`` levers were measured against).
Query vectors are computed once per query text. Scoring is ``eval_docs.relevant``/``metrics``.
Prints one JSON line per configuration (R@3, R@10, MRR@10 per set and mode, with ``--ranks``
the ranks too).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from eval_docs import apply_settings, metrics, relevant  # noqa: E402
from gitquarry.config import Config  # noqa: E402
from gitquarry.repo_docs import lexical, search  # noqa: E402
from gitquarry.repo_docs.api import RepoDocsService  # noqa: E402
from gitquarry.repo_docs.chunker import normalise_text  # noqa: E402
from gitquarry.repo_docs.lexical import LexicalIndex, Row, section_key  # noqa: E402
from gitquarry.repo_docs.registry import Registry, Selector  # noqa: E402
from gitquarry.repo_docs.search import SemanticSide  # noqa: E402
from gitquarry.retrieval import vectors as vectors_module  # noqa: E402
from gitquarry.retrieval.fts import fts5_match_expression  # noqa: E402
from gitquarry.retrieval.fusion import rrf_fuse  # noqa: E402

_PRODUCT_SEARCH = LexicalIndex.search
_PRODUCT_WEIGHTS = lexical.WEIGHTS
_PRODUCT_SECTION_K = lexical.SECTION_RRF_K
_PRODUCT_FUSE_SECTIONS = search.fuse_sections


# ------------------------------------------------------------------ full-text section modes

def _chunk_scores(index: LexicalIndex, expression: str) -> dict[int, float]:
    """-bm25 of every matching chunk (0-based row index)."""
    return dict(index._ranked("docs", expression, len(index.rows) + 1))


def _section_of(index: LexicalIndex) -> dict[int, int]:
    out: dict[int, int] = {}
    for sid, members in enumerate(index.sections):
        for m in members:
            out[m] = sid
    return out


def _aggregate_search(how: str) -> Callable[..., list[tuple[Row, float]]]:
    """A ``LexicalIndex.search`` that ranks sections by an aggregate of their chunks' BM25
    (``max``, ``sum``, ``sum2``: the best two, ``sec``: the section table alone, ``chunk``:
    the chunk table alone, ``secmax``: RRF of the section table and the max-aggregate) and
    cites each section's best chunk, then the section's other chunks by score."""

    def run(self: LexicalIndex, query: str, limit: int) -> list[tuple[Row, float]]:
        expression = fts5_match_expression(query, "OR")
        if not expression:
            return []
        scores = _chunk_scores(self, expression)
        if how == "chunk":
            ordered = sorted(scores.items(), key=lambda t: (-t[1], t[0]))[:limit]
            return [(self.rows[i], s) for i, s in ordered]
        sec_of = getattr(self, "_sec_of", None)
        if sec_of is None:
            sec_of = self._sec_of = _section_of(self)  # type: ignore[attr-defined]
        per: dict[int, list[float]] = {}
        for i, s in scores.items():
            per.setdefault(sec_of[i], []).append(s)
        agg: dict[int, float] = {}
        for sid, vals in per.items():
            vals.sort(reverse=True)
            if how == "max" or how == "secmax":
                agg[sid] = vals[0]
            elif how == "sum":
                agg[sid] = sum(vals)
            elif how == "sum2":
                agg[sid] = sum(vals[:2])
            elif how == "sqrtn":
                agg[sid] = sum(vals) / math.sqrt(len(vals))
        if how in ("sec", "secmax"):
            sec = self._ranked("sections", expression, len(self.sections) + 1)
            if how == "sec":
                agg = dict(sec)
            else:
                k = lexical.SECTION_RRF_K
                by_max = sorted(agg, key=lambda s: (-agg[s], s))
                fused: dict[int, float] = {}
                for r, sid in enumerate(by_max):
                    fused[sid] = fused.get(sid, 0.0) + 1 / (k + r + 1)
                for r, (sid, _s) in enumerate(sec):
                    fused[sid] = fused.get(sid, 0.0) + 1 / (k + r + 1)
                agg = fused
        order = sorted(agg, key=lambda s: (-agg[s], s))
        out: list[tuple[Row, float]] = []
        for sid in order:
            members = sorted((m for m in self.sections[sid] if m in scores),
                             key=lambda m: (-scores[m], m))
            if not members:
                members = [self.sections[sid][0]]
            out.extend((self.rows[m], scores.get(m, 0.0)) for m in members)
            if len(out) >= limit:
                break
        return out[:limit]

    return run


SECTION_MODES = {"rrf": _PRODUCT_SEARCH, **{m: _aggregate_search(m) for m in (
    "max", "sum", "sum2", "sqrtn", "sec", "chunk", "secmax")}}


# ------------------------------------------------------------------ hybrid section vote

def _fuse_sections_sum(fused: list[tuple[str, float]], rankings: list[list[str]],
                       weights: list[float], rrf_k: int, rows: dict[str, Row], *,
                       embedded: set[str] | None = None) -> list[tuple[str, float]]:
    """Like ``search.fuse_sections`` but a section's vote in each ranking is the sum of its
    chunks' RRF terms (not only its best chunk's)."""
    scores: dict[object, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for r, c in enumerate(ranking, start=1):
            key = section_key(rows[c])
            scores[key] = scores.get(key, 0.0) + w / (rrf_k + r)
    best: dict[object, str] = {}
    for chunk, _s in fused:
        best.setdefault(section_key(rows[chunk]), chunk)
    order = sorted(scores, key=lambda s: -scores[s])
    out = [(best[s], scores[s]) for s in order if s in best]
    used = {c for c, _s in out}
    floor = out[-1][1] if out else 0.0
    for chunk, score in fused:
        if chunk not in used:
            floor = min(floor, score)
            out.append((chunk, floor))
    return out


def _fuse_sections_none(fused: list[tuple[str, float]], rankings: list[list[str]],
                        weights: list[float], rrf_k: int, rows: dict[str, Row], *,
                        embedded: set[str] | None = None) -> list[tuple[str, float]]:
    """The chunk-level RRF alone (no section vote)."""
    return fused


HYBRID_SECTION_MODES = {"first": _PRODUCT_FUSE_SECTIONS, "sum": _fuse_sections_sum,
                        "none": _fuse_sections_none}


# ------------------------------------------------------------------ score fusion

#: the current query's scores: ``lex`` chunk id -> -bm25, ``sem`` chunk id -> cosine,
#: ``section`` chunk id -> section key; ``fusion`` the configured fusion
STATE: dict[str, Any] = {"lex": {}, "sem": {}, "section": {}, "fusion": "rrf"}


def _recording(search_fn: Callable[..., list[tuple[Row, float]]]) -> Callable[..., Any]:
    def run(self: LexicalIndex, query: str, limit: int) -> list[tuple[Row, float]]:
        out = search_fn(self, query, limit)
        STATE["lex"] = {row.chunk_id: s for row, s in out}
        if not STATE["section"]:
            STATE["section"] = {row.chunk_id: section_key(row) for row in self.rows}
        return out
    return run


def _normalised(keys: list[Any], table: dict[Any, float]) -> dict[Any, float]:
    """Min-max over the ranking's own scores (``STATE['norm']`` ``max``: divide by the best)."""
    vals = [table[k] for k in keys if k in table]
    if not vals:
        return {}
    hi, lo = max(vals), min(vals)
    if STATE.get("norm") == "max":
        return {k: table[k] / hi if hi > 0 else 0.0 for k in keys if k in table}
    span = hi - lo or 1.0
    return {k: (table[k] - lo) / span for k in keys if k in table}


def _fuse(rankings: Any, weights: Any = None, k: int = 60) -> list[tuple[Any, float]]:
    """``retrieval.fusion.rrf_fuse`` (``STATE['fusion']`` ``rrf``) or a weighted sum of the
    rankings' normalised scores (``score``); a key absent from a ranking scores 0 there.
    Section keys take the best score of their chunks."""
    if STATE["fusion"] == "rrf" or len(rankings) != 2:
        return rrf_fuse(rankings, weights, k=k)
    tables = []
    for name in ("lex", "sem"):
        table: dict[Any, float] = dict(STATE[name])
        if rankings[0] and not isinstance(rankings[0][0], str):  # section keys
            by_section: dict[Any, float] = {}
            for chunk, s in STATE[name].items():
                key = STATE["section"].get(chunk)
                by_section[key] = max(s, by_section.get(key, float("-inf")))
            table = by_section
        tables.append(table)
    w = list(weights) if weights is not None else [1.0, 1.0]
    scores: dict[Any, float] = {}
    order: dict[Any, int] = {}
    for ranking, table, weight in zip(rankings, tables, w, strict=True):
        norm = _normalised(list(ranking), table)
        for key in ranking:
            order.setdefault(key, len(order))
            scores[key] = scores.get(key, 0.0) + weight * norm.get(key, 0.0)
    return sorted(scores.items(), key=lambda t: (-t[1], order[t[0]]))


# ------------------------------------------------------------------ embedded text variants

def _variant_text(variant: str, row: Row, body: str, title: str) -> str:
    """The text embedded for one chunk under ``variant``. ``product``'s text is
    ``repo_docs.chunker.embedding_input`` (path, heading path, blank line, body)."""
    heading = " > ".join(row.heading_path)
    if variant in ("product", "recomputed"):  # recomputed: the product's text embedded here
        return f"{row.path}\n{heading}\n\n{body}" if heading else f"{row.path}\n\n{body}"
    if variant == "nopath":
        return f"{heading}\n\n{body}" if heading else body
    if variant == "bodyonly":
        return body
    if variant == "heading2":  # the heading path twice: more weight in the mean pooling
        return f"{heading}\n{heading}\n\n{body}" if heading else body
    if variant == "leaf":  # title and the section's own heading only
        leaf = row.heading_path[-1] if row.heading_path else ""
        head = f"{title}: {leaf}" if title and leaf and leaf != title else (leaf or title)
        return f"{head}\n\n{body}" if head else body
    if variant == "headonly":  # the heading path alone (the document title when empty)
        return heading or title or row.path
    if variant == "titled":  # the product's, the document title standing in for no heading
        head = heading or title
        return f"{row.path}\n{head}\n\n{body}" if head else f"{row.path}\n\n{body}"
    raise ValueError(f"unknown embed variant {variant!r}")


class Vectors:
    """Chunk vectors per embed variant, computed once per (set, variant)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.cache: dict[str, tuple[list[str], np.ndarray]] = {}
        self._blobs: dict[str, bytes] = {}

    def blob(self, oid: str) -> bytes:
        if oid not in self._blobs:
            self._blobs[oid] = subprocess.run(
                ["git", "-C", str(self.repo), "cat-file", "blob", oid], check=True,
                capture_output=True).stdout
        return self._blobs[oid]

    def get(self, variant: str, index: LexicalIndex, embedder: Any,
            section: bool = False) -> tuple[list[str], np.ndarray]:
        key = variant + ("+section" if section else "")
        if key in self.cache:
            return self.cache[key]
        titles: dict[str, str] = {}
        for row in index.rows:
            if row.heading_path:
                titles.setdefault(row.path, row.heading_path[0])
        ids: list[str] = []
        texts: list[str] = []
        if section:  # one text per section (its chunks together), every chunk gets it
            for members in index.sections:
                first = index.rows[members[0]]
                data = self.blob(first.blob_oid)
                last = index.rows[members[-1]]
                body = normalise_text(data[first.byte_start : last.byte_end].decode(
                    "utf-8", "replace"))
                text = _variant_text(variant, first, body, titles.get(first.path, ""))
                for m in members:
                    ids.append(index.rows[m].chunk_id)
                    texts.append(text)
        else:
            for row in index.rows:
                data = self.blob(row.blob_oid)
                body = normalise_text(data[row.byte_start : row.byte_end].decode(
                    "utf-8", "replace"))
                ids.append(row.chunk_id)
                texts.append(_variant_text(variant, row, body, titles.get(row.path, "")))
        unique = list(dict.fromkeys(texts))
        vecs = embedder.embed(unique)
        at = {t: i for i, t in enumerate(unique)}
        matrix = np.stack([vecs[at[t]] for t in texts]).astype(np.float32)
        self.cache[key] = (ids, matrix)
        return self.cache[key]


# ------------------------------------------------------------------ more than one vector

_PRODUCT_COSINE = vectors_module.cosine_top_k


def _cosine_top_k(matrix: np.ndarray, query: np.ndarray, k: int, *,
                  mask: np.ndarray | None = None) -> list[tuple[int, float]]:
    """``retrieval.vectors.cosine_top_k`` over a combined similarity: the matrix's cosine
    with each ``STATE['extra']`` matrix's (same rows) added times its weight (``sum``) or
    the best of them (``max``)."""
    extra = STATE.get("extra") or []
    if not extra:
        return _PRODUCT_COSINE(matrix, query, k, mask=mask)
    q = np.asarray(query, dtype=np.float32)
    sims = matrix @ q
    for other, weight in extra:
        more = (other @ q) * weight
        sims = np.maximum(sims, more) if STATE.get("combine") == "max" else sims + more
    order = sorted(range(len(sims)), key=lambda j: (-float(sims[j]), j))[:k]
    return [(j, float(sims[j])) for j in order]


# ------------------------------------------------------------------ driver

def run_set(name: str, repo: Path, queries: list[dict[str, Any]], cache_dir: Path,
            configs: list[dict[str, Any]], modes: list[str], ranks_out: bool,
            results: dict[str, dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Config().replaced(embedding={"provider": "minilm-onnx"},
                                 indexing={"index_dir": str(cache_dir)})
        service = RepoDocsService(base, Registry(Path(tmp) / "registry.json"))
        try:
            service.register("eval/docs", repo)
            sel = Selector("eval/docs")
            service.index(sel)
            service.search(sel, "warm up", mode="hybrid", limit=10)
            embedder = service._embedder
            assert embedder is not None
            qcache: dict[str, np.ndarray] = {}
            product_semantic = service._semantic
            vectors = Vectors(repo)
            for cfg in configs:
                lexical.WEIGHTS = tuple(cfg.get("weights", _PRODUCT_WEIGHTS))
                lexical.SECTION_RRF_K = cfg.get("section_k", _PRODUCT_SECTION_K)
                LexicalIndex.search = _recording(SECTION_MODES[cfg.get("section_mode", "rrf")])
                STATE["fusion"] = cfg.get("fusion", "rrf")
                STATE["norm"] = cfg.get("norm", "minmax")
                search.rrf_fuse = _fuse
                vectors_module.cosine_top_k = _cosine_top_k
                search.fuse_sections = HYBRID_SECTION_MODES[cfg.get("hybrid_sections",
                                                                    "first")]
                service.config = apply_settings(base, cfg.get("set", []))
                variant = cfg.get("embed", "product")
                section_vec = bool(cfg.get("section_vectors", False))

                def semantic(resolved: Any, cache: Any, warnings: Any, response: Any,
                             variant: str = variant,
                             section_vec: bool = section_vec,
                             cfg: dict[str, Any] = cfg) -> SemanticSide | None:
                    side = product_semantic(resolved, cache, warnings, response)
                    if side is None:
                        return None
                    index = next(iter(service.lexical._items.values()))
                    if variant != "product" or section_vec:
                        ids, matrix = vectors.get(variant, index, embedder, section_vec)
                    else:
                        ids, matrix = side.chunk_ids, side.matrix
                    extra = []
                    for v, sec, weight in cfg.get("extra", []):
                        other_ids, other = vectors.get(v, index, embedder, sec)
                        at = {c: i for i, c in enumerate(other_ids)}
                        extra.append((other[[at[c] for c in ids]], weight))
                    STATE["extra"] = extra
                    STATE["combine"] = cfg.get("combine", "sum")

                    def embed_query(text: str, ids: list[str] = ids,
                                    matrix: np.ndarray = matrix) -> np.ndarray:
                        if text not in qcache:
                            qcache[text] = embedder.embed([text])[0]
                        STATE["sem"] = dict(zip(ids, (matrix @ qcache[text]).tolist(),
                                                strict=True))
                        return qcache[text]

                    # the product's own ranking (chunk + heading vectors, ``[docs]
                    # heading_weight``) only where this configuration keeps the product's
                    # vectors and adds none: an ``extra`` lever is added to chunk vectors
                    keep = variant == "product" and not section_vec and not extra
                    return SemanticSide(ids, matrix, embed_query,
                                        side.ranking if keep else None)

                service._semantic = semantic  # type: ignore[method-assign]
                line = results.setdefault(cfg.get("name", json.dumps(cfg)), {"cfg": cfg})
                for mode in modes:
                    ranks: list[int | None] = []
                    for q in queries:
                        r = service.search(sel, q["query"], mode=mode, limit=10)
                        if mode == "hybrid":
                            assert r["effective_mode"] == "hybrid", r["warnings"]
                        ranks.append(next((h["rank"] for h in r["hits"] if relevant(h, q)),
                                          None))
                    m = metrics(ranks)
                    line[f"{name}.{mode}"] = [m["recall@3"], m["recall@10"], m["mrr@10"]]
                    if ranks_out:
                        line[f"{name}.{mode}.ranks"] = ranks
                    print(json.dumps({"set": name, "mode": mode, "cfg": line["cfg"],
                                      "metrics": line[f"{name}.{mode}"]}),
                          file=sys.stderr, flush=True)
        finally:
            LexicalIndex.search = _PRODUCT_SEARCH
            lexical.WEIGHTS, lexical.SECTION_RRF_K = _PRODUCT_WEIGHTS, _PRODUCT_SECTION_K
            search.fuse_sections = _PRODUCT_FUSE_SECTIONS
            search.rrf_fuse = rrf_fuse
            vectors_module.cosine_top_k = _PRODUCT_COSINE
            STATE["section"] = {}
            service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", required=True, help="a JSON file or inline JSON list")
    parser.add_argument("--set", action="append", required=True, metavar="NAME=REPO:Q:CACHE")
    parser.add_argument("--modes", default="fulltext,hybrid")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--ranks", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("GITQUARRY_LOG", "error")
    raw = args.configs
    configs = json.loads(Path(raw).read_text() if not raw.lstrip().startswith("[") else raw)
    results: dict[str, dict[str, Any]] = {}
    for item in args.set:
        name, _, spec = item.partition("=")
        repo, qfile, cache = spec.split(":")
        queries = [json.loads(x) for x in Path(qfile).read_text().splitlines() if x]
        run_set(name, Path(repo).resolve(), queries, Path(cache), configs,
                args.modes.split(","), args.ranks, results)
        print(json.dumps({"set done": name, "load": round(os.getloadavg()[0], 1)}),
              file=sys.stderr, flush=True)
    for line in results.values():
        line["load"] = round(os.getloadavg()[0], 1)
        text = json.dumps(line)
        print(text, flush=True)
        if args.out:
            with args.out.open("a") as f:
                f.write(text + "\n")


if __name__ == "__main__":
    main()
