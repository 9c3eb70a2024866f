"""Semantic ranking: exact cosine top-k over commit vectors, after the candidate filters.

Vectors of the active namespace are loaded once into a float32 matrix (n, d) with parallel
arrays of commit ids and committer times, and reloaded only when another connection has
changed the database (``PRAGMA data_version``). Filters are boolean masks over those arrays,
so the top-k is taken among matching commits only. Rows are L2-normalised, so the dot product
is the cosine similarity; results are sorted by similarity descending, then commit id.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gitquarry.config import Config
from gitquarry.embedding import Embedder, create_embedder
from gitquarry.errors import EmbeddingError, EmbeddingFailedError
from gitquarry.history.index.document import text_format
from gitquarry.history.models import Warning_
from gitquarry.history.search.coverage_warnings import PARTIAL_HYBRID
from gitquarry.percent import floor_percent
from gitquarry.retrieval.vectors import cosine_top_k
from gitquarry.store import Store

if TYPE_CHECKING:
    from gitquarry.history.search.engine import Filters

log = logging.getLogger(__name__)


@dataclass

class SemanticOutcome:
    """Semantic hits as (commit id, cosine similarity), best first, plus coverage facts."""

    hits: list[tuple[int, float]] = field(default_factory=list)
    embedded_fraction: float = 0.0
    warnings: list[Warning_] = field(default_factory=list)
    usable: bool = False

    def effective_mode(self, requested: str) -> str:
        return requested if self.usable else "lexical"


@dataclass
class _Matrix:
    ids: np.ndarray  # int64 (n,)
    timestamps: np.ndarray  # int64 (n,)
    merges: np.ndarray  # bool (n,): is the commit a merge
    vectors: np.ndarray  # float32 (n, d), rows L2-normalised


class SemanticRanker:
    """Ranks commits by cosine similarity to the query in one embedding namespace.

    ``embedder`` is created lazily on the first query that has vectors to compare with, so a
    workspace without vectors never loads a model.
    """

    def __init__(
        self,
        config: Config,
        namespace_id: int | None,
        namespace_key: str,
        dimensions: int,
        embedder: Embedder | None = None,
    ) -> None:
        self.config = config
        self.namespace_id = namespace_id
        self.namespace_key = namespace_key
        self.dimensions = dimensions
        self._embedder = embedder
        self._matrix: _Matrix | None = None
        self._last_query: tuple[str, np.ndarray] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._data_version: int | None = None

    def embedder(self) -> Embedder:
        if self._embedder is None:
            embedder = create_embedder(self.config.embedding, purpose="query")
            if embedder is None:
                raise EmbeddingFailedError("no embedding provider is configured")
            self._embedder = embedder
        return self._embedder

    def _resolve_namespace(self, conn: sqlite3.Connection) -> None:
        """Look the namespace up again: a long-lived ranker (the MCP server's) created before
        the first ``gitquarry index`` computed vectors must use them once they exist."""
        embedder = self.embedder()  # cheap: providers load their model on first embed()
        found = find_namespace(conn, embedder.provider, embedder.model, text_format())
        if found is not None:
            self.namespace_id, self.namespace_key, self.dimensions = found
            self._matrix = None
            self._data_version = None

    def _use_namespace(self, conn: sqlite3.Connection, key: str, dimensions: int) -> None:
        """Switch to the namespace with exactly ``key`` (None id when it has no row yet)."""
        row = conn.execute(
            "SELECT id, key, dimensions FROM embedding_namespaces WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            self.namespace_id, self.namespace_key, self.dimensions = None, key, dimensions
        else:
            self.namespace_id, self.namespace_key, self.dimensions = (
                int(row[0]), str(row[1]), int(row[2])
            )
        self._matrix = None
        self._data_version = None

    def _coverage(
        self, conn: sqlite3.Connection, total: int, outcome: SemanticOutcome
    ) -> _Matrix | None:
        """Load the namespace's vectors and record the embedded fraction and its warnings on
        ``outcome``; None when no commit has a vector (nothing to rank)."""
        matrix = self._load(conn) if self.namespace_id is not None else None
        embedded = 0 if matrix is None else len(matrix.ids)
        outcome.embedded_fraction = round(embedded / total, 4) if total else 0.0
        if matrix is None or embedded == 0:
            outcome.warnings.append(
                Warning_(
                    code="no_embeddings",
                    message=(
                        f"no commit has a vector for the embedding model {self._describe()}; "
                        "used keyword search (run `gitquarry index` to compute vectors)"
                    ),
                )
            )
            return None
        if embedded < total:
            outcome.warnings.append(
                Warning_(
                    code="partial_embeddings",
                    message=(
                        f"{embedded:,} of {total:,} commits have vectors "
                        f"({floor_percent(embedded, total)}%); {PARTIAL_HYBRID}"
                    ),
                )
            )
        return matrix

    def _embed_one(self, query: str) -> np.ndarray:
        return self.embedder().embed([query])[0]

    def _query_vector(self, query: str) -> np.ndarray:
        """The query's vector; the last one is kept (a broad glob may rank twice).

        :raises EmbeddingError: the provider failed (also when it failed on the worker).
        """
        if self._last_query is not None and self._last_query[0] == query:
            return self._last_query[1]
        vector = self._embed_one(query)
        self._last_query = (query, vector)
        return vector

    def _describe(self) -> str:
        """The configured model for people: ``provider model (N dimensions)``."""
        try:
            embedder = self.embedder()  # cheap: no model is loaded here
        except EmbeddingError:
            return self.namespace_key
        dims = f" ({self.dimensions} dimensions)" if self.dimensions else ""
        return f"{embedder.provider} {embedder.model}{dims}"

    def _load(self, conn: sqlite3.Connection) -> _Matrix:
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        if self._matrix is not None and version == self._data_version:
            return self._matrix
        rows = conn.execute(
            "SELECT v.commit_id, c.timestamp, v.vector, c.is_merge FROM commit_vectors v "
            "JOIN git_commits c ON c.id = v.commit_id WHERE v.namespace_id = ? "
            "ORDER BY v.commit_id",
            (self.namespace_id,),
        ).fetchall()
        n = len(rows)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        stamps = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
        merges = np.fromiter((bool(r[3]) for r in rows), dtype=bool, count=n)
        if n:
            vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(
                n, self.dimensions
            ).astype(np.float32, copy=False)
        else:
            vectors = np.zeros((0, self.dimensions), dtype=np.float32)
        self._matrix = _Matrix(ids, stamps, merges, vectors)
        self._data_version = version
        return self._matrix

    def top_k(
        self,
        conn: sqlite3.Connection,
        query: str,
        filters: Filters,
        limit: int,
        *,
        has_glob: bool,
    ) -> SemanticOutcome:
        """Top ``limit`` commits by cosine similarity among those passing ``filters``.

        With ``has_glob`` the candidates are ``temp.gq_candidates`` (prepared by the caller).
        Never raises for provider failures: they come back as a warning and no hits.
        """
        outcome = SemanticOutcome()
        prepared = self._prepare(conn, filters, has_glob, outcome)
        if prepared is None:
            return outcome
        matrix, allowed = prepared
        try:
            qvec = self._query_vector(query)
            exact = self.embedder().namespace(text_format()).key
        except EmbeddingError as exc:
            return self._failed(outcome, exc)
        if exact != self.namespace_key:
            # The stored namespace was found by provider and model only; the query vector
            # shows the exact space (e.g. other dimensions). Never compare across spaces.
            self._use_namespace(conn, exact, qvec.shape[0])
            outcome = SemanticOutcome()
            total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
            switched = self._coverage(conn, total, outcome)
            if switched is None:
                return outcome
            matrix = switched
        outcome.usable = True
        outcome.hits = _top_k(matrix, qvec, filters, allowed, limit)
        return outcome

    def start(
        self,
        conn: sqlite3.Connection,
        query: str,
        filters: Filters,
        limit: int,
        *,
        has_glob: bool,
    ) -> Callable[[], SemanticOutcome]:
        """``top_k`` in two halves: the SQLite reads now, on this thread; the query embedding
        and the matrix product on a worker thread (ONNX Runtime and numpy release the GIL),
        so they overlap the caller's keyword ranking. Returns a function that waits for and
        returns the outcome. The worker never touches ``conn``.
        """
        outcome = SemanticOutcome()
        prepared = self._prepare(conn, filters, has_glob, outcome)
        if prepared is None:
            return lambda: outcome
        matrix, allowed = prepared
        expected = self.namespace_key

        def compute() -> SemanticOutcome | None:
            try:
                qvec = self._query_vector(query)
                exact = self.embedder().namespace(text_format()).key
            except EmbeddingError as exc:
                return self._failed(outcome, exc)
            if exact != expected:
                return None  # a namespace switch needs SQLite: done by top_k below
            outcome.usable = True
            outcome.hits = _top_k(matrix, qvec, filters, allowed, limit)
            return outcome

        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gq-embed")
        future = self._executor.submit(compute)

        def result() -> SemanticOutcome:
            done = future.result()
            return done if done is not None else self.top_k(
                conn, query, filters, limit, has_glob=has_glob
            )

        return result

    def _prepare(
        self, conn: sqlite3.Connection, filters: Filters, has_glob: bool, outcome: SemanticOutcome
    ) -> tuple[_Matrix, np.ndarray | None] | None:
        """The SQLite half: namespace, coverage warnings, the vector matrix and the glob's
        candidate ids. None when there is nothing to rank (the outcome says why)."""
        if self.namespace_id is None:
            self._resolve_namespace(conn)
        total = int(conn.execute("SELECT count(*) FROM git_commits").fetchone()[0])
        matrix = self._coverage(conn, total, outcome)
        if matrix is None:
            return None
        allowed = None
        if has_glob:
            allowed = np.fromiter(
                (r[0] for r in conn.execute("SELECT id FROM temp.gq_candidates")), dtype=np.int64
            )
        return matrix, allowed

    @staticmethod
    def _failed(outcome: SemanticOutcome, exc: EmbeddingError) -> SemanticOutcome:
        log.warning("semantic search failed: %s", exc)
        outcome.warnings.append(
            Warning_(code="semantic_failed", message=f"{exc}; used lexical search")
        )
        return outcome


def _top_k(
    matrix: _Matrix,
    qvec: np.ndarray,
    filters: Filters,
    allowed: np.ndarray | None,
    limit: int,
) -> list[tuple[int, float]]:
    """(commit id, cosine) of the best ``limit`` rows passing the filters, best first, ties by
    commit id. One matrix-vector product over every row (no copy of the matrix), then the
    filters as a mask: rows that fail them can never enter the top-k."""
    mask: np.ndarray | None = None
    if filters.after is not None:
        mask = matrix.timestamps >= filters.after
    if filters.before is not None:
        below = matrix.timestamps <= filters.before
        mask = below if mask is None else mask & below
    if filters.merges in ("exclude", "only"):
        kind = matrix.merges if filters.merges == "only" else ~matrix.merges
        mask = kind if mask is None else mask & kind
    if allowed is not None:
        in_glob = np.isin(matrix.ids, allowed)
        mask = in_glob if mask is None else mask & in_glob
    hits = cosine_top_k(matrix.vectors, qvec, limit, mask=mask)
    # rows are stored in commit-id order, so ties by row index are ties by commit id
    order = sorted(hits, key=lambda h: (-h[1], int(matrix.ids[h[0]])))
    return [(int(matrix.ids[j]), sim) for j, sim in order]


def find_namespace(
    conn: sqlite3.Connection, provider: str, model: str, text_format: str
) -> tuple[int, str, int] | None:
    """(id, key, dimensions) of the stored namespace matching, or None."""
    row = conn.execute(
        "SELECT id, key, dimensions FROM embedding_namespaces WHERE provider = ? AND model = ? "
        "AND text_format = ? ORDER BY id DESC LIMIT 1",
        (provider, model, text_format),
    ).fetchone()
    return (int(row[0]), str(row[1]), int(row[2])) if row else None


def load_semantic_ranker(config: Config, store: Store) -> SemanticRanker | None:
    """The ranker for ``config.embedding``; None when the provider is ``none``.

    Building the ranker does not load the model (the provider's factory is cheap).
    :raises DataBoundaryError, EmbeddingError: the provider configuration is refused.
    """
    embedder = create_embedder(config.embedding, purpose="query")
    if embedder is None:
        return None
    found = find_namespace(store.conn, embedder.provider, embedder.model, text_format())
    if found is None:
        key = f"{embedder.provider}|{embedder.model}|?|{text_format()}"
        return SemanticRanker(config, None, key, 0, embedder)
    ns_id, key, dims = found
    return SemanticRanker(config, ns_id, key, dims, embedder)
