"""Typed values of the architecture-graph corpus: graph parts, chunks, reports, results."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

#: the kinds beadloom defines; any other string is accepted and stored as well.
KNOWN_KINDS: tuple[str, ...] = ("domain", "feature", "service", "entity", "adr")

#: bounds of a search ``limit``.
MIN_LIMIT = 1
MAX_LIMIT = 100

SearchEngine = Literal["fts5", "like"]


@dataclass(frozen=True, kw_only=True)
class GraphNode:
    """One node of a graph file. ``docs`` are project-relative paths as written in the YAML;
    ``extra`` holds every other key of the node (stored as JSON); ``graph_file`` is the
    project-relative file that defined the node."""

    ref_id: str
    kind: str
    summary: str = ""
    source: str | None = None
    docs: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    graph_file: str = ""


@dataclass(frozen=True, kw_only=True)
class GraphEdge:
    """A directed edge ``src → dst`` of ``kind``, from ``graph_file``."""

    src: str
    dst: str
    kind: str
    graph_file: str = ""


@dataclass(frozen=True, kw_only=True)
class LoadedGraph:
    """Every graph file's nodes and edges after validation.

    Duplicate ref_ids keep their first definition; edges with an unknown end are dropped.
    ``files`` are the graph files read (absolute paths, sorted); ``warnings`` are
    human-readable, one per skipped item.
    """

    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    files: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Chunk:
    """One chunk of a Markdown doc: ``ordinal`` from 0, ``heading`` the section's ``##``
    heading text ("" before the first one), ``content`` the text searched (it includes the
    heading line) and at most the chunker's ``max_chars`` long."""

    ordinal: int
    heading: str
    content: str


@dataclass(frozen=True, kw_only=True)
class GraphIndexReport:
    """What a graph reindex wrote. ``unlinked_docs`` counts docs no node lists;
    ``search_rows`` is the number of ``search_index`` rows (0 when ``fts5`` is False, i.e.
    SQLite has no FTS5 and searches use LIKE); ``duration_ms`` is wall time."""

    nodes: int
    edges: int
    docs: int
    chunks: int
    unlinked_docs: int
    search_rows: int
    fts5: bool
    warnings: tuple[str, ...] = ()
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "warnings": list(self.warnings),
            "duration_ms": round(self.duration_ms, 1),
        }


@dataclass(frozen=True, kw_only=True)
class GraphStatus:
    """What the index holds for the graph corpus. ``unlinked_docs`` are project-relative
    paths of docs no node lists (indexed as chunks, never returned as nodes);
    ``last_indexed_at`` is Unix seconds or None when the graph was never indexed."""

    nodes: int
    edges: int
    docs: int
    chunks: int
    unlinked_docs: tuple[str, ...]
    fts5: bool
    last_indexed_at: int | None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "unlinked_docs": list(self.unlinked_docs)}


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """One matching node.

    FTS5 results carry ``snippet`` (from the node's doc content, matched terms wrapped in
    ``<b>``/``</b>``, fragments joined by ``...``, at most 32 tokens; the highlighted summary
    when only the summary or ref_id matched) and ``rank`` (BM25, lower is better). LIKE
    fallback results have neither (both None), as in the seed.
    """

    ref_id: str
    kind: str
    summary: str
    snippet: str | None = None
    rank: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The seed's result dict: ``ref_id, kind, summary, snippet, rank`` for FTS5 results;
        ``ref_id, kind, summary`` for LIKE results."""
        data: dict[str, Any] = {"ref_id": self.ref_id, "kind": self.kind, "summary": self.summary}
        if self.snippet is not None:
            data["snippet"] = self.snippet
        if self.rank is not None:
            data["rank"] = self.rank
        return data


@dataclass(frozen=True, kw_only=True)
class GraphSearchResponse:
    """``results`` best first; ``engine`` says which path answered; ``refreshed`` is the
    reindex report when the search rebuilt a stale or missing index first (else None).
    ``warnings``: ``(code, message)`` from the result pipeline (e.g. ``rerank_unavailable``);
    ``pipeline``: what the result pipeline did (``steps``, ``examined``, ``removed``, and per
    result under ``results`` by ref_id), for ``--explain``."""

    results: tuple[SearchResult, ...]
    engine: SearchEngine
    refreshed: GraphIndexReport | None = None
    warnings: tuple[tuple[str, str], ...] = ()
    pipeline: dict[str, Any] | None = None
