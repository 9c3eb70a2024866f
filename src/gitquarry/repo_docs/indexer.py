"""Build one immutable revision set: plan, chunk locators, vectors. Resumable.

:func:`index_revision_set` is the library function behind ``gitquarry repo-docs index`` and
the function a job runner (the daemon, issue 10) calls. It takes a ``progress`` callback
(``IndexProgress`` events), a ``should_cancel`` check (polled between files and between
embedding batches) and writes vectors batch by batch, each batch in its own transaction, so
an interrupted or cancelled run keeps every finished batch and a re-run of the same request
(the same set id) only embeds what is missing. When the cache is locked by another writer a
finished batch is kept in a vector-only checkpoint file (no text) and replayed by the next
run, so no provider call is repeated.

Order of work: the provider's data boundary is checked before anything else (only
``local_process`` and ``local_network`` may see repository content); then the revision is
resolved, the set marked ``building``, every eligible blob streamed once through one
``git cat-file --batch`` process (blobs already checked and chunked under the same chunk
policy are not read at all), membership written in one transaction, then vectors. Final
state: ``ready`` (every chunk has a vector, or no provider), ``partial`` (some do: cancelled
or the provider failed), ``superseded`` (an overlay's working tree changed during the run) or
``failed``.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gitquarry.config import Config
from gitquarry.embedding import Embedder, create_embedder, get_provider
from gitquarry.embedding.base import SAFE_DATA_BOUNDARIES
from gitquarry.errors import (
    EmbeddingError,
    GitquarryError,
    IndexBusyError,
    IndexCancelledError,
    RepoDocsBoundaryBlockedError,
)
from gitquarry.gitio.catfile import BlobReader
from gitquarry.repo_docs.cache import DB_NAME, TEXT_FORMAT, DocsCache, Locator, cache_dir_for
from gitquarry.repo_docs.chunker import (
    ChunkPolicy,
    blob_digest,
    chunk_document,
    chunk_id,
    embedding_input,
    slice_digest,
)
from gitquarry.repo_docs.heading_vectors import document_title, heading_text, text_digest
from gitquarry.repo_docs.overlay import compute_overlay
from gitquarry.repo_docs.plan import DocFile, Plan, plan_view
from gitquarry.repo_docs.registry import Binding
from gitquarry.repo_docs.revision import (
    NO_NAMESPACE,
    ResolvedRevision,
    resolve_revision,
    restrict_overlay,
)
from gitquarry.store import safe_paths

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class IndexProgress:
    """A progress event: ``phase`` is ``plan`` (files read), ``embed`` (chunks embedded) or
    ``done``; ``done``/``total`` count units of that phase (``total`` 0 when unknown)."""

    phase: str
    done: int
    total: int


@dataclass
class IndexResult:
    """What a run did. ``state`` is the set's state afterwards; ``embedded`` vectors computed
    now, ``reused`` chunks whose vector existed before this run (renames, unchanged files,
    a resumed run), ``replayed`` vectors taken from a checkpoint."""

    revision_set_id: str
    repo_id: str
    effective_revision: str
    policy_hash: str
    policy_source: str
    namespace_id: str
    authority: str
    overlay_digest: str | None
    state: str
    eligible_files: int = 0
    eligible_bytes: int = 0
    eligible_chunks: int = 0
    embedded: int = 0
    reused: int = 0
    replayed: int = 0
    failed: int = 0
    #: heading vectors (``repo_docs.heading_vectors``) computed now: distinct heading texts
    #: not stored before
    headings_embedded: int = 0
    blobs_read: int = 0
    missing_objects: int = 0
    exclusions_by_reason: dict[str, int] = field(default_factory=dict)
    up_to_date: bool = False
    seconds: float = 0.0
    warnings: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ProgressFn = Callable[[IndexProgress], None]
CancelFn = Callable[[], bool]


def check_index_boundary(config: Config) -> None:
    """Refuse providers that may send repository content off this machine or network.

    :raises RepoDocsBoundaryBlockedError: remote, unknown or undeclared boundary (even with
        ``allow_remote``: repository docs are never sent there).
    :raises UnknownEmbeddingProviderError: no such provider.
    """
    name = config.embedding.provider
    if name == NO_NAMESPACE:
        return
    provider = get_provider(name)
    declared = provider.data_boundary or config.embedding.data_boundary or "undeclared"
    if declared not in SAFE_DATA_BOUNDARIES:
        raise RepoDocsBoundaryBlockedError(name, declared)


@contextlib.contextmanager
def writer_lock(cache_dir: Path) -> Iterator[None]:
    """One docs-cache writer at a time: the shared writer lease (``store.lease``: an
    ``flock`` on ``repo_docs.lock`` naming its holder, e.g. ``daemon job-000004``).

    :raises IndexBusyError: another process is indexing docs into this cache (a
        ``WriterBusyError`` naming the holder).
    """
    from gitquarry.store.lease import writer_lease

    with writer_lease(cache_dir / "repo_docs.lock", db_path=cache_dir / DB_NAME):
        yield


# --- vector checkpoints (vector-only, no text) ----------------------------------------------

_CKPT_MAGIC = b"GQVC1\n"


def _checkpoint_path(cache_dir: Path, set_id: str) -> Path:
    return cache_dir / "checkpoints" / f"{set_id}.vec"


def write_checkpoint(cache_dir: Path, set_id: str, namespace_key: str,
                     rows: list[tuple[str, str, np.ndarray]]) -> None:
    """Append vectors to the set's checkpoint: chunk id, input sha256 and float32 vector per
    record, each record followed by its own sha256 (a torn or corrupt tail is dropped)."""
    path = _checkpoint_path(cache_dir, set_id)
    safe_paths.ensure_state_dir(path.parent, cache_dir)
    ns = namespace_key.encode()
    fd = safe_paths.open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as handle:
        if handle.tell() == 0:
            handle.write(_CKPT_MAGIC + struct.pack("<I", len(ns)) + ns)
        for cid, sha, vec in rows:
            body = bytes.fromhex(cid) + bytes.fromhex(sha) + struct.pack("<I", len(vec)) + \
                np.asarray(vec, dtype="<f4").tobytes()
            handle.write(struct.pack("<I", len(body)) + body + hashlib.sha256(body).digest())


def read_checkpoint(cache_dir: Path, set_id: str,
                    namespace_key: str) -> list[tuple[str, str, np.ndarray]]:
    """Vectors checkpointed for the set in ``namespace_key``; [] when none, corrupt records
    (and a file for another namespace) are ignored: a corrupt checkpoint is a cache miss."""
    path = _checkpoint_path(cache_dir, set_id)
    try:
        if not safe_paths.check_state_dir(path.parent, cache_dir):
            return []
        fd = safe_paths.open_regular(path, os.O_RDONLY)
    except (OSError, GitquarryError):  # missing, a link, not a regular file: a cache miss
        return []
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    if not data.startswith(_CKPT_MAGIC):
        return []
    pos = len(_CKPT_MAGIC)
    (n,) = struct.unpack_from("<I", data, pos)
    if data[pos + 4 : pos + 4 + n].decode("utf-8", "replace") != namespace_key:
        return []
    pos += 4 + n
    rows = []
    while pos + 4 <= len(data):
        (size,) = struct.unpack_from("<I", data, pos)
        body = data[pos + 4 : pos + 4 + size]
        digest = data[pos + 4 + size : pos + 36 + size]
        if len(body) != size or hashlib.sha256(body).digest() != digest or size < 68:
            break
        dims = struct.unpack_from("<I", body, 64)[0]
        if 68 + 4 * dims != size:
            break
        rows.append((body[:32].hex(), body[32:64].hex(),
                     np.frombuffer(body[68:], dtype="<f4").astype(np.float32)))
        pos += 36 + size
    return rows


def drop_checkpoint(cache_dir: Path, set_id: str) -> None:
    with contextlib.suppress(OSError, GitquarryError):
        safe_paths.unlink_regular(_checkpoint_path(cache_dir, set_id))


# --- the run --------------------------------------------------------------------------------


@dataclass
class _Run:
    cache: DocsCache
    reader: BlobReader
    resolved: ResolvedRevision
    chunk_policy: ChunkPolicy
    progress: ProgressFn | None
    should_cancel: CancelFn | None

    def emit(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(IndexProgress(phase, done, total))

    def cancelled(self) -> bool:
        return self.should_cancel is not None and self.should_cancel()


def _known(cache: DocsCache) -> Callable[[str], str | None]:
    def known(blob_oid: str) -> str | None:
        found = cache.blob_verdict(blob_oid)
        if found is None:
            return None
        return "ok" if found[1] == "ok" else "!" + found[1]

    return known


def _membership(run: _Run, plan: Plan, max_blob_bytes: int,
                result: IndexResult) -> list[tuple[str, int, str]]:
    """Walk the plan; chunk what is new; return the set's ``(path, ordinal, chunk_id)``."""
    cache, policy_key = run.cache, run.chunk_policy.key
    chunks: list[tuple[str, int, str]] = []
    view = run.resolved.view
    total = len(view.paths())
    walk = plan_view(view, plan.policy, run.reader, max_blob_bytes=max_blob_bytes,
                     known=_known(cache), plan=plan)
    for seen, (doc, data) in enumerate(walk, start=1):
        if seen % 50 == 0:
            run.emit("plan", seen, total)
            if run.cancelled():
                raise IndexCancelledError("indexing")
        ids: list[str] | None = None
        if data is None:
            verdict = cache.blob_verdict(doc.blob_oid)
            if verdict is not None:
                ids = cache.chunk_ids(verdict[0], doc.content_class, policy_key)
            if ids is None:  # checked before, never chunked under this policy: read it now
                fetched = run.reader.read(doc.blob_oid, max_bytes=max_blob_bytes)
                data = fetched.data if fetched.status == "ok" else b""
        if ids is None:
            assert data is not None
            result.blobs_read += 1
            digest = blob_digest(data)
            spans = chunk_document(data, doc.content_class, run.chunk_policy)
            rows = [(chunk_id(digest, s, run.chunk_policy), s, slice_digest(data, s))
                    for s in spans]
            if doc.authority == "git":
                cache.record_blob(doc.blob_oid, digest, doc.size, "ok", doc.content_class,
                                  policy_key, rows)
            else:  # overlay bytes: locators only, keyed by content, never by a git blob
                cache.record_blob("wt:" + doc.blob_oid, digest, doc.size, "ok",
                                  doc.content_class, policy_key, rows)
            ids = [r[0] for r in rows]
        chunks.extend((doc.path, i, cid) for i, cid in enumerate(ids))
    for ex in plan.exclusions:
        if ex.blob_oid and ex.reason in ("binary", "invalid_utf8", "lfs_pointer"):
            cache.record_blob(ex.blob_oid, "", ex.size, ex.reason)
    run.emit("plan", total, total)
    return chunks


