"""The built-in job types: ``history_index``, ``history_embed``, ``graph_reindex``.

Each runs the steps of the one indexing workflow (``gitquarry.indexing``, the one
``gitquarry index`` runs) inside ``indexing.writing`` with its workspace's writer lease,
reports progress, and returns a result with counts and repository-relative names only.
``history_index`` runs ``index_history`` (by reachability; a killed run resumes without loss
or duplicates) and ``refresh_graph``, and then submits a ``history_embed`` job, which runs
``embed_commits`` through vector-only checkpoints and yields to any more urgent job between
provider calls.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.service.jobs import JobContext, JobServices, JobType, register_job_type

if TYPE_CHECKING:
    from gitquarry.service.job_store import Job
    from gitquarry.store import Store
    from gitquarry.workspace import Workspace

HISTORY_INDEX = "history_index"
HISTORY_EMBED = "history_embed"
GRAPH_REINDEX = "graph_reindex"


def relative_name(root: Path, path: Path | str) -> str:
    """``path`` relative to ``root``; the root itself (a workspace that is one repository)
    by its directory name, as a user calls it, not "."; the last component when ``path``
    lies elsewhere. Never absolute."""
    p = Path(path)
    try:
        rel = p.relative_to(root).as_posix()
    except ValueError:
        return p.name or "."
    if rel in ("", "."):
        return Path(root).name or "."
    return rel


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


# -- history_index --------------------------------------------------------------------------


def refs_target(services: JobServices, scope: str) -> str:
    """Fingerprint of every indexed ref tip of every repository in the workspace."""
    return services.refs_fingerprint(scope)


def run_history_index(ctx: JobContext) -> dict[str, Any]:
    from gitquarry.history.index.vector_state import indexed_state_digest
    from gitquarry.indexing import index_history, refresh_graph, writing

    ws = ctx.workspace()
    started = time.monotonic()
    ctx.set_progress(phase="starting", done=0, total=None)
    # the state this run covers at least (refs may move on while it runs: a later job follows)
    target = ctx.services.refs_fingerprint(ctx.job.scope)
    ctx.retarget(target)
    graph: dict[str, Any] | None = None
    graph_error: str | None = None

    def notice(text: str) -> None:  # an index set aside or adopted (store.trust)
        ctx.event("index_trust", message=ctx.services.redact(text))

    with writing(ws, ctx.writer_lease(ws), on_notice=notice) as store:
        report = index_history(ws, store, progress=ctx.progress)
        indexed_state = indexed_state_digest(store.conn)
        ctx.check()
        refreshed, broken = refresh_graph(ws, store)  # a broken graph must not fail history
        graph = refreshed.to_dict() if refreshed is not None else None
        if broken is not None:
            graph_error = f"{broken.code}: {ctx.services.redact(str(broken))}"
    repos = [
        {
            "name": relative_name(ws.root, r.path),
            "new_commits": r.new_commits,
            "pruned_commits": r.pruned_commits,
            "up_to_date": r.up_to_date,
            "error": ctx.services.redact(r.error) if r.error else None,
        }
        for r in report.repositories
    ]
    ctx.services.after_history_index(ctx.job.scope, ws)
    if report.repositories and len(report.failed) == len(report.repositories):
        from gitquarry.errors import GitError

        raise GitError(["index"], 1, "; ".join(r.error or "" for r in report.failed))
    if ctx.services.embed and ws.config.embedding.provider != "none":
        ctx.services.submit(HISTORY_EMBED, ctx.job.scope, origin="chain")
    return {
        "new_commits": report.new_commits,
        "pruned_commits": report.pruned_commits,
        "total_commits": report.total_commits,
        "repositories": repos,
        "removed_repositories": len(report.removed_repositories),
        "graph": graph,
        "graph_error": graph_error,
        "indexed_state": indexed_state,
        "seconds": round(time.monotonic() - started, 3),
    }


def history_done(services: JobServices, scope: str, target: str, last: Job | None) -> bool:
    """The refs are indexed: the last success had this target (the refs fingerprint) and
    the index still holds what that run left (``indexed_state``), so a deleted or replaced
    index file is indexed again although no ref moved.

    :raises GitquarryError, sqlite3.Error: the index cannot be read (the caller submits)."""
    from gitquarry.errors import NoIndexError
    from gitquarry.history.index.vector_state import indexed_state_digest

    if last is None or last.target != target:
        return False
    recorded = (last.result or {}).get("indexed_state")
    if not isinstance(recorded, str):
        return True  # a result from before this field: the target alone decides
    try:
        store = services.load_workspace(scope).open_store()
    except NoIndexError:
        return False
    try:
        return indexed_state_digest(store.conn) == recorded
    finally:
        store.close()


# -- history_embed --------------------------------------------------------------------------


def embed_settings(ws: Workspace) -> list[str]:
    """The embedding settings a ``history_embed`` job works under (and the vector format)."""
    from gitquarry.history.index.document import text_format

    e = ws.config.embedding
    return [e.provider, e.model, e.url, str(e.batch_size), text_format()]


def _embed_target_of(ws: Workspace, store: Store | None) -> str:
    from gitquarry.history.index.vector_state import indexed_state_digest

    state = indexed_state_digest(store.conn) if store is not None else "no index"
    return _digest([*embed_settings(ws), state])[:32]


def embed_target(services: JobServices, scope: str) -> str:
    """The work's identity: the embedding settings plus the indexed state it embeds up to
    (every indexed ref tip and the commit count: ``history.embed.indexed_state_digest``),
    so a new commit is new work, while every request made before it is indexed is the
    same work (an event storm coalesces into one job).

    :raises WorkspaceUnavailableError, ConfigError: as ``load_workspace``."""
    from gitquarry.errors import NoIndexError

    ws = services.load_workspace(scope)
    try:
        store = ws.open_store()
    except NoIndexError:
        return _embed_target_of(ws, None)
    try:
        return _embed_target_of(ws, store)
    finally:
        store.close()


def embed_done(services: JobServices, scope: str, target: str, last: Job | None) -> bool:
    """Nothing to embed: no index yet, or no commit lacks a vector in the namespace the
    last success with this very target wrote (exact), or in the configured one (looked up
    without building the embedder: a foreground ``gitquarry index`` may have embedded).

    :raises GitquarryError, sqlite3.Error: the index cannot be read (the caller submits)."""
    from gitquarry.errors import NoIndexError
    from gitquarry.history.index.vector_state import (
        configured_namespace_id,
        namespace_id_of,
        pending_count,
    )

    ws = services.load_workspace(scope)
    try:
        store = ws.open_store()
    except NoIndexError:
        return True  # the history index job chains an embed job once there is one
    try:
        conn = store.conn
        key = (last.result or {}).get("namespace") if last is not None else None
        if last is not None and last.target == target and isinstance(key, str):
            ns = namespace_id_of(conn, key)
            if ns is not None and pending_count(conn, ns) == 0:
                return True
        cfg = ws.config.embedding
        ns = configured_namespace_id(conn, cfg.provider, cfg.model)
        return ns is not None and pending_count(conn, ns) == 0
    finally:
        store.close()


def run_history_embed(ctx: JobContext) -> dict[str, Any]:
    from gitquarry.embedding import create_embedder
    from gitquarry.indexing import embed_commits, writing
    from gitquarry.service.checkpoint import CheckpointingEmbedder

    ws = ctx.workspace()
    config = ws.config.embedding
    inner = create_embedder(config, purpose="index")
    if inner is None:
        return {"skipped": "embedding provider is none"}
    embedder = CheckpointingEmbedder(
        inner, ctx.services.checkpoints(), ctx.job.work_key, before_call=ctx.check
    )
    try:
        with writing(ws, ctx.writer_lease(ws), create=False) as store:
            # the exact state this run embeds up to (nothing writes while it holds the
            # lease): the target a later `done` test compares with
            ctx.retarget(_embed_target_of(ws, store))
            embedder.work_key = ctx.job.work_key
            result = embed_commits(ws, store, progress=ctx.progress, embedder=embedder)
    finally:
        embedder.close()
        ctx.job.progress["checkpoint"] = vars(embedder.stats)
    ctx.services.checkpoints().discard(ctx.job.work_key)
    assert result is not None  # an embedder was given
    result["checkpoint"] = vars(embedder.stats)
    return result


# -- graph_reindex --------------------------------------------------------------------------


def graph_target(services: JobServices, scope: str) -> str:
    from gitquarry.graph.sources import docs_dir_files, fingerprint, graph_files

    ws = services.load_workspace(scope)
    files = graph_files(ws.root, ws.config.graph) + docs_dir_files(ws.root, ws.config.graph)
    return _digest([f"{os.fsdecode(p)}:{fingerprint(p)}" for p in sorted(files)])[:32]


def run_graph_reindex(ctx: JobContext) -> dict[str, Any]:
    from gitquarry.graph import refresh_if_stale
    from gitquarry.indexing import writing

    ws = ctx.workspace()
    ctx.set_progress(phase="graph", done=0, total=None)
    with writing(ws, ctx.writer_lease(ws)) as store:
        # a broken graph file fails this job (it is the job's only work)
        report = refresh_if_stale(store, ws.root, ws.config.graph)
    return {"graph": report.to_dict() if report is not None else None}


register_job_type(JobType(
    name=HISTORY_INDEX, priority=10, run=run_history_index, target=refs_target,
    done=history_done,
    description="incremental commit-history index of a workspace (keyword-searchable)",
), replace=True)
register_job_type(JobType(
    name=GRAPH_REINDEX, priority=20, run=run_graph_reindex, target=graph_target,
    description="architecture-graph reindex after graph or docs files changed",
), replace=True)
register_job_type(JobType(
    name=HISTORY_EMBED, priority=50, run=run_history_embed, target=embed_target, yields=True,
    done=embed_done,
    description="embedding vectors for commits that lack them (checkpointed)",
), replace=True)
