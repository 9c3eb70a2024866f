"""Compute missing commit vectors for an embedding namespace, in resumable batches.

Keyword search works before this runs; vectors fill in afterwards, newest commits first (a
user asks about recent work first, and a long first run is useful early). Each batch is
embedded, then written in one transaction, so an interrupted run keeps every finished batch
and the next run continues with the commits that still have no vector. A commit whose document
text has the same SHA-256 as one already embedded in the namespace reuses that vector.

When the model or the document format changes (a new namespace for the same provider), the
commits are re-embedded into the new namespace, newest first; the report names the namespaces
with vectors it replaces. Once every commit has a vector in the new namespace, the vectors of
retired namespaces (a model id the provider no longer produces, or an earlier document format
of the same model) are deleted; those of another model the user may switch back to are kept.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

from gitquarry.embedding import Embedder, EmbeddingNamespace, to_blob
from gitquarry.history.index.document import DocumentFormat, default_format
from gitquarry.history.index.progress import NullProgress, Progress
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
    #: keys of earlier namespaces of the same provider this run re-embeds for
    replaces: list[str] = field(default_factory=list)
    #: of those, the ones whose vectors were deleted (the new namespace is complete)
    removed: list[str] = field(default_factory=list)

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
    """Ids of commits without a vector in the namespace, newest first (committer time
    descending, then id descending)."""
    return [
        int(r[0])
        for r in store.conn.execute(
            "SELECT c.id FROM git_commits c WHERE NOT EXISTS (SELECT 1 FROM commit_vectors v "
            "WHERE v.namespace_id = ? AND v.commit_id = c.id) "
            "ORDER BY c.timestamp DESC, c.id DESC",
            (namespace_id,),
        )
    ]


def superseded_namespaces(
    store: Store, namespace: EmbeddingNamespace, corpus_prefix: str = "commit-"
) -> list[tuple[int, str, str, str]]:
    """``(id, key, model, text_format)`` of the other namespaces of the same provider and
    corpus that hold vectors (another model id or document format than ``namespace``)."""
    return [
        (int(r[0]), str(r[1]), str(r[2]), str(r[3]))
        for r in store.conn.execute(
            "SELECT n.id, n.key, n.model, n.text_format FROM embedding_namespaces n "
            "WHERE n.provider = ? AND n.key != ? AND substr(n.text_format, 1, ?) = ? "
            "AND EXISTS (SELECT 1 FROM commit_vectors v WHERE v.namespace_id = n.id) "
            "ORDER BY n.id",
            (namespace.provider, namespace.key, len(corpus_prefix), corpus_prefix),
        )
    ]


def _retired(namespace: EmbeddingNamespace, embedder: Embedder, model: str, fmt: str) -> bool:
    """Vectors this version can never use again: the provider's retired model ids, or the
    current model with a commit document format other than the current one. (A namespace of
    another current model, e.g. after a config switch, is kept for switching back.)"""
    return model in embedder.retired_models or (
        model == namespace.model and fmt != namespace.text_format
    )


def embed_pending(
    store: Store,
    embedder: Embedder,
    *,
    batch_size: int = 100,
    progress: Progress | None = None,
    document_format: DocumentFormat | None = None,
) -> EmbedReport:
    """Embed every commit lacking a vector in ``embedder``'s namespace for the commit
    document format (default: :func:`~gitquarry.history.index.document.default_format`), newest
    commits first.

    :raises EmbeddingError: the provider failed; finished batches stay committed.
    """
    progress = progress or NullProgress()
    started = time.monotonic()
    fmt = document_format or default_format()
    namespace = embedder.namespace(fmt.name)
    ns_id = ensure_namespace(store, namespace)
    report = EmbedReport(namespace=namespace.key)
    pending = pending_commit_ids(store, ns_id)
    superseded = superseded_namespaces(store, namespace)
    report.replaces = [key for _, key, _, _ in superseded]
    model_tokens = embedder.max_tokens
    budget = min(fmt.max_tokens, model_tokens)
    if pending:
        what = "re-embedding" if superseded else "embedding"
        progress.phase(f"{what}, newest first ({namespace.model})", len(pending))
    conn = store.conn
    for start in range(0, len(pending), batch_size):
        ids = pending[start : start + batch_size]
        marks = ",".join("?" * len(ids))
        by_id = {
            int(r["id"]): r
            for r in conn.execute(
                "SELECT id, title, message, author, committer, files_changed, "
                "gq_inflate(delta_truncated) AS delta_truncated "
                f"FROM git_commits WHERE id IN ({marks})",
                ids,
            )
        }
        rows = [by_id[i] for i in ids if i in by_id]
        texts = [fmt.build(r, model_tokens) for r in rows]
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
            vectors = embedder.embed([texts[i] for i in todo], max_tokens=budget)
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
    retired = [(i, key) for i, key, model, old_fmt in superseded
               if _retired(namespace, embedder, model, old_fmt)]
    if retired and report.with_vectors >= report.total_commits:
        with store.atomic() as c:
            for old_id, key in retired:
                c.execute("DELETE FROM commit_vectors WHERE namespace_id = ?", (old_id,))
                report.removed.append(key)
    report.seconds = time.monotonic() - started
    return report