def _embed(run: _Run, embedder: Embedder, namespace_key: str, cache_dir: Path,
           chunks: list[tuple[str, int, str]], plan: Plan, max_blob_bytes: int,
           batch_size: int, result: IndexResult, *, headings: bool = True) -> None:
    """Embed the set's chunks that have no vector yet, batch by batch; with ``headings``
    each batch also stores its chunks' heading vectors (the distinct heading texts not
    stored before), in the same transaction as the chunk vectors."""
    cache, set_id = run.cache, run.resolved.set_id(run.chunk_policy, namespace_key)
    ns_id: int | None = cache.namespace_id(namespace_key, 0, create=False)
    replay = read_checkpoint(cache_dir, set_id, namespace_key)
    if replay:
        if ns_id is None:
            ns_id = cache.namespace_id(namespace_key, len(replay[0][2]), create=True)
        assert ns_id is not None
        cache.write_vectors(ns_id, replay)
        result.replayed = len(replay)
        drop_checkpoint(cache_dir, set_id)
    distinct = list(dict.fromkeys(cid for _p, _o, cid in chunks))
    have = cache.chunks_with_vectors(ns_id, distinct) if ns_id is not None else set()
    result.reused = len(have) - min(result.replayed, len(have))
    missing = [c for c in chunks if c[2] not in have]
    todo: dict[str, tuple[str, int]] = {}
    for path, ordinal, cid in missing:
        todo.setdefault(cid, (path, ordinal))
    total = len(todo)
    run.emit("embed", 0, total)
    if not todo:
        return
    files = {f.path: f for f in plan.files}
    locs = {(loc.path, loc.ordinal): loc for loc in cache.locators(set_id)}
    # texts, grouped by file so each blob is read once
    by_path: dict[str, list[tuple[int, str]]] = {}
    for cid, (path, ordinal) in todo.items():
        by_path.setdefault(path, []).append((ordinal, cid))
    done = 0
    pending: list[tuple[str, str, str]] = []  # (chunk id, embedding input, heading text)

    def flush() -> None:
        nonlocal ns_id, done
        if not pending:
            return
        if run.cancelled():
            raise IndexCancelledError("indexing")
        texts = [t for _c, t, _h in pending]
        vectors = embedder.embed(texts)
        if ns_id is None:
            ns_id = cache.namespace_id(namespace_key, int(vectors.shape[1]), create=True)
        assert ns_id is not None
        rows = [(cid, hashlib.sha256(text.encode()).hexdigest(), vectors[i])
                for i, (cid, text, _h) in enumerate(pending)]
        try:
            if headings:
                _store_headings(run, embedder, ns_id, [(c, h) for c, _t, h in pending],
                                result, rows)
            else:
                cache.write_vectors(ns_id, rows)
        except IndexBusyError:
            write_checkpoint(cache_dir, set_id, namespace_key, rows)
            raise
        done += len(pending)
        result.embedded += len(pending)
        pending.clear()
        run.emit("embed", done, total)

    for path in sorted(by_path):
        doc = files[path]
        data = _document_bytes(run, doc, max_blob_bytes)
        ordered = chunk_document(data, doc.content_class, run.chunk_policy)
        title = document_title(ordered)
        spans = {s.byte_start: s for s in ordered}
        for ordinal, cid in sorted(by_path[path]):
            loc = locs[(path, ordinal)]
            span = spans.get(loc.byte_start)
            if span is None or span.byte_end != loc.byte_end:
                result.failed += 1  # the bytes no longer chunk the same way: never embed
                continue
            pending.append((cid, embedding_input(path, span, data),
                            heading_text(path, span.heading_path, title)))
            if len(pending) >= batch_size:
                flush()
    flush()


