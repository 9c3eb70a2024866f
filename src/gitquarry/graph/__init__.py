"""Architecture-graph corpus: beadloom YAML graph + Markdown docs, FTS5 search, LIKE fallback."""

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
