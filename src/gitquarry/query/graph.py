"""``GraphRequest``: one architecture-graph search, as every surface asks it.

``gitquarry search``, the MCP tool ``search`` and the web page's graph tab each build one
with :func:`graph_request` and answer it with :func:`search_graph_request`
(``graph.api.search_graph``). The builder checks ``limit`` and ``min_score``; ``kind`` is
checked by the search against the graph's kinds (after a refresh, so a kind just added
counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitquarry.graph.models import GraphSearchResponse
    from gitquarry.workspace import Workspace


@dataclass(frozen=True, kw_only=True)
class GraphRequest:
    """One graph search: ``query`` (every word must match), ``kind`` (None: any),
    ``limit`` results (1-100), the pipeline switches (None: as configured)."""

    query: str
    kind: str | None = None
    limit: int = 10
    diverse: bool | None = None
    min_score: float | None = None

    def validate(self) -> GraphRequest:
        """:raises InvalidArgumentError: ``limit`` outside 1-100, ``min_score`` outside
        [0, 1]. Returns ``self``."""
        from gitquarry.graph.search import check_limit
        from gitquarry.retrieval.pipeline import check_min_score

        check_limit(self.limit)
        check_min_score(self.min_score)
        return self


def graph_request(query: str, **fields: Any) -> GraphRequest:
    """Build and validate the request of one graph search (every keyword a field of
    :class:`GraphRequest`).

    :raises InvalidArgumentError: see :meth:`GraphRequest.validate`.
    """
    return GraphRequest(query=query, **fields).validate()


def search_graph_request(workspace: Workspace, request: GraphRequest, *,
                         refresh: bool = True) -> GraphSearchResponse:
    """``graph.api.search_graph`` for ``request`` (``refresh``: rebuild a stale graph index
    first; the daemon's web page passes False: its jobs keep the index current)."""
    from gitquarry.graph.api import search_graph

    return search_graph(workspace, request.query, kind=request.kind, limit=request.limit,
                        refresh=refresh, diverse=request.diverse, min_score=request.min_score)