def _store_headings(run: _Run, embedder: Embedder, ns_id: int, links: list[tuple[str, str]],
                    result: IndexResult,
                    rows: list[tuple[str, str, np.ndarray]] | None = None) -> None:
    """Embed the heading texts of ``links`` ``(chunk id, heading text)`` that no stored
    heading vector has (each distinct text once), then write them, the links and the chunk
    vectors ``rows`` in one transaction.

    :raises EmbeddingError, IndexBusyError"""
    by_digest = {text_digest(text): text for _c, text in links}
    have = run.cache.heading_digests(ns_id, by_digest)
    new = [d for d in by_digest if d not in have]
    vectors = embedder.embed([by_digest[d] for d in new]) if new else None
    heading_rows = [(d, vectors[i]) for i, d in enumerate(new)] if vectors is not None else []
    run.cache.write_embedded(ns_id, rows or [], heading_rows,
                             [(c, text_digest(text)) for c, text in links])
    result.headings_embedded += len(new)


def _fill_headings(run: _Run, embedder: Embedder, namespace_key: str, set_id: str,
                   max_blob_bytes: int, batch_size: int, result: IndexResult) -> int:
    """Add the heading vectors of the set's chunks that have a vector but none (a cache
    built before heading vectors; vectors replayed from a checkpoint). Reads only the
    documents of those chunks; returns how many chunks were linked.

    :raises EmbeddingError, IndexBusyError, IndexCancelledError"""
    cache = run.cache
    ns_id = cache.namespace_id(namespace_key, 0, create=False)
    if ns_id is None:
        return 0
    missing = set(cache.chunks_without_headings(set_id, ns_id))
    if not missing:
        return 0
    by_doc: dict[tuple[str, str], list[Locator]] = {}
    for loc in cache.locators(set_id):
        if loc.chunk_id in missing:
            by_doc.setdefault((loc.authority, loc.path), []).append(loc)
    linked: set[str] = set()
    links: list[tuple[str, str]] = []
    for key in sorted(by_doc):
        locs = by_doc[key]
        first = locs[0]
        doc = DocFile(first.path, first.blob_oid, 0, first.content_class, first.authority)
        data = _document_bytes(run, doc, max_blob_bytes)
        ordered = chunk_document(data, first.content_class, run.chunk_policy)
        title = document_title(ordered)
        spans = {s.byte_start: s for s in ordered}
        for loc in locs:
            span = spans.get(loc.byte_start)
            if loc.chunk_id in linked or span is None or span.byte_end != loc.byte_end:
                continue  # a chunk id seen in another file, or bytes that no longer match
            linked.add(loc.chunk_id)
            links.append((loc.chunk_id, heading_text(loc.path, span.heading_path, title)))
        if len(links) >= batch_size:
            if run.cancelled():
                raise IndexCancelledError("indexing")
            _store_headings(run, embedder, ns_id, links, result)
            links = []
    if links:
        _store_headings(run, embedder, ns_id, links, result)
    return len(linked)


