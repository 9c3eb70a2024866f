"""Compute missing commit vectors for an embedding namespace, in resumable batches.

Keyword search works before this runs; vectors fill in afterwards. Each batch is embedded,
then written in one transaction, so an interrupted run keeps every finished batch and the next
run continues with the commits that still have no vector. A commit whose document text has
the same SHA-256 as one already embedded in the namespace reuses that vector.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

from gitquarry.embedding import Embedder, EmbeddingNamespace, char_budget, to_blob
from gitquarry.history.document import TEXT_FORMAT, commit_document
from gitquarry.history.progress import NullProgress, Progress
from gitquarry.store import Store


@dataclass
class EmbedReport:
    """``embedded``: vectors computed; ``reused``: copied from identical text; ``seconds``:
    wall time of the run; ``texts_per_s``: computed vectors per second of model time."""

    namespace: str
    embedded: int = 0
    reused: int = 0
    total_commits: int = 0
    with_vectors: int = 0
    seconds: float = 0.0
    model_seconds: float = 0.0

    @property
    def texts_per_s(self) -> float:
        return self.embedded / self.model_seconds if self.model_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "texts_per_s": round(self.texts_per_s, 2)}


def ensure_namespace(store: Store, namespace: EmbeddingNamespace) -> int:
    """The row id of ``namespace`` in ``embedding_namespaces``, inserting it if new."""
    with store.atomic() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO embedding_namespaces "
            "(key, provider, model, dimensions, text_format, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (namespace.key, namespace.provider, namespace.model, namespace.dimensions,
             namespace.text_format, int(time.time())),
        )
        row = conn.execute(
            "SELECT id FROM embedding_namespaces WHERE key = ?", (namespace.key,)
        ).fetchone()
    return int(row[0])


def pending_commit_ids(store: Store, namespace_id: int) -> list[int]:
    """Ids of commits without a vector in the namespace, ascending."""
    return [
        int(r[0])
        for r in store.conn.execute(
            "SELECT c.id FROM git_commits c WHERE NOT EXISTS (SELECT 1 FROM commit_vectors v "
            "WHERE v.namespace_id = ? AND v.commit_id = c.id) ORDER BY c.id",
            (namespace_id,),
        )
    ]


def embed_pending(
    store: Store,
    embedder: Embedder,
    *,
    batch_size: int = 100,
    progress: Progress | None = None,
) -> EmbedReport:
    """Embed every commit lacking a vector in ``embedder``'s namespace for ``TEXT_FORMAT``.

    :raises EmbeddingError: the provider failed; finished batches stay committed.
    """
    progress = progress or NullProgress()
    started = time.monotonic()
    namespace = embedder.namespace(TEXT_FORMAT)
    ns_id = ensure_namespace(store, namespace)
    report = EmbedReport(namespace=namespace.key)
    pending = pending_commit_ids(store, ns_id)
    max_chars = char_budget(embedder.max_tokens)
    if pending:
        progress.phase(f"embedding ({namespace.model})", len(pending))
    conn = store.conn
    for start in range(0, len(pending), batch_size):
        ids = pending[start : start + batch_size]
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            "SELECT id, title, message, author, committer, files_changed, delta_truncated "
            f"FROM git_commits WHERE id IN ({marks}) ORDER BY id",
            ids,
        ).fetchall()
        texts = [commit_document(r, max_chars) for r in rows]
        shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        sha_marks = ",".join("?" * len(shas))
        reusable = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT text_sha256, vector FROM commit_vectors WHERE namespace_id = ? "
                f"AND text_sha256 IN ({sha_marks})",
                [ns_id, *shas],
            )
        }
        todo = [i for i, sha in enumerate(shas) if sha not in reusable]
        blobs: dict[int, bytes] = {}
        if todo:
            t0 = time.monotonic()
            vectors = embedder.embed([texts[i] for i in todo])
            report.model_seconds += time.monotonic() - t0
            for j, i in enumerate(todo):
                blobs[i] = to_blob(vectors[j])
        with store.atomic() as c:
            c.executemany(
                "INSERT OR REPLACE INTO commit_vectors (namespace_id, commit_id, text_sha256, "
                "vector) VALUES (?, ?, ?, ?)",
                [
                    (ns_id, int(rows[i]["id"]), shas[i], blobs.get(i) or reusable[shas[i]])
                    for i in range(len(rows))
                ],
            )
        report.embedded += len(todo)
        report.reused += len(rows) - len(todo)
        progress.advance(len(ids))
    report.total_commits = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
    report.with_vectors = int(
        conn.execute(
            "SELECT count(*) FROM commit_vectors WHERE namespace_id = ?", (ns_id,)
        ).fetchone()[0]
    )
    report.seconds = time.monotonic() - started
    return report
