"""Relevance evaluation of ``search_git_history``: Recall@k and MRR@k for lexical, semantic and
hybrid search over any repository (or workspace of repositories).

Usage::

    python benchmarks/eval_history.py --repo PATH --queries FILE [--k 10] [--index-dir auto]
        [--verbose] [--no-embed] [--modes lexical,semantic,hybrid]
        [--rrf-k N] [--lexical-weight W] [--semantic-weight W] [--model DIR]

``FILE`` is JSON Lines, one query per line::

    {"query": "...", "relevant": ["<hash or unique prefix>", "<hash>=<hash>", ...],
     "files_glob": null, "after": null, "before": null, "kind": "paraphrase"}

``after``/``before`` take Unix seconds or ISO-8601 (as ``gitquarry history`` does); ``kind``
is optional (reported per kind as well as overall); other keys are ignored. A ``relevant``
entry may list alternatives joined by ``=`` (one change recorded as several commits, e.g. a
commit and the pull-request merge that brought only it in): finding any of them finds it.

The repository is indexed first, with embeddings, exactly as ``gitquarry index`` does
(``index_workspace`` + ``index_extras``). ``--index-dir auto`` (the default) builds the index
in a temporary directory that is removed afterwards, so nothing is written into the
repository; ``--index-dir DIR`` keeps it in DIR and reuses it (incremental) on the next run;
``--index-dir workspace`` uses the workspace's configured index (``.gitquarry/``).

Per query and mode: rank = 1-based position of the first relevant commit in the top k (None
if absent); RR = 1/rank (0 if absent); recall = relevant commits found in the top k divided by
relevant commits. Recall@k and MRR@k are their means. Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitquarry.config import load_config
from gitquarry.history.index import document
from gitquarry.history.index.indexer import index_workspace
from gitquarry.history.index.progress import NullProgress
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.indexing import index_extras
from gitquarry.retrieval.filters import parse_time
from gitquarry.retrieval.fusion import (
    ShapeWeights,
    introduction_subject,
    rrf_fuse,
    score_fuse,
)
from gitquarry.workspace import Workspace

MODES = ("lexical", "semantic", "hybrid")


@dataclass
class Query:
    query: str
    relevant: list[str]
    files_glob: str | None = None
    after: int | None = None
    before: int | None = None
    kind: str | None = None
    line: int = 0
    #: words for git's own recipe on "introduced" questions (git log --reverse --grep ...)
    git_grep: list[str] | None = None


def load_queries(path: Path) -> list[Query]:
    """Read the JSONL query file. Blank lines and lines starting with ``#`` are skipped.

    :raises ValueError: a line is not valid JSON or lacks ``query``/``relevant``.
    """
    queries = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{n}: not valid JSON: {exc}") from exc
        if not isinstance(obj.get("query"), str) or not isinstance(obj.get("relevant"), list):
            raise ValueError(f"{path}:{n}: needs a string 'query' and a list 'relevant'")
        if not obj["relevant"]:
            raise ValueError(f"{path}:{n}: 'relevant' is empty")
        queries.append(
            Query(
                query=obj["query"],
                relevant=[str(h).lower() for h in obj["relevant"]],
                files_glob=obj.get("files_glob") or None,
                after=parse_time(obj.get("after")),
                before=parse_time(obj.get("before")),
                kind=obj.get("kind"),
                line=n,
                git_grep=obj.get("git_grep"),
            )
        )
    return queries


def make_workspace(repo: Path, index_dir: str | Path | None, *,
                   embedding: tuple[str, str] | None = None) -> Workspace:
    """The workspace for ``repo`` with its index in ``index_dir`` (None: as configured);
    ``embedding`` = (provider, model) overrides ``[embedding]`` (e.g. ("onnx", DIR) for the
    accurate profile)."""
    root = repo.expanduser().resolve()
    if not root.is_dir():
        raise SystemExit(f"error: {repo} is not a directory")
    config = load_config(root)
    if index_dir is not None:
        config = config.replaced(
            indexing={"index_dir": str(Path(index_dir).expanduser().resolve())})
    if embedding is not None:
        config = config.replaced(embedding={"provider": embedding[0], "model": embedding[1]})
    return Workspace(root=root, config=config)


def build_index(workspace: Workspace, *, embed: bool = True) -> dict[str, Any]:
    """Index the workspace like ``gitquarry index`` (history, then embeddings)."""
    started = time.monotonic()
    with workspace.write_lock():
        store = workspace.open_store(create=True)
        try:
            report = index_workspace(workspace.root, store, workspace.config,
                                     progress=NullProgress())
            t_lex = time.monotonic() - started
            extras = index_extras(workspace, store, progress=NullProgress(), embed=embed)
        finally:
            store.close()
    failed = [f"{r.path}: {r.error}" for r in report.failed]
    if failed:
        raise SystemExit("error: indexing failed: " + "; ".join(failed))
    return {
        "total_commits": report.total_commits,
        "repositories": len(report.repositories),
        "lexical_seconds": round(t_lex, 2),
        "total_seconds": round(time.monotonic() - started, 2),
        "embeddings": extras.embeddings,
    }


def _matches(hash_: str, relevant: str) -> bool:
    """``relevant`` is a hash (or unique prefix), or alternatives joined by ``=`` (the same
    change recorded twice: a commit and the pull-request merge that brought only it in, or a
    cherry-pick); any of them matches."""
    return any(hash_.lower().startswith(alt) for alt in relevant.split("="))


def score_results(hashes: Sequence[str], relevant: Sequence[str]) -> tuple[int | None, float]:
    """(1-based rank of the first relevant hit or None, recall) for one ranked hash list."""
    rank = next(
        (n for n, h in enumerate(hashes, start=1) if any(_matches(h, r) for r in relevant)),
        None,
    )
    found = sum(1 for r in relevant if any(_matches(h, r) for h in hashes))
    return rank, found / len(relevant)


def _summary(rows: list[dict[str, Any]], mode: str, k: int) -> dict[str, Any]:
    n = len(rows)
    if not n:
        return {"n": 0}
    ranks = [r[mode]["rank"] for r in rows]
    return {
        "n": n,
        f"recall@{k}": round(sum(r[mode]["recall"] for r in rows) / n, 4),
        f"mrr@{k}": round(sum(1 / x for x in ranks if x) / n, 4),
        "hits@1": sum(1 for x in ranks if x == 1),
        "missed": sum(1 for x in ranks if x is None),
    }


def _pct(values: list[float], pct: int) -> float | None:
    """The ``pct``-th percentile of ``values`` (seconds) in ms, nearest rank; None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))], 1)