def _document_bytes(run: _Run, doc: DocFile, max_blob_bytes: int) -> bytes:
    overlay = run.resolved.overlay
    if doc.authority == "worktree_overlay" and overlay is not None:
        from gitquarry.repo_docs.overlay import read_overlay_file

        entry = overlay.by_path()[doc.path]
        data = read_overlay_file(overlay, entry, max_blob_bytes)
        return data or b""
    fetched = run.reader.read(doc.blob_oid, max_bytes=max_blob_bytes)
    return fetched.data if fetched.status == "ok" else b""


def index_revision_set(
    binding: Binding,
    config: Config,
    *,
    revision: str | None = None,
    include_worktree: bool = False,
    embedder: Embedder | None = None,
    progress: ProgressFn | None = None,
    should_cancel: CancelFn | None = None,
    cache_dir: Path | None = None,
) -> IndexResult:
    """Build (or resume, or confirm) the revision set for ``revision`` of ``binding``.

    ``embedder``: use this one instead of creating ``config.embedding``'s (the boundary rule
    still applies to it). With ``provider = "none"`` the set holds locators only and is
    ``ready`` (hybrid search then uses full-text ranking and says so).

    :raises RepoDocsBoundaryBlockedError: before any work, for a remote/unknown/undeclared
        provider.
    :raises IndexCancelledError: ``should_cancel`` returned True (finished work is kept; the
        set is ``partial`` when its membership was written).
    :raises IndexBusyError: another writer holds the cache (finished vectors are kept in a
        checkpoint).
    :raises RevisionNotFoundError, RepoDocsPolicyInvalidError, EmbeddingError, GitError
    """
    started = time.monotonic()
    docs = config.docs
    chunk_policy = ChunkPolicy(docs.chunk_max_chars, docs.chunk_min_chars)
    if embedder is not None:
        if embedder.data_boundary not in SAFE_DATA_BOUNDARIES:
            raise RepoDocsBoundaryBlockedError(embedder.provider, embedder.data_boundary)
    else:
        check_index_boundary(config)
        embedder = create_embedder(config.embedding, purpose="index")
    namespace_key = embedder.namespace(TEXT_FORMAT).key if embedder is not None \
        else NO_NAMESPACE
    cache_dir = cache_dir or cache_dir_for(binding, config)
    with writer_lock(cache_dir), BlobReader(_git_dir(binding)) as reader, \
            DocsCache(cache_dir / DB_NAME, writer=True) as cache:
        _exclude_cache_dir(binding, cache_dir)
        resolved = resolve_revision(binding, reader, revision=revision,
                                    include_worktree=include_worktree)
        set_id = resolved.set_id(chunk_policy, namespace_key)
        result = IndexResult(
            revision_set_id=set_id, repo_id=binding.repo_id, effective_revision=resolved.commit,
            policy_hash=resolved.policy.policy_hash, policy_source=resolved.policy.source,
            namespace_id=namespace_key, authority=resolved.authority,
            overlay_digest=resolved.overlay_digest, state="building",
        )
        result.warnings.extend({"code": "docs_cache_replaced", "message": notice}
                               for notice in cache.store.notices)
        existing = cache.get_set(set_id)
        headings = embedder is not None and docs.heading_weight > 0
        if existing is not None and existing.state == "ready":
            added = 0
            if headings and embedder is not None:  # a set built before heading vectors
                run = _Run(cache, reader, resolved, chunk_policy, progress, should_cancel)
                added = _fill_headings(run, embedder, namespace_key, set_id,
                                       docs.max_blob_bytes, config.embedding.batch_size,
                                       result)
                if added:
                    result.warnings.append({
                        "code": "heading_vectors_added",
                        "message": f"added the heading vectors of {added} chunks (a set "
                        "indexed before heading vectors); hybrid search now uses them",
                    })
            result.state, result.up_to_date = "ready", not added
            _fill(result, existing)
            result.reused = existing.eligible_chunks
            result.seconds = round(time.monotonic() - started, 3)
            return result
        cache.begin_set(resolved.identity(chunk_policy, namespace_key), set_id=set_id,
                        policy_source=resolved.policy.source,
                        policy_file=resolved.policy.policy_file, authority=resolved.authority)
        run = _Run(cache, reader, resolved, chunk_policy, progress, should_cancel)
        plan = Plan(resolved.commit, resolved.policy)
        membership_written = False
        try:
            chunks = _membership(run, plan, docs.max_blob_bytes, result)
            cache.write_membership(set_id, plan.files, plan.exclusions, chunks,
                                   not_selected=plan.not_selected)
            membership_written = True
            if embedder is not None:
                _embed(run, embedder, namespace_key, cache_dir, chunks, plan,
                       docs.max_blob_bytes, config.embedding.batch_size, result,
                       headings=headings)
                if headings:  # vectors replayed from a checkpoint, or stored before
                    _fill_headings(run, embedder, namespace_key, set_id, docs.max_blob_bytes,
                                   config.embedding.batch_size, result)
        except (IndexCancelledError, EmbeddingError, IndexBusyError) as exc:
            state = "partial" if membership_written else "failed"
            with contextlib.suppress(IndexBusyError):
                cache.finish_set(set_id, state, error_code=exc.code,
                                 embedded_chunks=_embedded(cache, set_id, namespace_key),
                                 reused_chunks=result.reused)
            raise
        except BaseException as exc:
            with contextlib.suppress(Exception):
                cache.finish_set(set_id, "failed", error_code=getattr(exc, "code", "error"))
            raise
        state = "ready"
        if resolved.overlay is not None:
            now = compute_overlay(binding.path, resolved.object_format, lambda _p: True)
            if restrict_overlay(now, resolved.policy).digest != resolved.overlay.digest:
                state = "superseded"
                result.warnings.append({
                    "code": "superseded",
                    "message": "the working tree changed while indexing; the overlay set "
                    "was published superseded; re-run with --include-worktree",
                })
        embedded = _embedded(cache, set_id, namespace_key)
        if state == "ready" and embedder is not None and embedded < len(
                {c for _p, _o, c in chunks}):
            state = "partial"
        cache.finish_set(set_id, state, embedded_chunks=embedded, reused_chunks=result.reused,
                         failed_chunks=result.failed)
        row = cache.get_set(set_id)
        assert row is not None
        _fill(result, row)
        result.state = state
        result.exclusions_by_reason = plan.exclusion_counts()
        run.emit("done", 1, 1)
    result.seconds = round(time.monotonic() - started, 3)
    return result


