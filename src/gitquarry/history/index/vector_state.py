"""What an index holds for embedding, read without building an embedder or importing a
model runtime (numpy included): the configured namespace, how many commits lack a vector,
and a digest of the indexed state. Used by the daemon's ``history_embed``/``history_index``
"done" tests and by ``embedded_fraction`` in answers."""

from __future__ import annotations

import hashlib
import sqlite3

from gitquarry.history.index.document import default_format


def configured_namespace_id(
    conn: sqlite3.Connection, provider: str, model: str = ""
) -> int | None:
    """Id of the newest namespace of ``provider`` (and ``model`` when non-empty) for the
    current commit document format, found without building the embedder (no model
    runtime is imported); None when the index has none yet."""
    sql = ("SELECT id FROM embedding_namespaces WHERE provider = ? AND text_format = ?"
           + (" AND model = ?" if model else "") + " ORDER BY id DESC LIMIT 1")
    params = [provider, default_format().name] + ([model] if model else [])
    row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else None


def namespace_id_of(conn: sqlite3.Connection, key: str) -> int | None:
    """Id of the namespace with ``key`` (an :class:`EmbeddingNamespace` key), or None."""
    row = conn.execute("SELECT id FROM embedding_namespaces WHERE key = ?", (key,)).fetchone()
    return int(row[0]) if row else None


def pending_count(conn: sqlite3.Connection, namespace_id: int | None) -> int:
    """Number of commits without a vector in the namespace (every commit when None).

    Two counts, not an anti-join: every connection enforces foreign keys, so each vector
    row references an existing commit (a deleted commit takes its vectors with it) and the
    difference is exact. Cost: ~40 ms at 100,000 commits (an index scan); the anti-join
    over ``git_commits`` takes ~0.5-1.5 s there."""
    commits = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    if namespace_id is None:
        return commits
    vectors = int(conn.execute(
        "SELECT count(*) FROM commit_vectors WHERE namespace_id = ?", (namespace_id,)
    ).fetchone()[0])
    return max(0, commits - vectors)


def indexed_state_digest(conn: sqlite3.Connection) -> str:
    """SHA-256 (hex) over every indexed ref tip (``repo_refs``) and the commit count: the
    identity of the commit set an index holds (indexing is by reachability from those
    tips), so any new, amended, fetched or pruned commit changes it."""
    digest = hashlib.sha256()
    for repo_id, ref, tip in conn.execute(
        "SELECT repo_id, ref, tip FROM repo_refs ORDER BY repo_id, ref"
    ):
        name = ref if isinstance(ref, bytes) else str(ref).encode("utf-8", "surrogateescape")
        digest.update(f"{repo_id}\0".encode() + name + f"\0{tip}\n".encode())
    count = conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM git_commits").fetchone()[0]
    digest.update(f"commits {count} {newest}".encode())
    return digest.hexdigest()
