"""One result pipeline for every corpus (issue 14): commit history, the architecture graph and
repository docs all run ``retrieval.pipeline.run_pipeline``, and the same request does the
same thing to each: here the confidence threshold removes exactly the results under it and
says so, and the MMR switch is honoured."""

from __future__ import annotations

from pathlib import Path

import gitquarry.graph.api as graph_api
import gitquarry.history.search.engine as history_search
import gitquarry.repo_docs.search as docs_search
from gitquarry.config import Config
from gitquarry.history.index.indexer import index_workspace
from gitquarry.history.search.searcher import HistorySearcher
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.registry import Registry, Selector
from gitquarry.retrieval import pipeline
from gitquarry.store import open_store
from gitquarry.workspace import Workspace

from .conftest import DOCS, Repo

GRAPH = """nodes:
  - ref_id: deploy
    kind: feature
    summary: Deployment behind the nginx reverse proxy
  - ref_id: proxy-config
    kind: service
    summary: Proxy settings for nginx workers and reverse proxy timeouts
  - ref_id: rollback
    kind: feature
    summary: Rollback with the blue-green switch behind the proxy
  - ref_id: billing
    kind: domain
    summary: Invoices and payments
"""


def _workspace(make_repo) -> tuple[Repo, Workspace]:  # type: ignore[no-untyped-def]
    repo: Repo = make_repo(dict(DOCS))
    repo.commit({"nginx.conf": "worker_connections 4096;\n"},
                "Raise nginx worker_connections behind the reverse proxy")
    repo.commit({"deploy.sh": "switch blue green\n"}, "Rollback script for the proxy switch")
    repo.commit({"proxy.py": "TIMEOUT = 30\n", "docs/proxy.md": (
        "# Proxy\n\nThe reverse proxy in front of every service.\n\n## Timeouts\n\n"
        "The proxy gives up after 30 seconds; raise it for slow reports.\n\n## Headers\n\n"
        "Forwarded headers are set by the reverse proxy, never by the application.\n")},
        "Reverse proxy timeout of 30 seconds")
    graph = repo.path / ".beadloom" / "_graph"
    graph.mkdir(parents=True)
    (graph / "g.yml").write_text(GRAPH, encoding="utf-8")
    return repo, Workspace(root=repo.path.resolve(), config=Config())


def test_every_corpus_runs_the_one_pipeline(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shared = pipeline.run_pipeline
    assert history_search.run_pipeline is shared
    assert graph_api.run_pipeline is shared
    assert docs_search.run_pipeline is shared

    repo, ws = _workspace(make_repo)
    with open_store(ws.db_path) as store:
        index_workspace(ws.root, store, ws.config)

    # commit history
    searcher = HistorySearcher(ws)
    try:
        full = searcher.search("reverse proxy", top_n=5, mode="lexical")
        scores = [r.score for r in full.results]
        assert len(scores) >= 2 and scores[0] > scores[-1]
        cut = (scores[0] + scores[-1]) / 2
        kept = searcher.search("reverse proxy", top_n=5, mode="lexical", min_score=cut)
        diverse = searcher.search("reverse proxy", top_n=5, mode="lexical", diverse=True)
    finally:
        searcher.close()
    assert [r.hash for r in kept.results] == [r.hash for r in full.results if r.score >= cut]
    removed = kept.pipeline["removed"]
    assert {r["key"] for r in removed} == {r.hash for r in full.results if r.score < cut}
    assert {r["step"] for r in removed} == {"threshold"}
    assert "mmr" in diverse.pipeline["steps"] and "mmr" not in full.pipeline["steps"]

    # architecture graph: BM25 min-max scaled, so 1.0 keeps only the best node
    graph_full = graph_api.search_graph(ws, "proxy", limit=10)
    assert len(graph_full.results) >= 2
    graph_best = graph_api.search_graph(ws, "proxy", limit=10, min_score=1.0)
    assert [r.ref_id for r in graph_best.results] == [graph_full.results[0].ref_id]
    assert {r["key"] for r in graph_best.pipeline["removed"]} == {
        r.ref_id for r in graph_full.results[1:]}
    graph_diverse = graph_api.search_graph(ws, "proxy", limit=10, diverse=True)
    assert "mmr" in graph_diverse.pipeline["steps"]

    # repository docs
    service = RepoDocsService(Config(), Registry())
    try:
        service.register("acme/widget", repo.path)
        sel = Selector("acme/widget")
        docs_full = service.search(sel, "reverse proxy", mode="fulltext", explain=True)
        doc_scores = [h["score"] for h in docs_full["hits"]]
        assert len(doc_scores) >= 2 and doc_scores[0] > doc_scores[-1]
        doc_cut = (doc_scores[0] + doc_scores[-1]) / 2
        docs_kept = service.search(sel, "reverse proxy", mode="fulltext", min_score=doc_cut,
                                   explain=True)
        docs_diverse = service.search(sel, "reverse proxy", mode="fulltext", diverse=True,
                                      explain=True)
    finally:
        service.close()
    assert [h["chunk_id"] for h in docs_kept["hits"]] == [
        h["chunk_id"] for h in docs_full["hits"] if h["score"] >= doc_cut]
    assert {r["key"] for r in docs_kept["pipeline"]["removed"]} == {
        h["chunk_id"] for h in docs_full["hits"] if h["score"] < doc_cut}
    assert "mmr" in docs_diverse["pipeline"]["steps"]
    assert all("pipeline" in h for h in docs_kept["hits"])
