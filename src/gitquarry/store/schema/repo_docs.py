"""Schema of the repository-docs cache: its own SQLite file (``<index dir>/repo_docs.db``).

The cache holds **no document text and no plaintext terms**: only revision-set metadata,
file membership (path, blob id, size, content class, exclusion reason), chunk locators
(byte and line ranges, digests) and vectors. Document bytes are always read from Git.

- ``revision_sets``: one row per immutable set (id = sha256 of its canonical identity; see
  ``gitquarry.repo_docs.identity``), its state (``building``, ``partial``, ``ready``,
  ``superseded``, ``failed``) and coverage counts.
- ``set_files(set_id, path, blob_oid, size, content_class, authority, exclusion)``: every
  selected path; ``exclusion`` is the reason code for an ineligible one (NULL = eligible).
- ``blobs(blob_oid, blob_sha256, size, verdict)``: content checks already made (``ok`` or
  a reason: ``binary``, ``invalid_utf8``, ``lfs_pointer``).
- ``chunkings(blob_sha256, content_class, chunk_policy, n_chunks)`` and
  ``blob_chunks(..., ordinal, chunk_id)``: a blob's chunks under a chunk policy, computed once.
- ``chunks(chunk_id, byte_start, byte_end, line_start, line_end, raw_slice_sha256,
  heading_lines)``: locators; bytes are 0-based with an exclusive end, lines 1-based
  inclusive; ``heading_lines`` the line numbers of the heading path's titles (numbers only).
- ``set_chunks(set_id, path, ordinal, chunk_id)``: the chunks of a set, in document order.
- ``namespaces(id, key, dimensions)`` and ``vectors(namespace_id, chunk_id,
  embed_input_sha256, vector)``: little-endian float32, L2-normalised, per namespace.
"""

from __future__ import annotations

import sqlite3

from gitquarry.store.migrations import Migrations, run_script

#: The cache's own migration set (it is not the main index).
REPO_DOCS_MIGRATIONS = Migrations()
REQUIRED_TABLES = (
    "_migrations", "revision_sets", "set_files", "blobs", "chunkings", "blob_chunks", "chunks",
    "set_chunks", "namespaces", "vectors", "heading_vectors", "chunk_headings",
)


@REPO_DOCS_MIGRATIONS("repo_docs_0001_init")
def _init(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE revision_sets (
            set_id TEXT PRIMARY KEY,
            repo_id TEXT NOT NULL,
            git_store_ref TEXT NOT NULL,
            commit_oid TEXT NOT NULL,
            policy_hash TEXT NOT NULL,
            policy_source TEXT NOT NULL,
            policy_file TEXT,
            chunk_policy TEXT NOT NULL,
            namespace_key TEXT NOT NULL,
            overlay_digest TEXT,
            authority TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN
                ('building', 'partial', 'ready', 'superseded', 'failed')),
            eligible_files INTEGER NOT NULL DEFAULT 0,
            eligible_bytes INTEGER NOT NULL DEFAULT 0,
            eligible_chunks INTEGER NOT NULL DEFAULT 0,
            embedded_chunks INTEGER NOT NULL DEFAULT 0,
            reused_chunks INTEGER NOT NULL DEFAULT 0,
            failed_chunks INTEGER NOT NULL DEFAULT 0,
            missing_objects INTEGER NOT NULL DEFAULT 0,
            not_selected INTEGER NOT NULL DEFAULT 0,
            exclusions TEXT NOT NULL DEFAULT '{}',
            error_code TEXT,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            completed_at INTEGER
        );
        CREATE INDEX revision_sets_lookup ON revision_sets
            (git_store_ref, commit_oid, policy_hash, chunk_policy, namespace_key);
        CREATE TABLE set_files (
            set_id TEXT NOT NULL REFERENCES revision_sets(set_id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            blob_oid TEXT NOT NULL,
            size INTEGER NOT NULL,
            content_class TEXT,
            authority TEXT NOT NULL DEFAULT 'git',
            exclusion TEXT,
            PRIMARY KEY (set_id, path)
        ) WITHOUT ROWID;
        CREATE TABLE blobs (
            blob_oid TEXT PRIMARY KEY,
            blob_sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            verdict TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE chunkings (
            blob_sha256 TEXT NOT NULL,
            content_class TEXT NOT NULL,
            chunk_policy TEXT NOT NULL,
            n_chunks INTEGER NOT NULL,
            PRIMARY KEY (blob_sha256, content_class, chunk_policy)
        ) WITHOUT ROWID;
        CREATE TABLE blob_chunks (
            blob_sha256 TEXT NOT NULL,
            content_class TEXT NOT NULL,
            chunk_policy TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            chunk_id TEXT NOT NULL,
            PRIMARY KEY (blob_sha256, content_class, chunk_policy, ordinal)
        ) WITHOUT ROWID;
        CREATE TABLE chunks (
            chunk_id TEXT PRIMARY KEY,
            byte_start INTEGER NOT NULL,
            byte_end INTEGER NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            raw_slice_sha256 TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE set_chunks (
            set_id TEXT NOT NULL REFERENCES revision_sets(set_id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            chunk_id TEXT NOT NULL,
            PRIMARY KEY (set_id, path, ordinal)
        ) WITHOUT ROWID;
        CREATE INDEX set_chunks_chunk ON set_chunks (chunk_id);
        CREATE TABLE namespaces (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            dimensions INTEGER NOT NULL
        );
        CREATE TABLE vectors (
            namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
            chunk_id TEXT NOT NULL,
            embed_input_sha256 TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (namespace_id, chunk_id)
        ) WITHOUT ROWID;
        """,
    )


@REPO_DOCS_MIGRATIONS("repo_docs_0002_heading_lines")
def _heading_lines(conn: sqlite3.Connection) -> None:
    # the line numbers (never the text) of a chunk's heading path, comma-separated; '' for
    # chunks stored before this step (their paths are recomputed by parsing the blob)
    conn.execute("ALTER TABLE chunks ADD COLUMN heading_lines TEXT NOT NULL DEFAULT ''")


@REPO_DOCS_MIGRATIONS("s4-docs-vec_0003_heading_vectors")
def _heading_vectors(conn: sqlite3.Connection) -> None:
    # a second vector per chunk: its heading path (document title + headings) embedded alone,
    # stored once per distinct text (``text_sha256``: sha256 of the embedded text, never the
    # text) and linked to the chunks that use it. A cache from before this step has vectors
    # and no links: search says so and ranks by the chunk vectors alone until the next
    # ``repo-docs index`` adds them (``repo_docs.heading_vectors``)
    run_script(
        conn,
        """
        CREATE TABLE heading_vectors (
            namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
            text_sha256 TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (namespace_id, text_sha256)
        ) WITHOUT ROWID;
        CREATE TABLE chunk_headings (
            namespace_id INTEGER NOT NULL REFERENCES namespaces(id),
            chunk_id TEXT NOT NULL,
            text_sha256 TEXT NOT NULL,
            PRIMARY KEY (namespace_id, chunk_id)
        ) WITHOUT ROWID;
        """,
    )
