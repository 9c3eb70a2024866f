"""A vector cache for relevance runs: the same text, the same model and the same token budget
give the same vector, so a benchmark need never embed one text twice (across runs, document
variants, or an index another run already built).

``install(cache_path, donors)`` wraps every embedder ``gitquarry.indexing`` creates for
indexing (``purpose="index"``) in :class:`CachedEmbedder`: a text whose
``(model, max_tokens, sha256(text))`` is in the cache (an SQLite file) gets the stored vector;
the rest are embedded by the real model and stored. ``donors`` are index databases whose
commit vectors seed the cache: a row of namespace ``provider|model|dims|commit-<layout>-t<N>``
was computed from the text whose digest it stores (``commit_vectors.text_sha256``) with a
budget of ``N`` tokens, so it is the vector the model gives that text. Query vectors are
never cached (they are cheap and the query path is what is measured).

This changes the cost of a benchmark run, never a vector: a miss is embedded by the model
itself, and a hit was embedded by the same model from the same text with the same budget.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gitquarry import embedding as embedding_pkg
from gitquarry.embedding import Embedder

_FORMAT = re.compile(r"-t(\d+)$")


class CachedEmbedder(Embedder):
    """``inner`` with a persistent text → vector cache (see module doc)."""

    def __init__(self, inner: Embedder, cache: sqlite3.Connection) -> None:
        self.inner = inner
        self.cache = cache
        self.provider = inner.provider
        self.model = inner.model
        self.data_boundary = inner.data_boundary
        self.retired_models = inner.retired_models
        self.hits = 0
        self.misses = 0

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def _embed_batch(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - unused
        return self.inner.embed(texts)

    def embed(self, texts: Sequence[str], *, max_tokens: int | None = None) -> np.ndarray:
        items = list(texts)
        budget = min(max_tokens or self.inner.max_tokens, self.inner.max_tokens)
        shas = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in items]
        found: dict[str, bytes] = {}
        for start in range(0, len(shas), 500):
            part = shas[start:start + 500]
            marks = ",".join("?" * len(part))
            found.update(self.cache.execute(
                f"SELECT sha, vector FROM vectors WHERE model = ? AND budget = ? "
                f"AND sha IN ({marks})", [self.model, budget, *part]).fetchall())
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        todo = [i for i, sha in enumerate(shas) if sha not in found]
        for i, sha in enumerate(shas):
            if sha in found:
                out[i] = np.frombuffer(found[sha], dtype="<f4")
        if todo:
            vectors = self.inner.embed([items[i] for i in todo], max_tokens=max_tokens)
            rows = []
            for j, i in enumerate(todo):
                out[i] = vectors[j]
                rows.append((self.model, budget, shas[i],
                             vectors[j].astype("<f4").tobytes()))
            with self.cache:
                self.cache.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                                       rows)
        self.hits += len(items) - len(todo)
        self.misses += len(todo)
        return out

    def namespace(self, text_format: str) -> Any:
        return self.inner.namespace(text_format)

    def close(self) -> None:
        self.inner.close()


def open_cache(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), check_same_thread=False)
    conn.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, budget INTEGER, sha TEXT, "
                 "vector BLOB, PRIMARY KEY (model, budget, sha)) WITHOUT ROWID")
    return conn


def seed(conn: sqlite3.Connection, donor: Path) -> int:
    """Copy a donor index's commit vectors into the cache; the number of rows offered."""
    src = sqlite3.connect(f"file:{donor}?mode=ro", uri=True)
    rows = []
    for model, text_format, sha, vector in src.execute(
            "SELECT n.model, n.text_format, v.text_sha256, v.vector FROM commit_vectors v "
            "JOIN embedding_namespaces n ON n.id = v.namespace_id"):
        match = _FORMAT.search(text_format)
        if match:
            rows.append((model, int(match.group(1)), sha, vector))
    src.close()
    with conn:
        conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?)", rows)
    return len(rows)


def install(cache_path: Path, donors: Sequence[Path] = ()) -> list[CachedEmbedder]:
    """Wrap the index-time embedders from now on; returns the list of wrappers made (for
    their hit/miss counts)."""
    conn = open_cache(cache_path)
    for donor in donors:
        seed(conn, donor)
    made: list[CachedEmbedder] = []
    real = embedding_pkg.create_embedder

    def create(config: Any, *, purpose: str = "index", **kw: Any) -> Embedder | None:
        inner = real(config, purpose=purpose, **kw)
        if inner is None or purpose != "index":
            return inner
        wrapped = CachedEmbedder(inner, conn)
        made.append(wrapped)
        return wrapped

    embedding_pkg.create_embedder = create  # type: ignore[assignment]
    return made
