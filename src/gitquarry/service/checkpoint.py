"""Vector-only provider checkpoints: vectors a provider already produced survive a failed
write, a writer-contention delay, a cancel-and-resubmit or a ``kill -9``, and are replayed
instead of calling the provider again.

``<state dir>/checkpoints.db`` holds, per vector: the provider identity (provider, model,
dimensions), the SHA-256 of the exact input text, the little-endian float32 vector, a SHA-256
of the vector bytes, the job's work key and the time. **No text**: only the digest of it.
A row whose digest or length does not match, or a file SQLite cannot read, is a cache miss
(the corrupt file is moved aside and a new one started), never an error.

Retention (``prune``): rows older than 7 days; rows of jobs no longer active when the set of
active work keys is known (orphans); then oldest first until the file holds at most 512 MiB of
vectors.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gitquarry.embedding.base import Embedder, from_blob, to_blob

log = logging.getLogger(__name__)

MAX_AGE_S = 7 * 86_400
MAX_BYTES = 512 * 1024 * 1024


@dataclass
class CheckpointStats:
    """Counters of one embedding run: ``replayed`` vectors came from checkpoints,
    ``computed`` from the provider; ``provider_calls`` is the number of provider calls."""

    replayed: int = 0
    computed: int = 0
    provider_calls: int = 0
    corrupt: int = 0


class CheckpointStore:
    """The checkpoint file. Thread-safe; every failure to read or write is logged and
    treated as a miss (checkpoints are an optimisation, never a source of truth)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        from gitquarry.service.paths import private_file

        for attempt in range(2):
            try:
                private_file(self.path)
                conn = sqlite3.connect(str(self.path), timeout=2.0, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (identity TEXT NOT NULL, "
                    "text_sha256 TEXT NOT NULL, dimensions INTEGER NOT NULL, vector BLOB NOT "
                    "NULL, vector_sha256 TEXT NOT NULL, work_key TEXT NOT NULL, created_at REAL "
                    "NOT NULL, PRIMARY KEY (identity, text_sha256))"
                )
                self._conn = conn
                return conn
            except sqlite3.DatabaseError as exc:
                if attempt:
                    raise
                log.warning("checkpoint file unreadable (%s); starting a new one", exc)
                self._move_aside()
        raise AssertionError("unreachable")

    def _move_aside(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                p.replace(Path(str(p) + ".corrupt"))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def load(self, identity: str, digests: Sequence[str], dimensions: int,
             stats: CheckpointStats | None = None) -> dict[str, np.ndarray]:
        """Vectors checkpointed for ``digests`` (text SHA-256) under ``identity``."""
        found: dict[str, np.ndarray] = {}
        if not digests:
            return found
        with self._lock:
            try:
                conn = self._open()
                for start in range(0, len(digests), 500):
                    part = list(digests[start : start + 500])
                    marks = ",".join("?" * len(part))
                    for sha, dims, blob, vsha in conn.execute(
                        "SELECT text_sha256, dimensions, vector, vector_sha256 FROM vectors "
                        f"WHERE identity = ? AND text_sha256 IN ({marks})", [identity, *part],
                    ):
                        ok = dims == dimensions and isinstance(blob, bytes) and (
                            hashlib.sha256(blob).hexdigest() == vsha
                        )
                        if not ok:
                            if stats is not None:
                                stats.corrupt += 1
                            continue
                        found[sha] = from_blob(blob, dimensions)
            except sqlite3.Error as exc:
                log.warning("checkpoint read failed (%s): treated as a miss", exc)
                self._reset_after_error(exc)
        return found

    def save(self, identity: str, work_key: str, rows: Sequence[tuple[str, np.ndarray]]) -> None:
        """Checkpoint ``(text_sha256, vector)`` rows; best effort."""
        if not rows:
            return
        now = time.time()
        with self._lock:
            try:
                conn = self._open()
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.executemany(
                        "INSERT OR REPLACE INTO vectors (identity, text_sha256, dimensions, "
                        "vector, vector_sha256, work_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [
                            (identity, sha, int(vec.shape[0]), blob,
                             hashlib.sha256(blob).hexdigest(), work_key, now)
                            for sha, vec in rows
                            for blob in (to_blob(vec),)
                        ],
                    )
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                log.warning("checkpoint write failed (%s); vectors not checkpointed", exc)
                self._reset_after_error(exc)

    def _reset_after_error(self, exc: sqlite3.Error) -> None:
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._move_aside()

    def discard(self, work_key: str) -> int:
        """Drop a finished job's checkpoints (its vectors are in the index now)."""
        with self._lock:
            try:
                conn = self._open()
                return conn.execute("DELETE FROM vectors WHERE work_key = ?", (work_key,)).rowcount
            except sqlite3.Error as exc:
                log.warning("checkpoint cleanup failed (%s)", exc)
                return 0

    def prune(self, *, active_work_keys: Collection[str] | None, now: float | None = None,
              max_age_s: float = MAX_AGE_S, max_bytes: int = MAX_BYTES) -> dict[str, int]:
        """Apply retention; returns deleted row counts and vector bytes before/after."""
        now = time.time() if now is None else now
        with self._lock:
            try:
                conn = self._open()
                before = int(conn.execute(
                    "SELECT coalesce(sum(length(vector)), 0) FROM vectors").fetchone()[0])
                aged = conn.execute("DELETE FROM vectors WHERE created_at < ?",
                                    (now - max_age_s,)).rowcount
                orphans = 0
                if active_work_keys is not None:
                    keys = {r[0] for r in conn.execute("SELECT DISTINCT work_key FROM vectors")}
                    for key in keys - set(active_work_keys):
                        orphans += conn.execute("DELETE FROM vectors WHERE work_key = ?",
                                                (key,)).rowcount
                over = 0
                total = int(conn.execute(
                    "SELECT coalesce(sum(length(vector)), 0) FROM vectors").fetchone()[0])
                if total > max_bytes:
                    for rowid, size in conn.execute(
                        "SELECT rowid, length(vector) FROM vectors ORDER BY created_at, rowid"
                    ).fetchall():
                        if total <= max_bytes:
                            break
                        conn.execute("DELETE FROM vectors WHERE rowid = ?", (rowid,))
                        total -= int(size)
                        over += 1
                after = int(conn.execute(
                    "SELECT coalesce(sum(length(vector)), 0) FROM vectors").fetchone()[0])
                return {"aged": aged, "orphans": orphans, "over_ceiling": over,
                        "vector_bytes_before": before, "vector_bytes_after": after}
            except sqlite3.Error as exc:
                log.warning("checkpoint pruning failed (%s)", exc)
                return {}


class CheckpointingEmbedder(Embedder):
    """Wraps a provider: looks each text's SHA-256 up in the checkpoints first, calls the
    provider only for misses, and checkpoints what it returns before handing it back.

    ``before_call`` runs before each provider call (the job's stop check).
    """

    def __init__(self, inner: Embedder, checkpoints: CheckpointStore, work_key: str, *,
                 before_call: Callable[[], None] | None = None) -> None:
        self.inner = inner
        self.checkpoints = checkpoints
        self.work_key = work_key
        self.before_call = before_call
        self.stats = CheckpointStats()
        self.provider = inner.provider
        self.model = inner.model
        self.data_boundary = inner.data_boundary

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    @property
    def identity(self) -> str:
        return f"{self.inner.provider}|{self.inner.model}|{self.inner.dimensions}"

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        digests = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        found = self.checkpoints.load(self.identity, digests, self.dimensions, self.stats)
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        todo = [i for i, d in enumerate(digests) if d not in found]
        for i, d in enumerate(digests):
            if d in found:
                out[i] = found[d]
        self.stats.replayed += len(texts) - len(todo)
        if todo:
            if self.before_call is not None:
                self.before_call()
            vectors = self.inner.embed([texts[i] for i in todo])
            self.stats.provider_calls += 1
            self.stats.computed += len(todo)
            self.checkpoints.save(
                self.identity, self.work_key, [(digests[i], vectors[j]) for j, i in enumerate(todo)]
            )
            for j, i in enumerate(todo):
                out[i] = vectors[j]
        return out

    def close(self) -> None:
        self.inner.close()
