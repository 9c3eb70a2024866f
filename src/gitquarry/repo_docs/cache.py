"""The locator-only docs cache (``repo_docs.db``): revision sets, membership, chunks, vectors.

Every method owns its transaction. Nothing here ever receives document text: callers pass
locators, digests and vectors (schema: ``gitquarry.store.schema.repo_docs``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.errors import DOCS_CACHE_NAME
from gitquarry.repo_docs.plan import DocFile, Exclusion
from gitquarry.store import safe_paths

if TYPE_CHECKING:  # NumPy only with vectors: full-text search starts without it
    import numpy as np

    from gitquarry.config import Config
    from gitquarry.repo_docs.chunker import ChunkSpan
    from gitquarry.repo_docs.registry import Binding
    from gitquarry.store import Store

DB_NAME = DOCS_CACHE_NAME  # "repo_docs.db"
#: embedding text format of repository-docs chunks (part of the namespace)
TEXT_FORMAT = "repo-docs-v1"


def cache_dir_for(binding: Binding, config: Config) -> Path:
    """Where the binding's docs cache lives: ``<repository>/<[indexing] index_dir>``.

    Checked as the workspace index's directory is (``store.safe_paths``): no component
    below the repository is a link or a non-directory, and git tracks nothing in it.
    :raises IndexPathUnsafeError: the checkout placed it.
    """
    configured = Path(os.path.expanduser(config.indexing.index_dir))
    directory = configured if configured.is_absolute() else binding.path / configured
    if safe_paths.check_state_dir(directory, binding.path):
        safe_paths.refuse_tracked(directory, binding.path)
    return directory


def parse_lines(text: str | None) -> tuple[int, ...]:
    """``"3,17"`` → ``(3, 17)``; ``""`` → ``()``."""
    return tuple(int(x) for x in text.split(",") if x.isdigit()) if text else ()
STATES = ("building", "partial", "ready", "superseded", "failed")


@dataclass(frozen=True)
class Locator:
    """A chunk of a set: where it is (``path``, blob) and its locator fields."""

    chunk_id: str
    path: str
    ordinal: int
    blob_oid: str
    authority: str
    byte_start: int
    byte_end: int
    line_start: int
    line_end: int
    raw_slice_sha256: str
    content_class: str
    heading_lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class SetRow:
    set_id: str
    repo_id: str
    git_store_ref: str
    commit_oid: str
    policy_hash: str
    policy_source: str
    policy_file: str | None
    chunk_policy: str
    namespace_key: str
    overlay_digest: str | None
    authority: str
    state: str
    eligible_files: int
    eligible_bytes: int
    eligible_chunks: int
    embedded_chunks: int
    reused_chunks: int
    failed_chunks: int
    missing_objects: int
    not_selected: int
    exclusions: str
    error_code: str | None
    created_at: int
    updated_at: int
    completed_at: int | None

    def coverage(self) -> dict[str, Any]:
        return {
            "state": self.state, "eligible_files": self.eligible_files,
            "eligible_chunks": self.eligible_chunks, "embedded_chunks": self.embedded_chunks,
            "reused_chunks": self.reused_chunks, "failed_chunks": self.failed_chunks,
            "missing_objects": self.missing_objects,
        }

    def public(self) -> dict[str, Any]:
        return {
            "revision_set_id": self.set_id, "commit_oid": self.commit_oid,
            "policy_hash": self.policy_hash, "policy_source": self.policy_source,
            "chunk_policy": self.chunk_policy, "namespace_id": self.namespace_key,
            "overlay_digest": self.overlay_digest, "authority": self.authority,
            "eligible_bytes": self.eligible_bytes, "not_selected_files": self.not_selected,
            "exclusions_by_reason": json.loads(self.exclusions), "error_code": self.error_code,
            "created_at": self.created_at, "updated_at": self.updated_at,
            "completed_at": self.completed_at, "coverage": self.coverage(),
        }


class DocsCache:
    """An open ``repo_docs.db``. ``writer`` (the docs indexer): a cache this installation did
    not create is set aside, or adopted when made by an older gitquarry (``store.trust``).
    :raises IndexCorruptError, IndexBusyError, IndexAccessError, SchemaTooNewError,
    IndexPathUnsafeError, IndexUntrustedError: as ``open_store``."""

    def __init__(self, path: Path, *, writer: bool = False) -> None:
        # the store and its schema only when a cache is opened (a search with no cache file,
        # the cold full-text case, never opens one)
        from gitquarry.store.connection import open_store
        from gitquarry.store.schema.repo_docs import REPO_DOCS_MIGRATIONS, REQUIRED_TABLES

        self.path = path
        self.store: Store = open_store(path, migrations=REPO_DOCS_MIGRATIONS,
                                       required_tables=REQUIRED_TABLES, writer=writer)
        self.conn = self.store.conn

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> DocsCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def data_version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    # -- sets ------------------------------------------------------------------------------

    def get_set(self, set_id: str) -> SetRow | None:
        row = self.conn.execute("SELECT * FROM revision_sets WHERE set_id = ?",
                                (set_id,)).fetchone()
        return SetRow(**dict(row)) if row else None

    def sets(self, git_store_ref: str | None = None) -> list[SetRow]:
        sql = "SELECT * FROM revision_sets"
        args: tuple[Any, ...] = ()
        if git_store_ref is not None:
            sql += " WHERE git_store_ref = ?"
            args = (git_store_ref,)
        sql += " ORDER BY updated_at DESC, set_id"
        return [SetRow(**dict(r)) for r in self.conn.execute(sql, args)]

    def begin_set(self, identity: dict[str, Any], *, set_id: str, policy_source: str,
                  policy_file: str | None, authority: str) -> SetRow:
        """Create the set in state ``building`` (or mark an existing unfinished one building
        again); returns its row."""
        now = int(time.time())
        with self.store.atomic() as conn:
            conn.execute(
                "INSERT INTO revision_sets (set_id, repo_id, git_store_ref, commit_oid, "
                "policy_hash, policy_source, policy_file, chunk_policy, namespace_key, "
                "overlay_digest, authority, state, created_at, updated_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?, 'building', ?, ?) "
                "ON CONFLICT(set_id) DO UPDATE SET state = 'building', updated_at = "
                "excluded.updated_at, error_code = NULL",
                (set_id, identity["repo_id"], identity["git_store_ref"], identity["commit"],
                 identity["policy_hash"], policy_source, policy_file,
                 identity["chunk_policy"], identity["namespace"], identity.get("overlay_digest"),
                 authority, now, now),
            )
        row = self.get_set(set_id)
        assert row is not None
        return row

    def finish_set(self, set_id: str, state: str, *, error_code: str | None = None,
                   **counts: int) -> None:
        if state not in STATES:
            raise ValueError(state)
        now = int(time.time())
        assignments = "".join(f", {k} = :{k}" for k in counts)
        with self.store.atomic() as conn:
            conn.execute(
                f"UPDATE revision_sets SET state = :state, error_code = :error, updated_at = :now,"
                f" completed_at = CASE WHEN :state IN ('ready','superseded','failed') THEN :now "
                f"ELSE completed_at END{assignments} WHERE set_id = :set_id",
                {"state": state, "error": error_code, "now": now, "set_id": set_id, **counts},
            )

    def write_membership(self, set_id: str, files: Sequence[DocFile],
                         exclusions: Sequence[Exclusion],
                         chunks: Sequence[tuple[str, int, str]], *, not_selected: int) -> None:
        """Replace the set's membership: eligible files, exclusions (with reasons) and its
        chunks ``(path, ordinal, chunk_id)``."""
        counts: dict[str, int] = {}
        for ex in exclusions:
            counts[ex.reason] = counts.get(ex.reason, 0) + 1
        with self.store.atomic() as conn:
            conn.execute("DELETE FROM set_files WHERE set_id = ?", (set_id,))
            conn.execute("DELETE FROM set_chunks WHERE set_id = ?", (set_id,))
            conn.executemany(
                "INSERT INTO set_files (set_id, path, blob_oid, size, content_class, authority,"
                " exclusion) VALUES (?,?,?,?,?,?,NULL)",
                [(set_id, f.path, f.blob_oid, f.size, f.content_class, f.authority)
                 for f in files],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO set_files (set_id, path, blob_oid, size, content_class,"
                " authority, exclusion) VALUES (?,?,?,?,NULL,'git',?)",
                [(set_id, e.path, e.blob_oid, e.size, e.reason) for e in exclusions],
            )
            conn.executemany(
                "INSERT INTO set_chunks (set_id, path, ordinal, chunk_id) VALUES (?,?,?,?)",
                [(set_id, p, o, c) for p, o, c in chunks],
            )
            conn.execute(
                "UPDATE revision_sets SET eligible_files = ?, eligible_bytes = ?, "
                "eligible_chunks = ?, not_selected = ?, exclusions = ?, missing_objects = ? "
                "WHERE set_id = ?",
                (len(files), sum(f.size for f in files), len(chunks), not_selected,
                 json.dumps(dict(sorted(counts.items()))),
                 counts.get("git_object_unavailable", 0), set_id),
            )

    def exclusions(self, set_id: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT path, exclusion FROM set_files WHERE set_id = ? AND exclusion IS NOT NULL "
            "ORDER BY path", (set_id,))]

    # -- blobs and chunks ------------------------------------------------------------------

    def blob_verdict(self, blob_oid: str) -> tuple[str, str] | None:
        """(blob sha256, verdict) of a blob already checked, or None."""
        row = self.conn.execute("SELECT blob_sha256, verdict FROM blobs WHERE blob_oid = ?",
                                (blob_oid,)).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def chunk_ids(self, blob_sha256: str, content_class: str,
                  chunk_policy: str) -> list[str] | None:
        """The blob's chunk ids in order, or None when it was never chunked under the policy."""
        row = self.conn.execute(
            "SELECT n_chunks FROM chunkings WHERE blob_sha256 = ? AND content_class = ? AND "
            "chunk_policy = ?", (blob_sha256, content_class, chunk_policy)).fetchone()
        if row is None:
            return None
        ids = [str(r[0]) for r in self.conn.execute(
            "SELECT chunk_id FROM blob_chunks WHERE blob_sha256 = ? AND content_class = ? AND "
            "chunk_policy = ? ORDER BY ordinal", (blob_sha256, content_class, chunk_policy))]
        return ids if len(ids) == int(row[0]) else None

    def record_blob(self, blob_oid: str, blob_sha256: str, size: int, verdict: str,
                    content_class: str | None = None, chunk_policy: str | None = None,
                    chunks: Sequence[tuple[str, ChunkSpan, str]] = ()) -> None:
        """Remember a checked blob and, for an eligible one, its chunks
        ``(chunk_id, span, raw_slice_sha256)``."""
        with self.store.atomic() as conn:
            conn.execute("INSERT OR REPLACE INTO blobs VALUES (?,?,?,?)",
                         (blob_oid, blob_sha256, size, verdict))
            if content_class is None or chunk_policy is None:
                return
            conn.executemany(
                "INSERT OR IGNORE INTO chunks (chunk_id, byte_start, byte_end, line_start, "
                "line_end, raw_slice_sha256, heading_lines) VALUES (?,?,?,?,?,?,?)",
                [(cid, s.byte_start, s.byte_end, s.line_start, s.line_end, digest,
                  ",".join(map(str, s.heading_lines))) for cid, s, digest in chunks],
            )
            conn.execute("DELETE FROM blob_chunks WHERE blob_sha256 = ? AND content_class = ? "
                         "AND chunk_policy = ?", (blob_sha256, content_class, chunk_policy))
            conn.executemany(
                "INSERT INTO blob_chunks VALUES (?,?,?,?,?)",
                [(blob_sha256, content_class, chunk_policy, i, cid)
                 for i, (cid, _s, _d) in enumerate(chunks)],
            )
            conn.execute("INSERT OR REPLACE INTO chunkings VALUES (?,?,?,?)",
                         (blob_sha256, content_class, chunk_policy, len(chunks)))

    def locators(self, set_id: str) -> list[Locator]:
        """Every chunk of the set, by path then ordinal."""
        rows = self.conn.execute(
            "SELECT sc.chunk_id, sc.path, sc.ordinal, f.blob_oid, f.authority, c.byte_start, "
            "c.byte_end, c.line_start, c.line_end, c.raw_slice_sha256, f.content_class, "
            "c.heading_lines "
            "FROM set_chunks sc JOIN chunks c ON c.chunk_id = sc.chunk_id "
            "JOIN set_files f ON f.set_id = sc.set_id AND f.path = sc.path "
            "WHERE sc.set_id = ? ORDER BY sc.path, sc.ordinal", (set_id,))
        return [Locator(str(r[0]), str(r[1]), int(r[2]), str(r[3]), str(r[4]), int(r[5]),
                        int(r[6]), int(r[7]), int(r[8]), str(r[9]), str(r[10]),
                        parse_lines(r[11])) for r in rows]

    # -- vectors ---------------------------------------------------------------------------

    def namespace_id(self, key: str, dimensions: int, *, create: bool) -> int | None:
        row = self.conn.execute("SELECT id, dimensions FROM namespaces WHERE key = ?",
                                (key,)).fetchone()
        if row is not None:
            return int(row[0])
        if not create:
            return None
        with self.store.atomic() as conn:
            cur = conn.execute("INSERT INTO namespaces (key, dimensions) VALUES (?, ?)",
                               (key, dimensions))
            return int(cur.lastrowid or 0)

    def _present(self, table: str, column: str, namespace_id: int,
                 keys: Iterable[str]) -> set[str]:
        """The ``keys`` that ``table`` holds in ``column`` for ``namespace_id`` (asked 500
        at a time: SQLite's bound-parameter limit). ``table``/``column`` are this module's
        own constants, never input."""
        wanted = list(dict.fromkeys(keys))
        have: set[str] = set()
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            marks = ",".join("?" * len(part))
            have.update(str(r[0]) for r in self.conn.execute(
                f"SELECT {column} FROM {table} WHERE namespace_id = ? AND {column} IN "
                f"({marks})", (namespace_id, *part)))
        return have

    def chunks_with_vectors(self, namespace_id: int, chunk_ids: Iterable[str]) -> set[str]:
        """The ``chunk_ids`` that already have a vector in the namespace."""
        return self._present("vectors", "chunk_id", namespace_id, chunk_ids)

    def write_vectors(self, namespace_id: int,
                      rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        """Store ``(chunk_id, embedding-input sha256, vector)`` rows in one transaction."""
        import numpy as np

        from gitquarry.embedding.base import VECTOR_DTYPE

        with self.store.atomic() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (namespace_id, chunk_id, embed_input_sha256, "
                "vector) VALUES (?,?,?,?)",
                [(namespace_id, cid, sha, np.asarray(vec, dtype=VECTOR_DTYPE).tobytes())
                 for cid, sha, vec in rows],
            )

    def set_vectors(self, set_id: str, namespace_id: int,
                    dimensions: int) -> tuple[list[str], np.ndarray]:
        """(chunk ids, float32 matrix) of the set's chunks that have a vector, one row per
        distinct chunk id, in chunk id order."""
        import numpy as np

        from gitquarry.embedding.base import VECTOR_DTYPE

        ids: list[str] = []
        blobs: list[bytes] = []
        for cid, blob in self.conn.execute(
            "SELECT DISTINCT v.chunk_id, v.vector FROM set_chunks sc JOIN vectors v ON "
            "v.chunk_id = sc.chunk_id AND v.namespace_id = ? WHERE sc.set_id = ? "
            "ORDER BY v.chunk_id", (namespace_id, set_id)):
            ids.append(str(cid))
            blobs.append(bytes(blob))
        if not ids:
            return [], np.zeros((0, dimensions), dtype=np.float32)
        matrix = np.frombuffer(b"".join(blobs), dtype=VECTOR_DTYPE).reshape(len(ids), -1)
        return ids, matrix.astype(np.float32)

    # -- heading vectors (``repo_docs.heading_vectors``) -----------------------------------

    def heading_digests(self, namespace_id: int, digests: Iterable[str]) -> set[str]:
        """The ``digests`` (heading-text sha256) that already have a heading vector."""
        return self._present("heading_vectors", "text_sha256", namespace_id, digests)

    def write_embedded(self, namespace_id: int,
                       rows: Sequence[tuple[str, str, np.ndarray]],
                       headings: Sequence[tuple[str, np.ndarray]],
                       links: Sequence[tuple[str, str]]) -> None:
        """One transaction: chunk vectors ``(chunk_id, embedding-input sha256, vector)``,
        new heading vectors ``(text sha256, vector)`` and chunk → heading links
        ``(chunk_id, text sha256)`` (each link's heading vector stored now or before)."""
        import numpy as np

        from gitquarry.embedding.base import VECTOR_DTYPE

        with self.store.atomic() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (namespace_id, chunk_id, embed_input_sha256, "
                "vector) VALUES (?,?,?,?)",
                [(namespace_id, cid, sha, np.asarray(vec, dtype=VECTOR_DTYPE).tobytes())
                 for cid, sha, vec in rows],
            )
            conn.executemany(
                "INSERT OR IGNORE INTO heading_vectors (namespace_id, text_sha256, vector) "
                "VALUES (?,?,?)",
                [(namespace_id, sha, np.asarray(vec, dtype=VECTOR_DTYPE).tobytes())
                 for sha, vec in headings],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO chunk_headings (namespace_id, chunk_id, text_sha256) "
                "VALUES (?,?,?)", [(namespace_id, cid, sha) for cid, sha in links],
            )

    def chunks_without_headings(self, set_id: str, namespace_id: int) -> list[str]:
        """The set's chunk ids that have a vector but no heading vector (a cache from before
        heading vectors, or vectors replayed from a checkpoint), in chunk id order."""
        return [str(r[0]) for r in self.conn.execute(
            "SELECT DISTINCT v.chunk_id FROM set_chunks sc JOIN vectors v ON "
            "v.chunk_id = sc.chunk_id AND v.namespace_id = ? LEFT JOIN chunk_headings ch ON "
            "ch.namespace_id = v.namespace_id AND ch.chunk_id = v.chunk_id LEFT JOIN "
            "heading_vectors h ON h.namespace_id = ch.namespace_id AND h.text_sha256 = "
            "ch.text_sha256 WHERE sc.set_id = ? AND h.vector IS NULL ORDER BY v.chunk_id",
            (namespace_id, set_id))]

    def heading_matrix(self, set_id: str, namespace_id: int, chunk_ids: Sequence[str],
                       dimensions: int) -> tuple[np.ndarray, int]:
        """(float32 ``(len(chunk_ids), d)`` matrix of the heading vectors of the set's chunks,
        rows aligned with ``chunk_ids`` (``set_vectors``' ids), number of chunks that have
        none: their rows are 0). One read over the set, like ``set_vectors``."""
        import numpy as np

        from gitquarry.embedding.base import VECTOR_DTYPE

        ids: list[str] = []
        blobs: list[bytes] = []
        for cid, blob in self.conn.execute(
                "SELECT DISTINCT ch.chunk_id, h.vector FROM set_chunks sc JOIN chunk_headings "
                "ch ON ch.chunk_id = sc.chunk_id AND ch.namespace_id = ? JOIN heading_vectors "
                "h ON h.namespace_id = ch.namespace_id AND h.text_sha256 = ch.text_sha256 "
                "WHERE sc.set_id = ? ORDER BY ch.chunk_id", (namespace_id, set_id)):
            ids.append(str(cid))
            blobs.append(bytes(blob))
        width = 4 * dimensions
        if ids == list(chunk_ids) and all(len(b) == width for b in blobs):  # the usual case
            matrix = np.frombuffer(b"".join(blobs), dtype=VECTOR_DTYPE).reshape(len(ids), -1)
            return matrix.astype(np.float32), 0
        at = {c: i for i, c in enumerate(chunk_ids)}
        out = np.zeros((len(chunk_ids), dimensions), dtype=np.float32)
        found = 0
        for cid, blob in zip(ids, blobs, strict=True):
            if cid in at and len(blob) == width:
                out[at[cid]] = np.frombuffer(blob, dtype=VECTOR_DTYPE)
                found += 1
        return out, len(chunk_ids) - found

    def membership_set(self, git_store_ref: str, commit: str, policy_hash: str,
                       chunk_policy: str, overlay_digest: str | None) -> SetRow | None:
        """A set whose membership covers exactly this revision (any namespace), preferring
        ``ready``; None when there is none. ``superseded`` and ``failed`` sets never count."""
        row = self.conn.execute(
            "SELECT * FROM revision_sets WHERE git_store_ref = ? AND commit_oid = ? AND "
            "policy_hash = ? AND chunk_policy = ? AND coalesce(overlay_digest, '') = ? AND "
            "state IN ('ready', 'partial') ORDER BY state = 'ready' DESC, updated_at DESC "
            "LIMIT 1",
            (git_store_ref, commit, policy_hash, chunk_policy, overlay_digest or ""),
        ).fetchone()
        return SetRow(**dict(row)) if row else None

    def known_chunks(self, blob_oid: str, content_class: str, chunk_policy: str
                     ) -> list[tuple[str, int, int, int, int, str, tuple[int, ...]]] | None:
        """The stored chunks of a blob already chunked under ``chunk_policy``, in order:
        ``(chunk_id, byte_start, byte_end, line_start, line_end, raw_slice_sha256,
        heading_lines)``; None when the blob was never chunked so."""
        verdict = self.blob_verdict(blob_oid)
        if verdict is None or verdict[1] != "ok":
            return None
        ids = self.chunk_ids(verdict[0], content_class, chunk_policy)
        if ids is None:
            return None
        rows = {str(r[0]): (str(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]), str(r[5]),
                            parse_lines(r[6]))
                for r in self.conn.execute(
                    "SELECT c.chunk_id, c.byte_start, c.byte_end, c.line_start, c.line_end, "
                    "c.raw_slice_sha256, c.heading_lines FROM blob_chunks b JOIN chunks c ON "
                    "c.chunk_id = "
                    "b.chunk_id WHERE b.blob_sha256 = ? AND b.content_class = ? AND "
                    "b.chunk_policy = ?", (verdict[0], content_class, chunk_policy))}
        if len(rows) != len(set(ids)):
            return None
        return [rows[i] for i in ids]
