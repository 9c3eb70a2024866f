"""Build the graph corpus in the index: nodes, edges, docs, chunks, ``search_index``.

Each reindex rebuilds the corpus from scratch in one transaction (the graph is small: a
5,000-node graph with 20,000 chunks takes seconds), so a failed run leaves the previous
index intact. The files read are fingerprinted (mtime + size) in ``graph_sources`` so
``is_stale`` can tell, with one ``stat`` per file, whether graph or docs files changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
import time
from pathlib import Path

from gitquarry.config import GraphConfig
from gitquarry.errors import FileRefusedError
from gitquarry.graph.chunker import chunk_markdown
from gitquarry.graph.loader import load_graph
from gitquarry.graph.models import KNOWN_KINDS, GraphIndexReport, GraphStatus
from gitquarry.graph.search import has_fts5, populate_search_index
from gitquarry.graph.sources import (
    MAX_DOC_BYTES,
    MISSING,
    containment_root,
    docs_dir_files,
    fingerprint,
    graph_files,
    relative,
    resolve_doc_path,
    resolve_within,
    source_keys,
)
from gitquarry.parsing.bounded_read import cut_at_char_boundary, describe_mode, read_capped
from gitquarry.store import Store
from gitquarry.store.schema.graph import ensure_search_table

_TABLES = ("chunks", "doc_links", "docs", "edges", "nodes", "graph_sources")


def _config_key(config: GraphConfig) -> str:
    return json.dumps(dataclasses.asdict(config), sort_keys=True)


@dataclasses.dataclass
class _Doc:
    path: Path
    rel: str
    links: list[tuple[str, int]]
    fp: tuple[int, int] = MISSING
    #: ``path`` with symlinks resolved (checked to lie inside the containment root)
    real: Path | None = None


def _decode_doc(rel: str, data: bytes, warnings: list[str]) -> str | None:
    """The text of a doc's bytes, or None (with a warning) for a binary file (NUL bytes).
    Invalid UTF-8 is decoded with U+FFFD replacements and one warning for the file."""
    if b"\x00" in data:
        warnings.append(f"{rel}: contains NUL bytes (binary file?); skipped")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        warnings.append(
            f"{rel}: not valid UTF-8 (first bad byte at offset {exc.start}); undecodable "
            "bytes replaced with U+FFFD"
        )
        text = data.decode("utf-8", errors="replace")
    return text.lstrip("\ufeff")


def _not_regular(path: Path) -> str | None:
    """Why ``path`` (links followed) is no regular file ("is a FIFO, not a regular file"), or
    None when it is one or does not exist. One ``stat``; nothing is opened."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else describe_mode(mode)


def _escape_reason(path: Path) -> str:
    """Why ``resolve_within`` refused ``path``, for a warning."""
    try:
        path.resolve()
    except (OSError, RuntimeError):
        return "cannot be resolved (symlink loop)"
    return "resolves outside the project (symlink)"


