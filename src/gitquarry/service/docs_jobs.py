"""Repository-docs revision-set jobs and their retention (GC).

Job type ``repo_docs_index``: scope = the source registration id (opaque), generation = its
source registration generation, target = the commit the requested revision names (plus the
overlay flag and the embedding configuration), so equivalent requests coalesce and a new
HEAD is new work. The job runs ``repo_docs.indexer.index_revision_set`` pinned to that
commit, with progress and cooperative cancel; the indexer's own vector-only checkpoints
replay vectors after writer contention. A set published ``superseded`` (the worktree changed
while indexing an overlay) makes the job ``superseded``.

After each successful index, ``collect_garbage`` applies retention to that docs cache, per
identity (git store, policy, chunk policy, namespace): at most 8 committed ready sets and
none older than 30 days; overlays 24 h; non-ready terminal sets 7 days; then, while the
vectors exceed the ceiling (512 MiB, ``GITQUARRY_REPO_DOC_VECTOR_BYTES``, or seed 002's
``GITCODE_MCP_REPO_DOC_VECTOR_BYTES`` when ours is unset), the oldest sets
first. Always kept: the newest ready set of each identity (of sets finished in the same
second, the one created last) and the set just built. A set still marked ``building`` is
one whose builder died (killed mid-build: retention holds the cache's writer lease, which
every build holds throughout, so none is running); it is resumed if its revision is
indexed again, else collected like a non-ready set after 7 days. Chunks, vectors and
chunking records no kept set references are deleted; checkpoint files of deleted sets, or
older than 7 days, too. GC is skipped while another
writer holds the cache. Searches already holding a set's snapshot are unaffected: they
loaded it in one read transaction, and citations hydrate from Git.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.errors import GitquarryError, IndexBusyError, IndexCancelledError
from gitquarry.service.jobs import JobContext, JobServices, JobStop, JobType, register_job_type

if TYPE_CHECKING:
    from gitquarry.repo_docs.registry import Binding
    from gitquarry.service.job_store import Job

REPO_DOCS_INDEX = "repo_docs_index"
MAX_SETS_PER_IDENTITY = 8
MAX_SET_AGE_S = 30 * 86_400
OVERLAY_AGE_S = 86_400
NON_READY_AGE_S = 7 * 86_400
CHECKPOINT_AGE_S = 7 * 86_400
DEFAULT_VECTOR_BYTES = 512 * 1024 * 1024
VECTOR_BYTES_ENV = "GITQUARRY_REPO_DOC_VECTOR_BYTES"
#: seed 002's name for the same ceiling, read when ours is unset
SEED_VECTOR_BYTES_ENV = "GITCODE_MCP_REPO_DOC_VECTOR_BYTES"


def vector_byte_ceiling() -> int:
    """The vector-byte ceiling: ``GITQUARRY_REPO_DOC_VECTOR_BYTES`` when set, else seed 002's
    ``GITCODE_MCP_REPO_DOC_VECTOR_BYTES``; a positive integer, else 512 MiB."""
    name = VECTOR_BYTES_ENV if os.environ.get(VECTOR_BYTES_ENV, "").strip() \
        else SEED_VECTOR_BYTES_ENV
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_VECTOR_BYTES


def binding_for(params: dict[str, Any]) -> Binding:
    """The registry binding a job names (its exact three-field selector).

    :raises RepoDocsStaleGenerationError, RepoDocsNotRegisteredError: as the registry."""
    from gitquarry.repo_docs.registry import Registry, Selector

    return Registry().resolve(Selector(
        params["repository"], params["registration_id"], params["source_registration_id"],
        int(params["source_registration_generation"]),
    ))


def docs_target(binding: Binding, revision: str | None, include_worktree: bool) -> str:
    """The work's identity: the commit the revision names (+ overlay flag + a digest of
    every setting the set's identity depends on besides the commit and the policy file it
    holds: embedding provider/model/endpoint, chunk policy, blob size cap)."""
    from gitquarry.config import load_config
    from gitquarry.errors import RevisionNotFoundError
    from gitquarry.gitio.refs import head_commit
    from gitquarry.repo_docs.revision import git_dir_of

    git_dir, _ = git_dir_of(binding)
    commit = head_commit(git_dir, revision or "HEAD")
    if commit is None:
        raise RevisionNotFoundError(revision or "HEAD")
    from gitquarry.repo_docs.chunker import ChunkPolicy

    config = load_config(None)
    emb, docs = config.embedding, config.docs
    chunks = ChunkPolicy(docs.chunk_max_chars, docs.chunk_min_chars).key
    extra = hashlib.sha256(f"{emb.provider}|{emb.model}|{emb.url}|{chunks}|"
                           f"{docs.max_blob_bytes}".encode()).hexdigest()[:12]
    return f"{commit}:{'worktree' if include_worktree else 'git'}:{extra}"


def docs_done(services: JobServices, scope: str, target: str, last: Job | None) -> bool:
    """The set is built: the last success had this target and the revision set it
    published is still in the docs cache (not evicted, the cache not deleted).

    :raises GitquarryError: the binding or the cache cannot be read (the caller submits)."""
    from gitquarry.config import load_config
    from gitquarry.repo_docs.cache import DB_NAME, DocsCache, cache_dir_for

    if last is None or last.target != target:
        return False
    set_id = (last.result or {}).get("revision_set_id")
    if not isinstance(set_id, str):
        return False
    path = cache_dir_for(binding_for(last.params), load_config(None)) / DB_NAME
    if not path.is_file():
        return False
    with DocsCache(path) as cache:
        row = cache.get_set(set_id)
    return row is not None and row.state == (last.result or {}).get("state")


def run_repo_docs_index(ctx: JobContext) -> dict[str, Any]:
    from gitquarry.config import load_config
    from gitquarry.repo_docs.indexer import IndexProgress, cache_dir_for, index_revision_set

    params = ctx.job.params
    binding = binding_for(params)
    config = load_config(None)
    commit = ctx.job.target.split(":", 1)[0]

    def progress(event: IndexProgress) -> None:
        ctx.set_progress(phase=event.phase, done=event.done, total=event.total or None)

    try:
        result = index_revision_set(
            binding, config, revision=commit,
            include_worktree=bool(params.get("include_worktree")),
            progress=progress, should_cancel=ctx.stop_event.is_set,
        )
    except IndexCancelledError:
        raise JobStop(ctx.stop_reason or "cancelled") from None
    data = result.to_dict()
    if result.state == "superseded":
        data["job_status"] = "superseded"
        return data
    cache_dir = cache_dir_for(binding, config)
    gc = collect_garbage(cache_dir, keep_set=result.revision_set_id)
    ctx.event("gc", **gc.to_dict())
    data["gc"] = gc.to_dict()
    return data


@dataclass
class GcReport:
    """What one retention pass deleted. ``skipped`` names why nothing was done."""

    deleted_sets: int = 0
    deleted_chunks: int = 0
    deleted_vectors: int = 0
    vector_bytes_before: int = 0
    vector_bytes_after: int = 0
    deleted_checkpoints: int = 0
    ceiling_bytes: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def collect_garbage(cache_dir: Path, *, keep_set: str | None = None,
                    now: float | None = None, ceiling: int | None = None) -> GcReport:
    """Apply the retention rules (module docstring) to the docs cache in ``cache_dir``."""
    from gitquarry.repo_docs.cache import DB_NAME, DocsCache
    from gitquarry.repo_docs.indexer import writer_lock

    report = GcReport(ceiling_bytes=ceiling or vector_byte_ceiling())
    now = time.time() if now is None else now
    if not (cache_dir / DB_NAME).is_file():
        report.skipped = "no docs cache"
        return report
    try:
        with writer_lock(cache_dir), DocsCache(cache_dir / DB_NAME) as cache:
            _collect(cache.store, report, keep_set, now)
    except IndexBusyError:
        report.skipped = "writer contended"
        return report
    _prune_checkpoints(cache_dir, cache_dir / DB_NAME, report, now)
    return report


def _vector_bytes(conn: Any) -> int:
    return int(conn.execute("SELECT coalesce(sum(length(vector)), 0) FROM vectors").fetchone()[0])


def _collect(store: Any, report: GcReport, keep_set: str | None, now: float) -> None:
    conn = store.conn
    rows = [dict(r) for r in conn.execute(
        "SELECT set_id, git_store_ref, policy_hash, chunk_policy, namespace_key, overlay_digest, "
        "state, created_at, updated_at, coalesce(completed_at, updated_at) AS done_at, "
        "rowid AS seq FROM revision_sets")]
    report.vector_bytes_before = _vector_bytes(conn)
    protected: set[str] = {keep_set} if keep_set else set()
    by_identity: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        key = (r["git_store_ref"], r["policy_hash"], r["chunk_policy"], r["namespace_key"])
        by_identity.setdefault(key, []).append(r)
    doomed: dict[str, str] = {}
    for sets in by_identity.values():
        # newest first; sets finished in the same second by the order they were created
        ready = sorted((r for r in sets if r["state"] == "ready" and not r["overlay_digest"]),
                       key=lambda r: (r["done_at"], r["seq"]), reverse=True)
        if ready:
            protected.add(ready[0]["set_id"])
        for n, r in enumerate(ready):
            if n >= MAX_SETS_PER_IDENTITY:
                doomed.setdefault(r["set_id"], "count")
            elif now - r["done_at"] > MAX_SET_AGE_S:
                doomed.setdefault(r["set_id"], "age")
        for r in sets:
            if r["overlay_digest"] and now - r["updated_at"] > OVERLAY_AGE_S:
                doomed.setdefault(r["set_id"], "overlay")
            elif r["state"] in ("failed", "superseded", "partial", "building") and (
                now - r["updated_at"] > NON_READY_AGE_S
            ):
                doomed.setdefault(r["set_id"], "non_ready")
    doomed = {k: v for k, v in doomed.items() if k not in protected}
    with store.atomic() as c:
        for set_id in doomed:
            c.execute("DELETE FROM revision_sets WHERE set_id = ?", (set_id,))
        _drop_orphans(c, report)
    # the byte ceiling: oldest evictable sets first
    if _vector_bytes(conn) > report.ceiling_bytes:
        remaining = sorted((r for r in rows if r["set_id"] not in doomed
                            and r["set_id"] not in protected),
                           key=lambda r: (r["done_at"], r["seq"]))
        for r in remaining:
            if _vector_bytes(conn) <= report.ceiling_bytes:
                break
            with store.atomic() as c:
                c.execute("DELETE FROM revision_sets WHERE set_id = ?", (r["set_id"],))
                _drop_orphans(c, report)
            doomed[r["set_id"]] = "bytes"
    report.deleted_sets = len(doomed)
    for reason in doomed.values():
        report.reasons[reason] = report.reasons.get(reason, 0) + 1
    report.vector_bytes_after = _vector_bytes(conn)


def _drop_orphans(conn: Any, report: GcReport) -> None:
    """Chunks, vectors and chunking records that no remaining set references."""
    report.deleted_vectors += conn.execute(
        "DELETE FROM vectors WHERE chunk_id NOT IN (SELECT chunk_id FROM set_chunks)").rowcount
    report.deleted_chunks += conn.execute(
        "DELETE FROM chunks WHERE chunk_id NOT IN (SELECT chunk_id FROM set_chunks)").rowcount
    # heading-path vectors (repo_docs.heading_vectors): links of gone chunks, then the
    # vectors no link uses (not counted in the vector byte ceiling, which is the chunks')
    conn.execute("DELETE FROM chunk_headings WHERE chunk_id NOT IN "
                 "(SELECT chunk_id FROM set_chunks)")
    conn.execute("DELETE FROM heading_vectors WHERE NOT EXISTS (SELECT 1 FROM chunk_headings "
                 "ch WHERE ch.namespace_id = heading_vectors.namespace_id AND ch.text_sha256 = "
                 "heading_vectors.text_sha256)")
    conn.execute("DELETE FROM blob_chunks WHERE chunk_id NOT IN (SELECT chunk_id FROM chunks)")
    conn.execute(
        "DELETE FROM chunkings WHERE n_chunks > 0 AND NOT EXISTS (SELECT 1 FROM blob_chunks b "
        "WHERE b.blob_sha256 = chunkings.blob_sha256 AND b.content_class = "
        "chunkings.content_class AND b.chunk_policy = chunkings.chunk_policy)")


def _prune_checkpoints(cache_dir: Path, db: Path, report: GcReport, now: float) -> None:
    import sqlite3

    from gitquarry.store import safe_paths

    directory = cache_dir / "checkpoints"
    if not safe_paths.check_state_dir(directory, cache_dir):
        return
    safe_paths.check_sqlite_files(db)  # never a link: SQLite would follow it
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        live = {r[0] for r in conn.execute("SELECT set_id FROM revision_sets")}
    finally:
        conn.close()
    for path in directory.glob("*.vec"):
        try:
            old = now - path.stat().st_mtime > CHECKPOINT_AGE_S
        except OSError:
            continue
        if old or path.stem not in live:
            try:
                safe_paths.unlink_regular(path)
            except GitquarryError:  # a link or FIFO placed there: never deleted through
                continue
            report.deleted_checkpoints += 1


def check_docs_selector(selector: dict[str, Any]) -> None:
    """What :func:`submit_docs_job` checks before it submits, for a client to check before
    it starts or asks the daemon (a usage error leaves no daemon running behind it): the
    embedding boundary and the selector's resolution in this user's registry.

    :raises RepoDocsBoundaryBlockedError, UnknownEmbeddingProviderError,
        RepoDocsRegistrationError, RepoDocsStaleGenerationError: as ``submit_docs_job``.
    """
    from gitquarry.config import load_config
    from gitquarry.repo_docs.indexer import check_index_boundary
    from gitquarry.repo_docs.registry import Registry, Selector

    check_index_boundary(load_config(None))
    generation = selector.get("source_registration_generation")
    Registry().resolve(Selector(
        selector.get("repo"), selector.get("registration_id"),
        selector.get("source_registration_id"),
        int(generation) if generation is not None else None,
    ))


def submit_docs_job(services: JobServices, selector: dict[str, Any], *, revision: str | None,
                    include_worktree: bool, origin: str) -> Any:
    """Resolve ``selector`` in the registry and submit (or coalesce) the job for
    the exact commit ``revision`` names (every surface: CLI, MCP, web, reconcile).

    :raises RepoDocsBoundaryBlockedError: the configured embedding provider is remote,
        unknown or undeclared (seed 002: refused before a job is created).
    :raises UnknownEmbeddingProviderError: no such provider.
    :raises RepoDocsRegistrationError, RepoDocsStaleGenerationError: as the registry.
    :raises RevisionNotFoundError: the revision names no commit.
    """
    from gitquarry.config import load_config
    from gitquarry.repo_docs.indexer import check_index_boundary
    from gitquarry.repo_docs.registry import Registry, Selector

    check_index_boundary(load_config(None))
    generation = selector.get("source_registration_generation")
    binding = Registry().resolve(Selector(
        selector.get("repo"), selector.get("registration_id"),
        selector.get("source_registration_id"),
        int(generation) if generation is not None else None,
    ))
    services.add_redaction(str(binding.path), f"<repository {binding.repo_id}>")
    target = docs_target(binding, revision, include_worktree)
    params = {
        "repository": binding.repo_id,
        "registration_id": binding.registration.registration_id,
        "source_registration_id": binding.source.source_registration_id,
        "source_registration_generation": binding.source.generation,
        "revision": revision or "HEAD",
        "include_worktree": include_worktree,
    }
    return services.submit(
        REPO_DOCS_INDEX, binding.source.source_registration_id, origin=origin, target=target,
        params=params, generation=binding.source.generation, name=binding.repo_id,
    )


def reconcile_docs(services: JobServices) -> None:
    """The coordinator's poll: a job for each registered source whose HEAD has no set job."""
    from gitquarry.repo_docs.registry import Registry

    try:
        bindings = Registry().bindings()
    except GitquarryError:
        return
    for binding in bindings:
        try:
            submit_docs_job(services, {
                "repo": binding.repo_id,
                "registration_id": binding.registration.registration_id,
                "source_registration_id": binding.source.source_registration_id,
                "source_registration_generation": binding.source.generation,
            }, revision=None, include_worktree=False, origin="reconcile")
        except GitquarryError:
            continue


register_job_type(JobType(
    name=REPO_DOCS_INDEX, priority=30, run=run_repo_docs_index, done=docs_done,
    description="repository-docs revision set for one commit (then retention)",
    distinct_targets=True,
), replace=True)