def _embedded(cache: DocsCache, set_id: str, namespace_key: str) -> int:
    ns_id = cache.namespace_id(namespace_key, 0, create=False)
    if ns_id is None:
        return 0
    row = cache.conn.execute(
        "SELECT count(DISTINCT sc.chunk_id) FROM set_chunks sc JOIN vectors v ON "
        "v.chunk_id = sc.chunk_id AND v.namespace_id = ? WHERE sc.set_id = ?",
        (ns_id, set_id)).fetchone()
    return int(row[0])


def _fill(result: IndexResult, row: Any) -> None:
    import json

    result.eligible_files = row.eligible_files
    result.eligible_bytes = row.eligible_bytes
    result.eligible_chunks = row.eligible_chunks
    result.missing_objects = row.missing_objects
    result.exclusions_by_reason = json.loads(row.exclusions)


def _git_dir(binding: Binding) -> Path:
    from gitquarry.repo_docs.revision import git_dir_of

    return git_dir_of(binding)[0]


def _exclude_cache_dir(binding: Binding, cache_dir: Path) -> None:
    """Keep the cache out of ``git status`` (``.git/info/exclude``); best effort."""
    from gitquarry.errors import GitquarryError
    from gitquarry.gitio.exclude import ensure_info_exclude

    if binding.source.bare:
        return
    with contextlib.suppress(GitquarryError, OSError):
        ensure_info_exclude(cache_dir)