def reindex_graph(store: Store, project: Path, config: GraphConfig) -> GraphIndexReport:
    """Rebuild the graph corpus of ``project`` (an absolute directory) in ``store``.

    Reads every graph file under ``config.graph_dir``, every doc a node lists and every
    Markdown file under ``config.docs_dir``. Per-item problems (duplicate ref_id, edge to a
    missing node, a listed doc that is missing or outside the project, a graph file or doc
    that resolves outside the project through a symlink, a doc with NUL bytes, a doc that
    is not valid UTF-8, a non-string summary) are warnings in the report; everything else
    is indexed. With no graph files and no docs the corpus is emptied. ``search_index`` is
    rebuilt when SQLite has FTS5 (``report.fts5``).

    :raises GraphFileError: a graph file is not valid YAML or not a graph mapping; nothing
        is written.
    :raises IndexBusyError: another writer holds the database.
    """
    started = time.perf_counter()
    project = project.resolve()
    warnings: list[str] = []
    #: files found but not read (symlink out of the project, binary doc), recorded so a
    #: change to them (or to where they point) makes the index stale.
    skipped: dict[str, tuple[int, int]] = {}

    graph_root = containment_root(project, config.graph_dir)
    gfiles: list[Path] = []
    for path in graph_files(project, config):
        if resolve_within(path, graph_root) is None:
            rel = relative(project, path)
            warnings.append(f"{rel}: graph file {_escape_reason(path)}; skipped")
            skipped[rel] = fingerprint(path)
            continue
        odd = _not_regular(path)
        if odd is not None:  # a FIFO, socket or device: never opened
            rel = relative(project, path)
            warnings.append(f"{rel}: graph file {odd}; skipped")
            skipped[rel] = fingerprint(path)
            continue
        gfiles.append(path)
    graph_fps = {relative(project, p): fingerprint(p) for p in gfiles}
    loaded = load_graph(project, gfiles)
    warnings.extend(loaded.warnings)

    docs: dict[Path, _Doc] = {}
    missing_docs: dict[str, tuple[int, int]] = {}
    for node in loaded.nodes:
        for position, declared in enumerate(node.docs):
            resolved = resolve_doc_path(project, declared)
            if resolved is None:
                warnings.append(
                    f"{node.graph_file}: node {node.ref_id!r} doc {declared!r} is outside the "
                    "project; skipped"
                )
                continue
            path = resolved
            rel = relative(project, path)
            if rel in skipped:
                continue
            real = resolve_within(path, project)
            if real is None:
                warnings.append(
                    f"{node.graph_file}: node {node.ref_id!r} doc {declared!r} "
                    f"{_escape_reason(path)}; skipped"
                )
                skipped[rel] = fingerprint(path)
                continue
            odd = _not_regular(path)
            if odd is not None:
                warnings.append(
                    f"{node.graph_file}: node {node.ref_id!r} doc {declared!r} {odd}; skipped"
                )
                skipped[rel] = fingerprint(path)
                continue
            if fingerprint(path) == MISSING:
                warnings.append(
                    f"{node.graph_file}: node {node.ref_id!r} doc {declared!r} does not exist"
                )
                missing_docs[rel] = MISSING
                continue
            doc = docs.setdefault(path, _Doc(path, rel, [], real=real))
            if all(ref != node.ref_id for ref, _ in doc.links):
                doc.links.append((node.ref_id, position))
    docs_root = containment_root(project, config.docs_dir)
    for path in docs_dir_files(project, config):
        rel = relative(project, path)
        if path in docs or rel in skipped:
            continue
        real = resolve_within(path, docs_root)
        if real is None:
            warnings.append(f"{rel}: doc {_escape_reason(path)}; skipped")
            skipped[rel] = fingerprint(path)
            continue
        odd = _not_regular(path)
        if odd is not None:
            warnings.append(f"{rel}: doc {odd}; skipped")
            skipped[rel] = fingerprint(path)
            continue
        docs[path] = _Doc(path, rel, [], real=real)

    doc_rows: list[tuple[_Doc, str, int, list[tuple[int, str, str]]]] = []
    for doc in sorted(docs.values(), key=lambda d: d.rel):
        doc.fp = fingerprint(doc.path)  # stat before reading: a later edit reads as stale
        try:  # regular files only (never blocks), at most MAX_DOC_BYTES + 1 bytes read
            got = read_capped(doc.real or doc.path, MAX_DOC_BYTES,
                              follow_symlinks=doc.real is None)
        except FileRefusedError as exc:
            warnings.append(f"{doc.rel}: {exc.reason}; skipped")
            skipped[doc.rel] = doc.fp
            continue
        data = got.data
        if got.over:  # index the first MAX_DOC_BYTES, cut at a character boundary
            data = cut_at_char_boundary(data)
            warnings.append(f"{doc.rel}: {got.size:,} bytes, over the {MAX_DOC_BYTES:,}-byte "
                            f"limit for graph docs; only its first {len(data):,} bytes are "
                            "indexed")
        text = _decode_doc(doc.rel, data, warnings)
        if text is None:
            skipped[doc.rel] = doc.fp
            continue
        chunks = [
            (c.ordinal, c.heading, c.content) for c in chunk_markdown(text, config.chunk_max_chars)
        ]
        doc_rows.append((doc, hashlib.sha256(data).hexdigest(), len(data), chunks))

    with store.atomic() as conn:
        for table in _TABLES:
            conn.execute(f"DELETE FROM {table}")
        conn.executemany(
            "INSERT INTO nodes (ref_id, kind, summary, source, extra, graph_file)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    n.ref_id,
                    n.kind,
                    n.summary,
                    n.source,
                    json.dumps(n.extra, ensure_ascii=False, sort_keys=True),
                    n.graph_file,
                )
                for n in loaded.nodes
            ],
        )
        conn.executemany(
            "INSERT INTO edges (src, dst, kind, graph_file) VALUES (?, ?, ?, ?)",
            [(e.src, e.dst, e.kind, e.graph_file) for e in loaded.edges],
        )
        chunk_count = unlinked = 0
        for doc, sha, size, chunks in doc_rows:
            owner = doc.links[0][0] if doc.links else None
            unlinked += owner is None
            doc_id = conn.execute(
                "INSERT INTO docs (path, ref_id, sha256, size_bytes) VALUES (?, ?, ?, ?)",
                (doc.rel, owner, sha, size),
            ).lastrowid
            conn.executemany(
                "INSERT INTO doc_links (doc_id, ref_id, position) VALUES (?, ?, ?)",
                [(doc_id, ref, pos) for ref, pos in doc.links],
            )
            conn.executemany(
                "INSERT INTO chunks (doc_id, ordinal, heading, content) VALUES (?, ?, ?, ?)",
                [(doc_id, *chunk) for chunk in chunks],
            )
            chunk_count += len(chunks)
        sources: dict[str, tuple[str, int, int]] = {}
        for rel, fp in missing_docs.items():
            sources[rel] = ("missing_doc", *fp)
        for rel, fp in skipped.items():
            sources[rel] = ("skipped", *fp)
        for doc, _sha, _size, _chunks in doc_rows:
            sources[doc.rel] = ("doc", *doc.fp)
        for rel, fp in graph_fps.items():
            sources[rel] = ("graph", *fp)
        conn.executemany(
            "INSERT INTO graph_sources (path, role, mtime_ns, size_bytes) VALUES (?, ?, ?, ?)",
            [(path, *values) for path, values in sources.items()],
        )
        fts = ensure_search_table(conn)
        search_rows = populate_search_index(conn) if fts else 0
        conn.executemany(
            "INSERT OR REPLACE INTO graph_state (key, value) VALUES (?, ?)",
            [("last_indexed_at", str(int(time.time()))), ("config", _config_key(config))],
        )
    return GraphIndexReport(
        nodes=len(loaded.nodes),
        edges=len(loaded.edges),
        docs=len(doc_rows),
        chunks=chunk_count,
        unlinked_docs=unlinked,
        search_rows=search_rows,
        fts5=fts,
        warnings=tuple(warnings),
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def has_sources(project: Path, config: GraphConfig) -> bool:
    """Whether ``project`` has any graph file or any Markdown file under the docs directory."""
    return bool(graph_files(project, config) or docs_dir_files(project, config))


def _has_corpus(store: Store) -> bool:
    conn = store.conn
    return (
        conn.execute("SELECT 1 FROM graph_state WHERE key = 'last_indexed_at'").fetchone()
        is not None
    )


def reindex_if_present(store: Store, project: Path, config: GraphConfig) -> GraphIndexReport | None:
    """``reindex_graph`` when the project has graph files or docs, or was indexed before
    (then the corpus is emptied to match); None when there is nothing to index.

    For ``gitquarry index``. :raises GraphFileError, IndexBusyError: as ``reindex_graph``.
    """
    if not has_sources(project, config) and not _has_corpus(store):
        return None
    return reindex_graph(store, project, config)


def is_stale(store: Store, project: Path, config: GraphConfig) -> bool:
    """True when the graph corpus does not match the files: never indexed, the ``[graph]``
    configuration changed, a recorded file changed (mtime or size), disappeared or (for a
    listed doc that was missing) appeared, or a new graph/docs-directory file exists.
    """
    conn = store.conn
    state = dict(conn.execute("SELECT key, value FROM graph_state").fetchall())
    if "last_indexed_at" not in state or state.get("config") != _config_key(config):
        return True
    project = project.resolve()
    base = str(project) + os.sep
    recorded: set[str] = set()
    for path, mtime_ns, size in conn.execute(
        "SELECT path, mtime_ns, size_bytes FROM graph_sources"
    ):
        if fingerprint(path if os.path.isabs(path) else base + path) != (mtime_ns, size):
            return True
        recorded.add(path)
    return any(key not in recorded for key in source_keys(project, config))


def refresh_if_stale(store: Store, project: Path, config: GraphConfig) -> GraphIndexReport | None:
    """Reindex when ``is_stale`` (and there is something to index); None when fresh.

    :raises GraphFileError, IndexBusyError: as ``reindex_graph``.
    """
    if not is_stale(store, project, config):
        return None
    return reindex_if_present(store, project, config)


def graph_status(store: Store) -> GraphStatus:
    """Counts of the graph corpus in ``store``, unlinked docs and last index time.

    For ``gitquarry status``; ``GraphStatus.to_dict()`` gives the JSON form.
    """
    conn = store.conn

    def count(table: str) -> int:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    row = conn.execute("SELECT value FROM graph_state WHERE key = 'last_indexed_at'").fetchone()
    unlinked = tuple(
        r[0] for r in conn.execute("SELECT path FROM docs WHERE ref_id IS NULL ORDER BY path")
    )
    return GraphStatus(
        nodes=count("nodes"),
        edges=count("edges"),
        docs=count("docs"),
        chunks=count("chunks"),
        unlinked_docs=unlinked,
        fts5=has_fts5(conn),
        last_indexed_at=int(row[0]) if row else None,
    )


def known_kinds(store: Store | None) -> list[str]:
    """The five beadloom kinds followed by any other kind the index holds (sorted)."""
    extra: list[str] = []
    if store is not None:
        extra = [
            r[0]
            for r in store.conn.execute("SELECT DISTINCT kind FROM nodes ORDER BY kind")
            if r[0] not in KNOWN_KINDS
        ]
    return [*KNOWN_KINDS, *extra]
