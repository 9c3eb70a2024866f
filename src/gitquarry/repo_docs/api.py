"""The repository-docs API every surface calls: CLI, MCP server and (issue 10) the daemon.

One :class:`RepoDocsService` per process. It resolves selectors through the registry, keeps
one ``cat-file --batch`` process per repository, the in-memory full-text indexes (bounded by
``[docs] lexical_cache_bytes``), the query embedder and the vector matrices of immutable sets,
so a long-lived process answers repeated queries without re-reading Git. Every public method
returns plain JSON-ready dicts with repository-relative paths and opaque ids only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.config import Config
from gitquarry.errors import EmbeddingError, InvalidArgumentError
from gitquarry.gitio.catfile import BlobReader
from gitquarry.repo_docs.cache import (
    DB_NAME,
    TEXT_FORMAT,
    DocsCache,
    Locator,
    SetRow,
    cache_dir_for,
)
from gitquarry.repo_docs.chunker import (
    ChunkPolicy,
    blob_digest,
    chunk_document,
    chunk_id,
    heading_path_from_lines,
    heading_path_reader,
    slice_digest,
)
from gitquarry.repo_docs.hydrate import Hydrator
from gitquarry.repo_docs.lexical import LexicalCache, LexicalIndex, Row
from gitquarry.repo_docs.overlay import read_overlay_file
from gitquarry.repo_docs.plan import Plan, build_plan, plan_view
from gitquarry.repo_docs.registry import Binding, Registry, Selector
from gitquarry.repo_docs.revision import (
    ResolvedRevision,
    TreeCache,
    git_dir_of,
    resolve_revision,
)
from gitquarry.repo_docs.search import MAX_LIMIT, MODES, SemanticSide, Warnings, rank
from gitquarry.retrieval.pipeline import PipelineSettings, check_min_score
from gitquarry.retrieval.rerank import reranker_for

if TYPE_CHECKING:  # the indexer, NumPy and the embedding providers only when they are used
    import numpy as np

    from gitquarry.embedding import Embedder
    from gitquarry.repo_docs.indexer import CancelFn, IndexResult, ProgressFn

MAX_QUERY_CHARS = 2000


def check_search_arguments(query: str, *, mode: str | None = None, limit: int | None = None,
                           min_score: float | None = None) -> None:
    """The checks of a docs search's arguments, before any registry or cache is read (also
    ``query.docs.DocsRequest.validate``); None skips ``mode``/``limit`` (the configured
    default). Order: mode, limit, query, min_score.

    :raises InvalidArgumentError: unknown mode, limit outside 1-50, empty or overlong query,
        ``min_score`` outside [0, 1]."""
    if mode is not None and mode not in MODES:
        raise InvalidArgumentError("--mode", f"must be one of {', '.join(MODES)}")
    if limit is not None and (isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT):
        raise InvalidArgumentError("--limit", f"must be from 1 to {MAX_LIMIT}")
    if not query.strip():
        raise InvalidArgumentError("query", "is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgumentError("query", f"is longer than {MAX_QUERY_CHARS} characters")
    check_min_score(min_score, "--min-score")


class RepoDocsService:
    """See module docstring. ``registry`` defaults to the user's state-dir registry.
    ``lexical``: built full-text tables shared with other services (a long-lived process
    answering each request with a new service, ``cli.daemon_docs``); not cleared by
    :meth:`close`. Default: this service's own, bounded by ``[docs] lexical_cache_bytes``."""

    def __init__(self, config: Config, registry: Registry | None = None,
                 lexical: LexicalCache | None = None) -> None:
        self.config = config
        self.registry = registry or Registry()
        self._own_lexical = lexical is None
        self.lexical = LexicalCache(config.docs.lexical_cache_bytes) if lexical is None \
            else lexical
        self._readers: dict[Path, BlobReader] = {}
        self._embedder: Embedder | None = None
        self._matrices: dict[tuple[str, int], tuple[list[str], np.ndarray]] = {}
        #: (set, data version, heading weight) -> the cosine ranking's matrix (complete
        #: heading vectors only: an incomplete set is re-read until its next index run)
        self._rankings: dict[tuple[str, int, float], np.ndarray] = {}
        self._headings: dict[tuple[str, str], dict[int, tuple[str, ...]]] = {}
        self._git_dirs: dict[tuple[str, int, str], tuple[Path, str]] = {}
        self._trees: TreeCache = {}
        self._caches: dict[Path, DocsCache] = {}
        self._lock = threading.RLock()

    @property
    def chunk_policy(self) -> ChunkPolicy:
        docs = self.config.docs
        return ChunkPolicy(docs.chunk_max_chars, docs.chunk_min_chars)

    def close(self) -> None:
        with self._lock:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()
            for cache in self._caches.values():
                cache.close()
            self._caches.clear()
            if self._own_lexical:
                self.lexical.clear()
            if self._embedder is not None:
                self._embedder.close()
                self._embedder = None

    def __enter__(self) -> RepoDocsService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing --------------------------------------------------------------------------

    def _reader(self, git_dir: Path) -> BlobReader:
        reader = self._readers.get(git_dir)
        if reader is None:
            reader = self._readers[git_dir] = BlobReader(git_dir)
        return reader

    def _resolve(self, selector: Selector, revision: str | None,
                 include_worktree: bool) -> tuple[ResolvedRevision, BlobReader]:
        binding = self.registry.resolve(selector)
        key = (binding.source.source_registration_id, binding.source.generation,
               binding.source.repository_path)
        located = self._git_dirs.get(key)
        if located is None or not located[0].is_dir():
            located = self._git_dirs[key] = git_dir_of(binding)
        git_dir, fmt = located
        reader = self._reader(git_dir)
        resolved = resolve_revision(binding, reader, revision=revision,
                                    include_worktree=include_worktree, git_dir=git_dir,
                                    object_format=fmt, trees=self._trees)
        return resolved, reader

    @contextlib.contextmanager
    def _open_cache(self, binding: Binding) -> Iterator[DocsCache | None]:
        """The binding's cache (kept open by this service), or None when there is none.

        Unlike the workspace index (a read raises ``index_schema_outdated``), a search opens
        an older cache with its schema upgrade applied: the cache holds only locators,
        digests and vectors rebuilt from Git, its steps only add tables or columns, and the upgraded
        cache answers at once (saying what is missing, e.g. ``heading_vectors_missing``),
        so keeping it usable is the cache's own job, not a write of the user's data."""
        path = cache_dir_for(binding, self.config) / DB_NAME
        cache = self._caches.get(path)
        if cache is None and path.is_file():
            cache = self._caches[path] = DocsCache(path)
        yield cache

    def _header(self, resolved: ResolvedRevision) -> dict[str, Any]:
        return {
            "repo_id": resolved.binding.repo_id,
            "corpus_kind": "repository_docs",
            "requested_revision": resolved.requested,
            "effective_revision": resolved.commit,
            "authority": resolved.authority,
            "overlay_digest": resolved.overlay_digest,
            "policy_hash": resolved.policy.policy_hash,
            "policy_source": resolved.policy.source,
        }

    # -- sources, policy, plan -------------------------------------------------------------

    def register(self, repo: str, repository_path: Path) -> dict[str, Any]:
        return self.registry.register(repo, repository_path).public()

    def rebind(self, repo: str, registration_id: str, generation: int, repository_path: Path,
               source_registration_id: str | None = None) -> dict[str, Any]:
        return self.registry.rebind(repo, registration_id, generation, repository_path,
                                    source_registration_id).public()

    def sources(self, repo: str | None = None) -> dict[str, Any]:
        """Every registered authority (for ``repo`` when given) as opaque selectors."""
        return {"sources": [b.public() for b in self.registry.bindings(repo)]}

    def policy(self, selector: Selector, *, revision: str | None = None,
               include_worktree: bool = False) -> dict[str, Any]:
        with self._lock:
            resolved, _reader = self._resolve(selector, revision, include_worktree)
            return {**self._header(resolved), **resolved.policy.to_dict()}

    def plan(self, selector: Selector, *, revision: str | None = None,
             include_worktree: bool = False, list_files: bool = True) -> dict[str, Any]:
        """Effective matchers, eligible files and bytes, exclusions by reason."""
        with self._lock:
            resolved, reader = self._resolve(selector, revision, include_worktree)
            plan = build_plan(resolved.view, reader, policy=resolved.policy,
                              max_blob_bytes=self.config.docs.max_blob_bytes)
            data = plan.to_dict(list_files=list_files)
            return {**self._header(resolved), **data}

    # -- index and status ------------------------------------------------------------------

    def index(self, selector: Selector, *, revision: str | None = None,
              include_worktree: bool = False, progress: ProgressFn | None = None,
              should_cancel: CancelFn | None = None,
              embedder: Embedder | None = None) -> IndexResult:
        from gitquarry.repo_docs.indexer import index_revision_set

        binding = self.registry.resolve(selector)
        return index_revision_set(binding, self.config, revision=revision,
                                  include_worktree=include_worktree, embedder=embedder,
                                  progress=progress, should_cancel=should_cancel)

    def status(self, selector: Selector) -> dict[str, Any]:
        """The registration, HEAD, and every revision set of its git store, newest first."""
        with self._lock:
            binding = self.registry.resolve(selector)
            resolved, _reader = self._resolve(selector, None, False)
            sets: list[SetRow] = []
            with self._open_cache(binding) as cache:
                if cache is not None:
                    sets = cache.sets(binding.source.git_store_ref)
            head_sets = [s for s in sets if s.commit_oid == resolved.commit
                         and s.policy_hash == resolved.policy.policy_hash
                         and s.overlay_digest is None]
            return {
                **binding.public(),
                "head_revision": resolved.commit,
                "policy_hash": resolved.policy.policy_hash,
                "policy_source": resolved.policy.source,
                "head_set": head_sets[0].public() if head_sets else None,
                "revision_sets": [s.public() for s in sets],
            }

    # -- search ----------------------------------------------------------------------------

    def _query_embedder(self, warnings: Warnings) -> Embedder | None:
        if self._embedder is not None:
            return self._embedder
        from gitquarry.embedding import create_embedder

        try:
            self._embedder = create_embedder(self.config.embedding, purpose="query")
        except EmbeddingError as exc:
            warnings.add("embedding_provider_unavailable", f"{exc}; used full-text ranking")
            return None
        if self._embedder is None:
            warnings.add("embedding_provider_unavailable",
                         "no embedding provider is configured; used full-text ranking")
        return self._embedder

    def configured_namespace(self) -> tuple[str | None, list[dict[str, str]]]:
        """The embedding namespace hybrid search uses now, or None with the warning details
        saying why (``embedding_provider_unavailable``). Loads the query embedder once."""
        with self._lock:
            warnings = Warnings()
            embedder = self._query_embedder(warnings)
            key = embedder.namespace(TEXT_FORMAT).key if embedder is not None else None
            return key, warnings.details

    def _lexical_index(self, resolved: ResolvedRevision, reader: BlobReader,
                       cache: DocsCache | None) -> tuple[LexicalIndex, int]:
        """The full-text index of ``resolved`` (built now or reused) and its file count."""
        key = resolved.lexical_key(self.chunk_policy)
        found = self.lexical.get(key)
        if found is not None:
            return found, len({r.path for r in found.rows})
        member = None
        if cache is not None:
            member = cache.membership_set(
                resolved.binding.source.git_store_ref, resolved.commit,
                resolved.policy.policy_hash, self.chunk_policy.key, resolved.overlay_digest)
        index = LexicalIndex()
        if member is not None and cache is not None:
            index.add(self._rows_from_locators(resolved, reader, cache.locators(member.set_id)))
        else:
            index.add(self._rows_from_git(resolved, reader, cache))
        self.lexical.put(key, index)
        return index, len({r.path for r in index.rows})

    def _rows_from_locators(self, resolved: ResolvedRevision, reader: BlobReader,
                            locators: list[Locator]) -> Any:
        max_bytes = self.config.docs.max_blob_bytes
        current: tuple[str, str] | None = None
        data: bytes | None = None
        headings: Callable[[Sequence[int]], tuple[str, ...]] | None = None
        for loc in locators:
            key = (loc.authority, loc.path)
            if key != current:
                current = key
                if loc.authority == "worktree_overlay" and resolved.overlay is not None:
                    entry = resolved.overlay.by_path().get(loc.path)
                    data = read_overlay_file(resolved.overlay, entry, max_bytes) if entry \
                        else None
                else:
                    got = reader.read(loc.blob_oid, max_bytes=max_bytes)
                    data = got.data if got.status == "ok" else None
                headings = heading_path_reader(data) if data is not None else None
            if data is None or headings is None:
                continue
            row = Row(loc.chunk_id, loc.path, loc.ordinal, loc.blob_oid, loc.authority,
                      loc.content_class, loc.byte_start, loc.byte_end, loc.line_start,
                      loc.line_end, loc.raw_slice_sha256, headings(loc.heading_lines),
                      loc.heading_lines)
            yield row, data[loc.byte_start : loc.byte_end].decode("utf-8", "replace")

    def _rows_from_git(self, resolved: ResolvedRevision, reader: BlobReader,
                       cache: DocsCache | None) -> Any:
        """Rows for a revision no set covers: the plan walked now; a blob some earlier set
        already chunked under the same chunk policy takes its stored locators (the same
        chunks: chunking is deterministic), only new blobs are chunked."""
        policy = self.chunk_policy
        plan = Plan(resolved.commit, resolved.policy)
        for doc, data in plan_view(resolved.view, resolved.policy, reader,
                                   max_blob_bytes=self.config.docs.max_blob_bytes, plan=plan):
            assert data is not None
            known = cache.known_chunks(doc.blob_oid, doc.content_class, policy.key) \
                if cache is not None and doc.authority == "git" else None
            if known is not None:
                headings = heading_path_reader(data)
                for ordinal, (cid, bs, be, ls, le, digest, hl) in enumerate(known):
                    row = Row(cid, doc.path, ordinal, doc.blob_oid, doc.authority,
                              doc.content_class, bs, be, ls, le, digest, headings(hl), hl)
                    yield row, data[bs:be].decode("utf-8")
                continue
            digest = blob_digest(data)
            for ordinal, span in enumerate(chunk_document(data, doc.content_class, policy)):
                row = Row(chunk_id(digest, span, policy), doc.path, ordinal, doc.blob_oid,
                          doc.authority, doc.content_class, span.byte_start, span.byte_end,
                          span.line_start, span.line_end, slice_digest(data, span),
                          span.heading_path, span.heading_lines)
                yield row, data[span.byte_start : span.byte_end].decode("utf-8")

    def _heading_path(self, row: Row, data: bytes) -> tuple[str, ...]:
        if row.heading_lines:  # stored line numbers: read the titles, no parse
            return heading_path_from_lines(data, row.heading_lines)
        key = (row.raw_slice_sha256 if row.authority != "git" else row.blob_oid,
               row.content_class)
        spans = self._headings.get(key)
        if spans is None:
            if len(self._headings) > 512:
                self._headings.clear()
            spans = {s.byte_start: s.heading_path
                     for s in chunk_document(data, row.content_class, self.chunk_policy)}
            self._headings[key] = spans
        return spans.get(row.byte_start, ())

    def _semantic(self, resolved: ResolvedRevision, cache: DocsCache | None,
                  warnings: Warnings, response: dict[str, Any]) -> SemanticSide | None:
        embedder = self._query_embedder(warnings)
        if embedder is None:
            return None
        namespace = embedder.namespace(TEXT_FORMAT).key
        response["namespace_id"] = namespace
        set_id = resolved.set_id(self.chunk_policy, namespace)
        row = cache.get_set(set_id) if cache is not None else None
        if row is None or cache is None:
            other = None
            if cache is not None:
                member = cache.membership_set(
                    resolved.binding.source.git_store_ref, resolved.commit,
                    resolved.policy.policy_hash, self.chunk_policy.key,
                    resolved.overlay_digest)
                other = member.namespace_key if member is not None else None
            if other is not None and other != namespace:
                warnings.add("namespace_mismatch",
                             f"the indexed set uses embedding namespace {other!r}, not the "
                             f"configured {namespace!r}; used full-text ranking (re-run "
                             "`gitquarry repo-docs index`)")
            else:
                warnings.add("revision_set_missing",
                             "no indexed revision set for this revision; used full-text "
                             "ranking (run `gitquarry repo-docs index` for hybrid search)")
            return None
        response["revision_set_id"] = set_id
        response["coverage"] = row.coverage()
        if row.state not in ("ready", "partial"):
            warnings.add("revision_set_unusable",
                         f"the revision set is {row.state}; used full-text ranking")
            return None
        ns_id = cache.namespace_id(namespace, 0, create=False)
        if ns_id is None:
            warnings.add("revision_set_missing", "the revision set has no vectors yet; used "
                         "full-text ranking")
            return None
        version = cache.data_version() if row.state != "ready" else 0
        mkey = (set_id, version)
        matrix = self._matrices.get(mkey)
        if matrix is None:
            if len(self._matrices) > 8:
                self._matrices.clear()
            matrix = cache.set_vectors(set_id, ns_id, embedder.dimensions)
            self._matrices[mkey] = matrix
        ids, vectors = matrix
        if row.state == "partial":
            warnings.add("partial_revision_set",
                         f"the revision set is partial: {row.embedded_chunks} of "
                         f"{row.eligible_chunks} chunks embedded take part in semantic "
                         "ranking")
        if not ids:
            return None
        ranking = self._heading_ranking(cache, set_id, version, ns_id, ids, vectors, warnings)

        def embed_query(text: str) -> np.ndarray:
            return embedder.embed([text])[0]

        return SemanticSide(ids, vectors, embed_query, ranking)

    def _heading_ranking(self, cache: DocsCache, set_id: str, version: int, ns_id: int,
                         ids: list[str], vectors: np.ndarray,
                         warnings: Warnings) -> np.ndarray | None:
        """The cosine ranking's matrix with the heading-path vectors
        (``repo_docs.heading_vectors``), or None (rank by the chunk vectors alone): ``[docs]
        heading_weight`` is 0, or some embedded chunk has no heading vector (a set indexed
        before them; ``heading_vectors_missing`` says so)."""
        from gitquarry.repo_docs.heading_vectors import ranking_matrix

        weight = float(self.config.docs.heading_weight)
        if weight <= 0:
            return None
        key = (set_id, version, weight)
        found = self._rankings.get(key)
        if found is not None:
            return found
        headings, lacking = cache.heading_matrix(set_id, ns_id, ids, int(vectors.shape[1]))
        if lacking:
            warnings.add("heading_vectors_missing",
                         f"{lacking} of {len(ids)} embedded chunks have no heading-path "
                         "vector (indexed before heading vectors); semantic ranking used the "
                         "chunk vectors alone (re-run `gitquarry repo-docs index` to add "
                         "them)")
            return None
        if len(self._rankings) > 8:
            self._rankings.clear()
        found = self._rankings[key] = ranking_matrix(vectors, headings, weight)
        return found

    def search(self, selector: Selector, query: str, *, revision: str | None = None,
               mode: str | None = None, limit: int | None = None,
               include_worktree: bool = False, diverse: bool | None = None,
               min_score: float | None = None, explain: bool = False) -> dict[str, Any]:
        """Search the docs of one revision (see ``gitquarry.repo_docs.search``).

        ``diverse`` and ``min_score`` override ``[search] mmr_enabled`` and
        ``min_confidence`` for this request; ``explain`` adds ``pipeline`` to each hit and to
        the response.

        :raises InvalidArgumentError: empty/overlong query, unknown mode, limit outside 1-50,
            ``min_score`` outside [0, 1].
        :raises RepoDocsRegistrationError, RepoDocsStaleGenerationError,
            RevisionNotFoundError, RepoDocsPolicyInvalidError, WorktreeOverlayStaleError
        """
        mode = mode or self.config.docs.mode
        limit = self.config.docs.limit if limit is None else limit
        check_search_arguments(query, mode=mode, limit=limit, min_score=min_score)
        settings = PipelineSettings.from_search_config(
            self.config.search, diverse=diverse, min_score=min_score
        )
        reranker, problem = reranker_for(self.config.search)
        with self._lock:
            resolved, reader = self._resolve(selector, revision, include_worktree)
            warnings = Warnings()
            with self._open_cache(resolved.binding) as cache:
                response: dict[str, Any] = {
                    **self._header(resolved), "query": query, "requested_mode": mode,
                    "effective_mode": "fulltext", "revision_set_id": None,
                    "namespace_id": None,
                }
                index, n_files = self._lexical_index(resolved, reader, cache)
                response["coverage"] = {
                    "state": "none", "eligible_files": n_files,
                    "eligible_chunks": len(index.rows), "embedded_chunks": 0,
                    "reused_chunks": 0, "failed_chunks": 0, "missing_objects": 0,
                }
                if cache is not None and mode == "fulltext":
                    member = cache.membership_set(
                        resolved.binding.source.git_store_ref, resolved.commit,
                        resolved.policy.policy_hash, self.chunk_policy.key,
                        resolved.overlay_digest)
                    if member is not None:
                        response["revision_set_id"] = member.set_id
                        response["coverage"] = member.coverage()
                semantic = self._semantic(resolved, cache, warnings, response) \
                    if mode == "hybrid" else None
                if semantic is not None:
                    response["effective_mode"] = "hybrid"
                hydrator = Hydrator(reader, resolved.overlay, self.config.docs.max_blob_bytes)
                docs = self.config.docs  # the docs corpus's own fusion constants
                hits, summary = rank(
                    index, query, limit=limit, semantic=semantic, hydrator=hydrator,
                    warnings=warnings, heading_path=self._heading_path, rrf_k=docs.rrf_k,
                    weights=(docs.lexical_weight, docs.semantic_weight),
                    pipeline=settings, reranker=reranker, reranker_problem=problem,
                    explain=explain)
            for hit in hits:
                hit["citation"]["commit_oid"] = resolved.commit
            response["hits"] = hits
            if explain:
                response["pipeline"] = summary
            response["warnings"] = warnings.strings
            response["warning_details"] = warnings.details
            return response


def run_with_service(config: Config, fn: Callable[[RepoDocsService], Any]) -> Any:
    """Call ``fn`` with a service that is closed afterwards (one-shot CLI use)."""
    service = RepoDocsService(config)
    try:
        return fn(service)
    finally:
        service.close()
