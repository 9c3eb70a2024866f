"""Architecture-graph corpus: beadloom YAML graph + Markdown docs, FTS5 search, LIKE fallback."""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.graph.api import reindex_workspace, search_graph, workspace_kinds
    from gitquarry.graph.chunker import chunk_markdown
    from gitquarry.graph.indexer import (
        graph_status,
        is_stale,
        refresh_if_stale,
        reindex_graph,
        reindex_if_present,
    )
    from gitquarry.graph.loader import load_graph
    from gitquarry.graph.models import (
        KNOWN_KINDS,
        Chunk,
        GraphEdge,
        GraphIndexReport,
        GraphNode,
        GraphSearchResponse,
        GraphStatus,
        SearchResult,
    )
    from gitquarry.graph.search import (
        has_fts5,
        populate_search_index,
        search_fts5,
        search_like,
        search_nodes,
    )

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "reindex_workspace": "gitquarry.graph.api",
    "search_graph": "gitquarry.graph.api",
    "workspace_kinds": "gitquarry.graph.api",
    "chunk_markdown": "gitquarry.graph.chunker",
    "graph_status": "gitquarry.graph.indexer",
    "is_stale": "gitquarry.graph.indexer",
    "refresh_if_stale": "gitquarry.graph.indexer",
    "reindex_graph": "gitquarry.graph.indexer",
    "reindex_if_present": "gitquarry.graph.indexer",
    "load_graph": "gitquarry.graph.loader",
    "KNOWN_KINDS": "gitquarry.graph.models",
    "Chunk": "gitquarry.graph.models",
    "GraphEdge": "gitquarry.graph.models",
    "GraphIndexReport": "gitquarry.graph.models",
    "GraphNode": "gitquarry.graph.models",
    "GraphSearchResponse": "gitquarry.graph.models",
    "GraphStatus": "gitquarry.graph.models",
    "SearchResult": "gitquarry.graph.models",
    "has_fts5": "gitquarry.graph.search",
    "populate_search_index": "gitquarry.graph.search",
    "search_fts5": "gitquarry.graph.search",
    "search_like": "gitquarry.graph.search",
    "search_nodes": "gitquarry.graph.search",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "KNOWN_KINDS",
    "Chunk",
    "GraphEdge",
    "GraphIndexReport",
    "GraphNode",
    "GraphSearchResponse",
    "GraphStatus",
    "SearchResult",
    "chunk_markdown",
    "graph_status",
    "has_fts5",
    "is_stale",
    "load_graph",
    "populate_search_index",
    "refresh_if_stale",
    "reindex_graph",
    "reindex_if_present",
    "reindex_workspace",
    "search_fts5",
    "search_graph",
    "search_like",
    "search_nodes",
    "workspace_kinds",
]
