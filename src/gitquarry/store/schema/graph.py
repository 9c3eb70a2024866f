"""Schema of the architecture-graph corpus (owned by ``gitquarry.graph``).

Tables (all rebuilt from scratch by each graph reindex):

- ``nodes(ref_id, kind, summary, source, extra, graph_file)``: one row per graph node;
  ``extra`` is a JSON object of the node's other YAML keys.
- ``edges(src, dst, kind, graph_file)``: edges whose both ends are known nodes.
- ``docs(id, path, ref_id, sha256, size_bytes)``: one row per indexed Markdown file, ``path``
  relative to the project root (POSIX separators). ``ref_id`` is the first node that lists
  the doc (the seed's join column), NULL when no node links it ("unlinked").
- ``doc_links(doc_id, ref_id, position)``: every node → doc link (a doc may serve several
  nodes); ``position`` is the doc's index in the node's ``docs:`` list.
- ``chunks(id, doc_id, ordinal, heading, content)``: a doc's ``##`` sections, at most
  ``[graph] chunk_max_chars`` characters each; ``content`` includes the heading line.
- ``graph_sources(path, role, mtime_ns, size_bytes)``: the files the last reindex read
  (``role`` is ``graph``, ``doc``, ``missing_doc`` or ``skipped``; a missing doc has size
  -1), compared with the file system to decide whether the index is stale.
- ``graph_state(key, value)``: ``last_indexed_at`` (Unix seconds), ``config`` (JSON).
- ``search_docs(id, ref_id, kind, summary, content)``: one row per node, the text search shows
  (``content`` is the node's doc chunks joined).
- ``search_index``: FTS5 ``(ref_id, kind UNINDEXED, summary, content)`` with external content
  ``search_docs``; each row indexes ``retrieval.tokenize.index_text`` of the columns (the
  shared tokenisation: identifiers split, CJK spaced, versions without ``v``), so snippets and
  highlights come from the raw text with positions intact. Created (with ``search_docs``)
  only where SQLite has the FTS5 module; without it the plain tables above still exist and
  search falls back to LIKE.
"""

from __future__ import annotations

import sqlite3

from gitquarry.retrieval.tokenize import FTS5_TOKENIZE
from gitquarry.store.capabilities import fts5_available
from gitquarry.store.migrations import MIGRATIONS, run_script

SEARCH_DOCS_DDL = (
    "CREATE TABLE IF NOT EXISTS search_docs (id INTEGER PRIMARY KEY, ref_id TEXT NOT NULL, "
    "kind TEXT NOT NULL, summary TEXT NOT NULL, content TEXT NOT NULL)"
)
SEARCH_INDEX_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_index USING fts5("
    "ref_id, kind UNINDEXED, summary, content, content='search_docs', content_rowid='id', "
    f"tokenize='{FTS5_TOKENIZE}')"
)


def ensure_search_table(conn: sqlite3.Connection) -> bool:
    """Create ``search_docs`` and ``search_index`` if FTS5 is available and they are missing.

    Returns True when the table exists afterwards, False when this SQLite has no FTS5.
    Idempotent; safe inside the caller's transaction.
    """
    if not fts5_available(conn):
        return False
    conn.execute(SEARCH_DOCS_DDL)
    conn.execute(SEARCH_INDEX_DDL)
    return True


@MIGRATIONS("graph_0001_init")
def _init(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE nodes (
            ref_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            source TEXT,
            extra TEXT NOT NULL DEFAULT '{}',   -- JSON object of the node's other keys
            graph_file TEXT NOT NULL            -- project-relative file that defined it
        );
        CREATE INDEX idx_nodes_kind ON nodes(kind);

        CREATE TABLE edges (
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            kind TEXT NOT NULL,
            graph_file TEXT NOT NULL,
            PRIMARY KEY (src, dst, kind)
        ) WITHOUT ROWID;
        CREATE INDEX idx_edges_dst ON edges(dst);

        CREATE TABLE docs (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,          -- project-relative, POSIX separators
            ref_id TEXT,                        -- first linking node; NULL = unlinked
            sha256 TEXT NOT NULL,
            size_bytes INTEGER NOT NULL
        );
        CREATE INDEX idx_docs_ref_id ON docs(ref_id);

        CREATE TABLE doc_links (
            doc_id INTEGER NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
            ref_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            PRIMARY KEY (ref_id, doc_id)
        ) WITHOUT ROWID;
        CREATE INDEX idx_doc_links_doc ON doc_links(doc_id);

        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY,
            doc_id INTEGER NOT NULL REFERENCES docs(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            heading TEXT NOT NULL,
            content TEXT NOT NULL
        );
        CREATE INDEX idx_chunks_doc ON chunks(doc_id, ordinal);

        CREATE TABLE graph_sources (
            path TEXT PRIMARY KEY,              -- project-relative, POSIX separators
            role TEXT NOT NULL,                 -- graph | doc | missing_doc
            mtime_ns INTEGER NOT NULL,
            size_bytes INTEGER NOT NULL         -- -1 for a missing doc
        ) WITHOUT ROWID;

        CREATE TABLE graph_state (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """,
    )
    ensure_search_table(conn)


@MIGRATIONS("graph_0002_tokenize_v2")
def _tokenize_v2(conn: sqlite3.Connection) -> None:
    """Shared tokenisation (``retrieval.tokenize`` version 2): ``search_index`` becomes an
    external-content table over ``search_docs``. The old index is dropped and the graph marked
    stale (its recorded config cleared), so the next ``search`` or ``index`` rebuilds it."""
    conn.execute("DROP TABLE IF EXISTS search_index")
    if ensure_search_table(conn):
        conn.execute("UPDATE graph_state SET value = '' WHERE key = 'config'")
