"""The graph corpus's entry points for surfaces: one function per action, shared by the CLI
and the MCP server so the two can never disagree."""

from __future__ import annotations

import difflib
from typing import Any

from gitquarry.errors import (
    IndexBusyError,
    IndexReadOnlyError,
    InvalidArgumentError,
    NoGraphError,
    NoIndexError,
)
from gitquarry.graph.indexer import known_kinds, refresh_if_stale, reindex_if_present
from gitquarry.graph.models import MAX_LIMIT, GraphIndexReport, GraphSearchResponse
from gitquarry.graph.search import check_limit, search_nodes
from gitquarry.graph.sources import docs_dir_files, graph_dir, graph_files
from gitquarry.retrieval.fts import dropped_words_warning, fts5_match_expression
from gitquarry.retrieval.pipeline import (
    Candidate,
    PipelineSettings,
    check_min_score,
    run_pipeline,
)
from gitquarry.retrieval.rerank import reranker_for
from gitquarry.store import Store
from gitquarry.workspace import Workspace

#: nodes ranked before the result pipeline chooses ``limit`` of them
CANDIDATES = 100


def _no_graph(workspace: Workspace) -> NoGraphError:
    return NoGraphError(workspace.root, graph_dir(workspace.root, workspace.config.graph))


def check_kind(kind: str | None, kinds: list[str]) -> None:
    """Refuse a ``kind`` that is none of ``kinds`` (the graph's: ``known_kinds``), so a typo
    is an error rather than an empty answer.

    :raises InvalidArgumentError: ``kind`` is not one of ``kinds`` (argument ``kind``).
    """
    if kind is None or kind in kinds:
        return
    close = difflib.get_close_matches(kind, kinds, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise InvalidArgumentError(
        "kind", f"unknown kind {kind!r}: use one of {', '.join(kinds)}{hint}")


def _refresh(workspace: Workspace, store: Store) -> GraphIndexReport | None:
    try:
        with workspace.write_lock():
            return refresh_if_stale(store, workspace.root, workspace.config.graph)
    except (IndexBusyError, IndexReadOnlyError):
        # another process is indexing right now, or the index cannot be written here:
        # answer from the index as it stands.
        return None


def search_graph(
    workspace: Workspace,
    query: str,
    *,
    kind: str | None = None,
    limit: int = 10,
    refresh: bool = True,
    diverse: bool | None = None,
    min_score: float | None = None,
) -> GraphSearchResponse:
    """Search the architecture graph of ``workspace`` for nodes matching ``query``.

    With ``refresh`` (the default) a missing or stale graph index (graph or docs files
    changed since the last index, or the ``[graph]`` configuration changed) is rebuilt first
    and the rebuild's report is returned as ``refreshed``. Results come from FTS5 when the
    index has it, else from the LIKE fallback (``engine`` says which). ``kind`` is matched
    exactly; it must be one of the five beadloom kinds or a kind the graph uses
    (``known_kinds``). An empty query gives no results.

    The ranked nodes then go through the shared result pipeline (``retrieval.pipeline``,
    configured by ``[search]``): BM25 scores min-max scaled over up to ``CANDIDATES`` ranked
    nodes (1 = the best), threshold (``min_score`` overrides ``min_confidence``), n-gram
    dedup over summary and snippet, MMR (``diverse`` overrides ``mmr_enabled``; similarity by
    n-grams: graph nodes have no vectors) and rerank. LIKE results are scored by position.

    :raises InvalidArgumentError: ``limit`` outside 1..100, ``min_score`` outside [0, 1],
        ``kind`` unknown (after the refresh, so a kind just added to the graph counts).
    :raises NoGraphError: the project has no graph files and the index holds no nodes.
    :raises GraphFileError: a graph file is malformed (while refreshing).
    :raises IndexCorruptError, SchemaTooNewError: the index database cannot be used.
    """
    check_limit(limit)
    check_min_score(min_score)
    config = workspace.config.graph
    files = bool(graph_files(workspace.root, config))
    if not workspace.has_index() and not files:
        raise _no_graph(workspace)
    # a search may create the index to hold the graph files' nodes, never adopt or set
    # aside one it did not make; with no graph files it only reads (an index.db with no
    # schema yet is then no index: left as it is)
    try:
        opened = workspace.open_store(create=files, writer=False, upgrade=False)
    except NoIndexError:
        raise _no_graph(workspace) from None
    with opened as store:
        refreshed = _refresh(workspace, store) if refresh else None
        has_nodes = store.conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is not None
        if not has_nodes and not graph_files(workspace.root, config):
            raise _no_graph(workspace)
        check_kind(kind, known_kinds(store))
        ranked, engine = search_nodes(
            store.conn, query, kind=kind, limit=max(limit, min(MAX_LIMIT, CANDIDATES))
        )
    search = workspace.config.search
    settings = PipelineSettings.from_search_config(
        search, diverse=diverse, min_score=min_score, normalise=True
    )
    reranker, problem = reranker_for(search) if ranked else (None, None)
    outcome = run_pipeline(
        (
            Candidate(
                key=r.ref_id,
                score=-r.rank if r.rank is not None else float(-n),
                text=f"{r.summary}\n{_plain(r.snippet or '')}",
                data=r,
            )
            for n, r in enumerate(ranked)
        ),
        settings, top_n=limit, query=query, reranker=reranker, reranker_problem=problem,
    )
    explain = {
        **outcome.summary(),
        # score: the node's score in [0, 1] (1 = the best), the readable side of its BM25 rank
        "results": {c.key: {**outcome.explain(c), "score": round(c.score, 6)}
                    for c in outcome.results},
    }
    warnings = tuple(outcome.warnings)
    if not fts5_match_expression(query):  # no results, and the reason (as history says it)
        warnings = (("no_searchable_terms", f"the query {query!r} holds no searchable word"),
                    *warnings)
    dropped = dropped_words_warning(query)
    if dropped is not None:
        warnings = (dropped, *warnings)
    return GraphSearchResponse(
        results=tuple(c.data for c in outcome.results), engine=engine, refreshed=refreshed,
        warnings=warnings, pipeline=explain,
    )


def _plain(snippet: str) -> str:
    return snippet.replace("<b>", "").replace("</b>", "")


def reindex_workspace(workspace: Workspace) -> GraphIndexReport:
    """Rebuild the graph corpus of ``workspace`` now (``gitquarry graph reindex``).

    With no graph files and no docs, a graph indexed earlier is emptied.
    :raises NoGraphError: no graph files, no docs, and no earlier graph index.
    :raises IndexBusyError: another process is indexing this workspace.
    :raises GraphFileError: a graph file is malformed; the index is left as it was.
    """
    config = workspace.config.graph
    has_files = bool(graph_files(workspace.root, config) or docs_dir_files(workspace.root, config))
    if not has_files and not workspace.has_index():
        raise _no_graph(workspace)
    with workspace.write_lock(), workspace.open_store(create=True) as store:
        report = reindex_if_present(store, workspace.root, config)
    if report is None:
        raise _no_graph(workspace)
    return report


def workspace_kinds(workspace: Workspace) -> list[str]:
    """The five beadloom kinds plus any other kind the workspace's index holds."""
    if not workspace.has_index():
        return known_kinds(None)
    try:
        opened = workspace.open_store()
    except NoIndexError:  # an index.db with no schema yet
        return known_kinds(None)
    with opened as store:
        return known_kinds(store)


def node_detail(workspace: Workspace, ref_id: str, *, query: str | None = None) -> dict[str, Any]:
    """One graph node as stored: ``ref_id``, ``kind``, ``summary``, ``graph_file``
    (project-relative), ``edges_out`` / ``edges_in`` (``{ref_id, kind}``), ``docs`` (the
    project-relative paths the node links, with their chunk headings) and, when ``query`` is
    given, the node's ``snippet`` for it (as ``search_graph`` returns it; None when the node
    does not match).

    :raises NotFoundError: the index holds no node ``ref_id``.
    """
    from gitquarry.errors import NotFoundError

    no_index = NotFoundError("graph node", f"{ref_id!r}: the workspace has no index yet")
    if not workspace.has_index():
        raise no_index
    try:
        opened = workspace.open_store()
    except NoIndexError:  # an index.db with no schema yet
        raise no_index from None
    with opened as store:
        conn = store.conn
        row = conn.execute("SELECT ref_id, kind, summary, graph_file FROM nodes WHERE ref_id = ?",
                           (ref_id,)).fetchone()
        if row is None:
            raise NotFoundError("graph node", f"{ref_id!r} is not in the graph index")
        out = [{"ref_id": r[0], "kind": r[1]} for r in conn.execute(
            "SELECT dst, kind FROM edges WHERE src = ? ORDER BY kind, dst", (ref_id,))]
        inc = [{"ref_id": r[0], "kind": r[1]} for r in conn.execute(
            "SELECT src, kind FROM edges WHERE dst = ? ORDER BY kind, src", (ref_id,))]
        docs = []
        for doc_id, path in conn.execute(
            "SELECT d.id, d.path FROM doc_links l JOIN docs d ON d.id = l.doc_id "
            "WHERE l.ref_id = ? ORDER BY l.position", (ref_id,)
        ).fetchall():
            headings = [h for (h,) in conn.execute(
                "SELECT heading FROM chunks WHERE doc_id = ? ORDER BY ordinal LIMIT 50",
                (doc_id,)) if h]
            docs.append({"path": path, "headings": headings})
        snippet = None
        if query and query.strip():
            results, _engine = search_nodes(conn, query, kind=None, limit=100)
            snippet = next((r.snippet for r in results if r.ref_id == ref_id), None)
    return {"ref_id": row[0], "kind": row[1], "summary": row[2], "graph_file": row[3],
            "edges_out": out, "edges_in": inc, "docs": docs, "snippet": snippet}