def run_queries(
    searcher: HistorySearcher, queries: list[Query], *, k: int, modes: Sequence[str],
    merges: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-query results for every mode, plus facts about the run (effective modes, time)."""
    rows: list[dict[str, Any]] = []
    degraded: dict[str, int] = {m: 0 for m in modes}
    seconds: dict[str, float] = {m: 0.0 for m in modes}
    walls: dict[str, list[float]] = {m: [] for m in modes}
    cpus: dict[str, list[float]] = {m: [] for m in modes}
    for q in queries:
        row: dict[str, Any] = {"query": q.query, "kind": q.kind, "line": q.line}
        for mode in modes:
            t0, c0 = time.monotonic(), time.process_time()
            response = searcher.search(
                q.query, top_n=k, files_glob=q.files_glob, after=q.after, before=q.before,
                mode=mode, merges=merges,
            )
            wall, cpu = time.monotonic() - t0, time.process_time() - c0
            seconds[mode] += wall
            walls[mode].append(wall)
            cpus[mode].append(cpu)
            if response.effective_mode != mode:
                degraded[mode] += 1
            hashes = [r.hash for r in response.results]
            rank, recall = score_results(hashes, q.relevant)
            row[mode] = {"rank": rank, "recall": round(recall, 4),
                         "top": hashes[0][:10] if hashes else None}
        rows.append(row)
    facts = {
        "degraded_to_lexical": degraded,
        "mean_query_ms": {m: round(1000 * s / max(len(queries), 1), 1)
                          for m, s in seconds.items()},
        # per query, process CPU (all threads) and wall, ms; the first query of a mode
        # loads the model and the vector matrix, so p50/p95 leave it out
        "latency_ms": {m: {"cpu_p50": _pct(cpus[m][1:], 50), "cpu_p95": _pct(cpus[m][1:], 95),
                           "wall_p50": _pct(walls[m][1:], 50),
                           "wall_p95": _pct(walls[m][1:], 95)} for m in modes},
    }
    return rows, facts


def summarise(rows: list[dict[str, Any]], modes: Sequence[str], k: int) -> dict[str, Any]:
    kinds = sorted({r["kind"] for r in rows if r["kind"]})
    out: dict[str, Any] = {}
    for mode in modes:
        out[mode] = {"all": _summary(rows, mode, k)}
        for kind in kinds:
            out[mode][kind] = _summary([r for r in rows if r["kind"] == kind], mode, k)
    return out


# --------------------------------------------------------------------------- fusion study

#: candidates each ranker contributes to fusion (what search_git_history uses for top_n 10)
STUDY_CANDIDATES = 50

Ranked = list[tuple[str, float]]


def _rrf(k: int, weights: tuple[float, float]) -> Callable[[str, Ranked, Ranked], list[str]]:
    def fuse(query: str, lex: Ranked, sem: Ranked) -> list[str]:
        return [h for h, _ in rrf_fuse([[h for h, _ in lex], [h for h, _ in sem]],
                                       list(weights), k=k)]
    return fuse


def _shape_rrf(k: int, shapes: ShapeWeights) -> Callable[[str, Ranked, Ranked], list[str]]:
    def fuse(query: str, lex: Ranked, sem: Ranked) -> list[str]:
        return _rrf(k, shapes.for_query(query))(query, lex, sem)
    return fuse


def _scores(alpha: float | None, shapes: ShapeWeights | None = None
            ) -> Callable[[str, Ranked, Ranked], list[str]]:
    def fuse(query: str, lex: Ranked, sem: Ranked) -> list[str]:
        weights = shapes.for_query(query) if shapes else (1 - (alpha or 0.5), alpha or 0.5)
        return [h for h, _ in score_fuse([lex, sem], list(weights))]
    return fuse


SHAPES = ShapeWeights(keyword=(1.0, 0.5), mixed=(1.0, 1.0), natural=(1.0, 2.0))
STRATEGIES: dict[str, Callable[[str, Ranked, Ranked], list[str]]] = {
    "rrf k=60 1/1": _rrf(60, (1.0, 1.0)),
    "rrf k=60 1/2": _rrf(60, (1.0, 2.0)),
    "rrf k=20 1/1": _rrf(20, (1.0, 1.0)),
    "rrf k=20 1/2": _rrf(20, (1.0, 2.0)),
    "rrf k=10 1/1.5": _rrf(10, (1.0, 1.5)),
    "rrf k=60 by shape": _shape_rrf(60, SHAPES),
    "rrf k=20 by shape": _shape_rrf(20, SHAPES),
    "rrf k=20 by shape (kw 1/0.25, nl 1/3)": _shape_rrf(
        20, ShapeWeights(keyword=(1.0, 0.25), mixed=(1.0, 1.0), natural=(1.0, 3.0))),
    "scores a=0.5": _scores(0.5),
    "scores a=0.7": _scores(0.7),
    "scores by shape": _scores(None, ShapeWeights(keyword=(0.7, 0.3), mixed=(0.5, 0.5),
                                                  natural=(0.3, 0.7))),
}


def fusion_study(searcher: HistorySearcher, queries: list[Query], k: int) -> dict[str, Any]:
    """Every strategy in :data:`STRATEGIES` on the same two candidate lists per query (the
    lexical and semantic top 50, with the query's filters), side by side."""
    rows: list[dict[str, Any]] = []
    for q in queries:
        lists = {}
        for mode in ("lexical", "semantic"):
            response = searcher.search(q.query, top_n=STUDY_CANDIDATES, files_glob=q.files_glob,
                                       after=q.after, before=q.before, mode=mode)
            if mode == "lexical":
                lists[mode] = [(r.hash, -(r.bm25 or 0.0)) for r in response.results]
            else:
                lists[mode] = [(r.hash, r.similarity or 0.0) for r in response.results
                               if response.effective_mode == "semantic"]
        row: dict[str, Any] = {"query": q.query, "kind": q.kind, "line": q.line}
        for name, fuse in STRATEGIES.items():
            hashes = fuse(q.query, lists["lexical"], lists["semantic"])[:k]
            rank, recall = score_results(hashes, q.relevant)
            row[name] = {"rank": rank, "recall": round(recall, 4)}
        rows.append(row)
    return summarise(rows, list(STRATEGIES), k)


def introduced_study(searcher: HistorySearcher, queries: list[Query], k: int = 5
                     ) -> dict[str, Any]:
    """On "introduced" questions: in how many is the introducing commit in the top ``k``,
    for the relevance ranking and for orderings by age of its best candidates, with the
    whole question and with only its subject (:func:`introduction_subject`)."""
    asked = [q for q in queries if q.kind == "introduced"]
    variants: dict[str, list[int | None]] = {}
    for q in asked:
        subject = introduction_subject(q.query) or q.query
        for label, text in (("question", q.query), ("subject", subject)):
            for mode in ("lexical", "hybrid"):
                response = searcher.search(text, top_n=50, mode=mode)
                results = response.results
                ordered = {"relevance": results}
                for top in (10, 20, 50):
                    ordered[f"oldest of top {top}"] = sorted(
                        results[:top], key=lambda r: (r.timestamp, r.hash))
                for name, rows in ordered.items():
                    rank, _ = score_results([r.hash for r in rows[:k]], q.relevant)
                    variants.setdefault(f"{label} {mode} {name}", []).append(rank)
    return {"questions": len(asked),
            **{name: {f"found_in_top{k}": sum(r is not None for r in ranks), "ranks": ranks}
               for name, ranks in variants.items()}}


def git_recipe(repo: Path, queries: list[Query], k: int = 5) -> dict[str, Any]:
    """``git log --reverse -i --all-match --grep=W…`` on "introduced" questions: how often
    the relevant commit is among the first ``k`` commits git lists."""
    found, ranks = 0, []
    asked = [q for q in queries if q.git_grep]
    for q in asked:
        argv = ["git", "-C", str(repo), "log", "--reverse", "-i", "--all-match",
                "--format=%H", *[f"--grep={w}" for w in q.git_grep or []], "HEAD"]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
        rank, _ = score_results(out[:k], q.relevant)
        ranks.append(rank)
        found += rank is not None
    return {"questions": len(asked), f"found_in_top{k}": found, "ranks": ranks}


@contextlib.contextmanager
def _index_location(index_dir: str) -> Iterator[str | None]:
    if index_dir == "auto":
        with tempfile.TemporaryDirectory(prefix="gq-eval-index-") as tmp:
            yield tmp
    elif index_dir == "workspace":
        yield None
    else:
        yield index_dir


def evaluate(
    repo: Path,
    queries: list[Query] | Path,
    *,
    k: int = 10,
    index_dir: str = "auto",
    modes: Sequence[str] = MODES,
    embed: bool = True,
    rrf_k: int | None = None,
    lexical_weight: float | None = None,
    semantic_weight: float | None = None,
    verbose: bool = False,
    doc_format: str | None = None,
    study: bool = False,
    merges: str | None = None,
    weight_by_shape: bool | None = None,
    embedding: tuple[str, str] | None = None,
    build: bool = True,
) -> dict[str, Any]:
    """Index ``repo``, run ``queries`` in every mode; the report as a dict (see module doc).

    ``doc_format`` ("v2-128", "v1-256", …) swaps the commit document format for this run (a
    new namespace, embedded from scratch); ``study`` adds the fusion study and git's own
    recipe for "introduced" questions."""
    if isinstance(queries, Path):
        queries = load_queries(queries)
    if doc_format:
        layout, tokens = doc_format.split("-")
        document.DEFAULT_FORMAT = document.DocumentFormat(layout, int(tokens))
    with _index_location(index_dir) as location:
        workspace = make_workspace(repo, location, embedding=embedding)
        overrides = {key: value for key, value in (
            ("rrf_k", rrf_k), ("lexical_weight", lexical_weight),
            ("semantic_weight", semantic_weight), ("weight_by_shape", weight_by_shape),
        ) if value is not None}
        if overrides:  # the loaded config is frozen: a replaced copy, not assignment
            workspace = Workspace(root=workspace.root,
                                  config=workspace.config.replaced(search=overrides))
        search_cfg = workspace.config.search
        index_info = build_index(workspace, embed=embed) if build else {"built": False}
        searcher = HistorySearcher(workspace)
        try:
            rows, facts = run_queries(searcher, queries, k=k, modes=modes, merges=merges)
            extra: dict[str, Any] = {}
            if study:
                extra["fusion_study"] = fusion_study(searcher, queries, k)
                extra["git_recipe_introduced"] = git_recipe(Path(repo), queries)
                extra["introduced_study"] = introduced_study(searcher, queries)
        finally:
            searcher.close()
    report: dict[str, Any] = {
        "repo": str(Path(repo).resolve()),
        "queries": len(queries),
        "k": k,
        "search": {"rrf_k": search_cfg.rrf_k, "lexical_weight": search_cfg.lexical_weight,
                   "semantic_weight": search_cfg.semantic_weight,
                   "weight_by_shape": search_cfg.weight_by_shape,
                   "merges": merges or search_cfg.merges},
        "document_format": document.text_format(),
        "embedding": {"provider": workspace.config.embedding.provider,
                      "model": workspace.config.embedding.model},
        "index": index_info,
        "metrics": summarise(rows, modes, k),
        **facts,
        **extra,
    }
    if verbose:
        report["per_query"] = rows
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True,
                        help="repository (or directory of repositories) to index and search")
    parser.add_argument("--queries", type=Path, required=True, help="JSONL query file")
    parser.add_argument("--k", type=int, default=10, help="cut-off for Recall@k / MRR@k")
    parser.add_argument("--index-dir", default="auto",
                        help="'auto' (temporary, default), 'workspace' (configured), or a DIR")
    parser.add_argument("--modes", default=",".join(MODES),
                        help="comma-separated subset of lexical,semantic,hybrid")
    parser.add_argument("--no-build", action="store_true",
                        help="search the index in --index-dir as it is (no indexing run)")
    parser.add_argument("--no-embed", action="store_true",
                        help="do not compute vectors (semantic/hybrid degrade to lexical)")
    parser.add_argument("--rrf-k", type=int, default=None, help="override [search] rrf_k")
    parser.add_argument("--lexical-weight", type=float, default=None)
    parser.add_argument("--semantic-weight", type=float, default=None)
    parser.add_argument("--verbose", "-v", action="store_true", help="add per-query ranks")
    parser.add_argument("--doc-format", default=None,
                        help="commit document format for this run, e.g. v2-128 or v1-256")
    parser.add_argument("--merges", choices=("include", "exclude", "only"), default=None,
                        help="override [search] merges")
    parser.add_argument("--no-shape-weights", action="store_true",
                        help="[search] weight_by_shape = false (plain weighted RRF)")
    parser.add_argument("--embedding", nargs=2, metavar=("PROVIDER", "MODEL"), default=None,
                        help="override [embedding] provider and model, e.g. onnx DIR")
    parser.add_argument("--model", type=Path, default=None,
                        help="an ONNX model directory to compare (same as --embedding onnx DIR)")
    parser.add_argument("--vector-cache", type=Path, default=None,
                        help="SQLite file caching index-time vectors by (model, budget, "
                        "sha256 of text): never embed one text twice (benchmarks/_vector_cache.py)")
    parser.add_argument("--donor-index", type=Path, action="append", default=[],
                        help="an index.db whose commit vectors seed --vector-cache")
    parser.add_argument("--study", action="store_true",
                        help="add the fusion study and git's recipe on 'introduced' questions")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    if bad or not 1 <= args.k <= 100:
        parser.error(f"bad --modes {bad}" if bad else "--k must be 1..100")
    cached: list[Any] = []
    if args.vector_cache is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _vector_cache import install

        cached = install(args.vector_cache, args.donor_index)
    try:
        queries = load_queries(args.queries)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    report = evaluate(
        args.repo, queries, k=args.k, index_dir=args.index_dir, modes=modes,
        embed=not args.no_embed, build=not args.no_build, rrf_k=args.rrf_k,
        lexical_weight=args.lexical_weight,
        semantic_weight=args.semantic_weight, verbose=args.verbose,
        doc_format=args.doc_format, study=args.study, merges=args.merges,
        weight_by_shape=False if args.no_shape_weights else None,
        embedding=(("onnx", str(args.model.expanduser().resolve())) if args.model
                   else tuple(args.embedding) if args.embedding else None),
    )
    if cached:
        report["vector_cache"] = {"hits": sum(c.hits for c in cached),
                                  "misses": sum(c.misses for c in cached)}
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
