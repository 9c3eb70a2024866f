"""The coordinator: watched workspaces, their repositories and watches, and when to index.

A workspace is registered with ``watch(path)``; its absolute path stays in the state
database and the public face is an opaque ref (``ws-`` + 12 hex digits of SHA-256 of the
resolved path) plus its directory name. For each repository discovered under it the watcher
observes the git common dir (see ``service.watcher``); a relevant event marks the workspace
dirty, and after ``[daemon] debounce_s`` of quiet a ``history_index`` job (or a
``graph_reindex`` job for graph/docs files) is submitted. Every ``reconcile_s`` seconds each
workspace is re-discovered (new or vanished repositories, a moved or deleted workspace) and
a job is submitted when its refs fingerprint differs from the last success (nothing happens
otherwise), catching events dropped under load or on network filesystems; likewise a
``history_embed`` job when indexed commits lack vectors (a chained job that was lost, or
vectors left over by an earlier daemon), dropped when none do.

The coordinator is given what it uses, not the daemon: the job store, the ``[daemon]``
timings, ``submit`` (the runner's), ``add_redaction``, ``current_job`` (the running job,
for ``status``) and ``reconcile_hooks`` run at the start of each reconcile pass (the daemon
passes the docs sources' poll).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.errors import GitquarryError, InvalidArgumentError, WorkspaceUnavailableError
from gitquarry.service.job_store import Job, StateStore, WatchedWorkspace
from gitquarry.service.job_types import (
    GRAPH_REINDEX,
    HISTORY_EMBED,
    HISTORY_INDEX,
    relative_name,
)
from gitquarry.service.watcher import Debouncer, Watcher, WatchSpec, git_watch_specs

if TYPE_CHECKING:
    from gitquarry.config import DaemonConfig
    from gitquarry.gitio.discovery import Repository
    from gitquarry.workspace import Workspace

log = logging.getLogger(__name__)


def workspace_ref(path: Path) -> str:
    return "ws-" + hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def git_store_ref(repo: Repository) -> str:
    """Opaque id of a repository's git store: hash of its common dir and object format."""
    text = f"{repo.common_dir}\0{repo.object_format}"
    return "gs-" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:12]


class Coordinator:
    """Watched workspaces and when to index them.

    ``config``: the ``[daemon]`` section (``poll_s``, ``debounce_s``, ``reconcile_s``,
    ``embed``). ``submit(type, scope, origin=..., target=...)`` submits a job (returns it, or
    None when dropped); ``add_redaction(path, label)`` registers a path to redact;
    ``current_job()`` the running job or None; ``reconcile_hooks``: called first in every
    reconcile pass, before the workspaces."""

    def __init__(self, state: StateStore, config: DaemonConfig, *,
                 submit: Callable[..., Job | None],
                 add_redaction: Callable[[str, str], None] = lambda path, label: None,
                 current_job: Callable[[], Job | None] = lambda: None,
                 reconcile_hooks: Sequence[Callable[[], None]] = ()) -> None:
        self.state = state
        self.config = config
        self._submit = submit
        self._add_redaction = add_redaction
        self._current_job = current_job
        self._reconcile_hooks = list(reconcile_hooks)
        cfg = config
        self.watcher = Watcher(self._on_event, poll_s=cfg.poll_s)
        self.debouncer = Debouncer(self._settled, delay_s=cfg.debounce_s)
        self._lock = threading.RLock()
        self._repos: dict[str, list[Repository]] = {}
        self._missing: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.next_reconcile_at = time.time() + cfg.reconcile_s
        self._reconcile_now = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="gitquarry-reconcile",
                                        daemon=True)
        self._thread.start()
        self._reconcile_now.set()  # catch up with whatever happened while no daemon ran

    def stop(self) -> None:
        self._stop.set()
        self._reconcile_now.set()
        self.debouncer.stop()
        self.watcher.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        interval = self.config.reconcile_s
        while not self._stop.is_set():
            self._reconcile_now.wait(max(0.0, self.next_reconcile_at - time.time()))
            if self._stop.is_set():
                return
            self._reconcile_now.clear()
            self.next_reconcile_at = time.time() + interval
            try:
                self.reconcile_all()
            except Exception:
                log.exception("reconcile failed")

    def request_reconcile(self) -> None:
        self._reconcile_now.set()

    # -- registration ----------------------------------------------------------------------

    def watch(self, path: str) -> tuple[WatchedWorkspace, Any]:
        """Register the workspace at ``path`` and index it now (returns it and the job).

        :raises InvalidArgumentError: ``path`` is not an absolute path to a directory.
        """
        given = Path(path)
        if not given.is_absolute() or not given.is_dir():
            raise InvalidArgumentError("PATH", "is not a directory")
        root = given.resolve()
        ws = self.state.add_workspace(workspace_ref(root), root, root.name or "/")
        self._add_redaction(str(root), f"<workspace {ws.name}>")
        self._sync(ws)
        job = self._submit(HISTORY_INDEX, ws.ref, origin="watch-request")
        return ws, job

    def unwatch(self, ref: str) -> bool:
        removed = self.state.remove_workspace(ref)
        self.watcher.remove(ref)
        with self._lock:
            self._repos.pop(ref, None)
            self._missing.pop(ref, None)
        return removed

    def resolve_ref(self, ref_or_path: str) -> str:
        """A workspace ref from a ref or an absolute path. :raises InvalidArgumentError."""
        for ws in self.state.workspaces():
            if ref_or_path in (ws.ref, ws.name):
                return ws.ref
        p = Path(ref_or_path)
        if p.is_absolute():
            ref = workspace_ref(p.resolve() if p.exists() else p)
            if self.state.workspace(ref) is not None:
                return ref
        raise InvalidArgumentError("workspace", "is not a watched workspace "
                                   "(`gitquarry daemon status` lists them)")

    def _get(self, ref: str) -> WatchedWorkspace:
        ws = self.state.workspace(ref)
        if ws is None or not ws.active:
            raise InvalidArgumentError("workspace", f"{ref} is not a watched workspace")
        return ws

    def generation(self, ref: str) -> int:
        return self._get(ref).generation

    def name(self, ref: str) -> str:
        return self._get(ref).name

    def load_workspace(self, ref: str) -> Workspace:
        """The workspace with its configuration loaded now.

        :raises WorkspaceUnavailableError: the directory is gone, moved or unreadable.
        :raises ConfigError: its configuration is invalid.
        """
        from gitquarry.config import load_config
        from gitquarry.workspace import Workspace

        ws = self._get(ref)
        if not ws.path.is_dir():
            raise WorkspaceUnavailableError(ws.name, "its directory is gone or was moved; "
                                            "`gitquarry daemon watch` it where it is now")
        return Workspace(root=ws.path, config=load_config(ws.path))

    # -- repositories and watches ----------------------------------------------------------

    def _discover(self, ws: Workspace) -> list[Repository]:
        from gitquarry.gitio.discovery import discover_repositories

        return discover_repositories(
            ws.root, exclude=ws.config.indexing.exclude,
            exclude_hidden_dirs=ws.config.indexing.exclude_hidden_dirs,
        )

    def _sync(self, ws: WatchedWorkspace) -> list[Repository]:
        """Re-discover the workspace's repositories and watch exactly what they need.

        :raises WorkspaceUnavailableError: the workspace directory is gone.
        """
        from gitquarry.graph.sources import docs_dir, graph_dir

        try:
            workspace = self.load_workspace(ws.ref)
            repos = self._discover(workspace)
        except WorkspaceUnavailableError as exc:
            with self._lock:
                first = ws.ref not in self._missing
                self._missing[ws.ref] = exc.detail
            if first:
                log.warning("%s", exc)
            self.watcher.remove(ws.ref)
            raise
        specs: list[WatchSpec] = []
        for repo in repos:
            specs.extend(git_watch_specs(repo.common_dir))
        for directory in (graph_dir(workspace.root, workspace.config.graph),
                          docs_dir(workspace.root, workspace.config.graph)):
            if directory.is_dir():
                specs.append(WatchSpec(directory, True, "graph", "graph"))
        self.watcher.set_watches(ws.ref, specs)
        with self._lock:
            self._repos[ws.ref] = repos
            self._missing.pop(ws.ref, None)
        return repos

    def refs_fingerprint(self, ref: str) -> str:
        """SHA-256 over every indexed ref tip of every repository of the workspace."""
        from gitquarry.gitio.refs import snapshot_refs

        workspace = self.load_workspace(ref)
        with self._lock:
            repos = self._repos.get(ref)
        if repos is None:
            repos = self._sync(self._get(ref))
        digest = hashlib.sha256()
        for repo in repos:
            digest.update(str(repo.common_dir).encode("utf-8", "surrogateescape") + b"\0")
            try:
                tips = snapshot_refs(repo.git_dir, workspace.config.git_indexing.refs)
            except GitquarryError as exc:
                digest.update(f"error:{exc.code}\0".encode())
                continue
            for tip in tips:
                digest.update(f"{tip.ref}\0{tip.commit}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def after_history_index(self, ref: str, workspace: Workspace) -> None:
        """Record each repository's HEAD as its last indexed commit."""
        from gitquarry.gitio.refs import head_commit

        with self._lock:
            repos = list(self._repos.get(ref) or [])
        for repo in repos:
            try:
                head = head_commit(repo.git_dir)
            except GitquarryError:
                head = None
            self.state.set_repo_state(
                ref, git_store_ref(repo), relative_name(workspace.root, repo.path), head
            )

    def _indexed_from_index(self, ws: WatchedWorkspace,
                            repos: list[Repository]) -> dict[str, dict[str, Any]]:
        """What the workspace's index itself says about each repository, for the ones this
        daemon has not indexed yet (an index built by ``gitquarry index`` before ``watch``,
        or the watch job still queued): ``last_indexed_at`` (Unix s) and, when the
        repository's HEAD is a ref tip the index holds, that commit. Read-only; {} when
        there is no readable index."""
        import sqlite3

        from gitquarry.gitio.refs import head_commit

        try:
            db = self.load_workspace(ws.ref).db_path
        except GitquarryError:
            return {}
        if not db.is_file():
            return {}
        rows: dict[str, tuple[int | None, set[str]]] = {}
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
            try:
                for rid, common_dir, at in conn.execute(
                        "SELECT id, common_dir, last_indexed_at FROM repositories"):
                    tips = {t for (t,) in conn.execute(
                        "SELECT tip FROM repo_refs WHERE repo_id = ?", (rid,))}
                    rows[str(common_dir)] = (at, tips)
            finally:
                conn.close()
        except sqlite3.Error:
            return {}
        out: dict[str, dict[str, Any]] = {}
        for repo in repos:
            found = rows.get(str(repo.common_dir))
            if found is None or found[0] is None:
                continue
            try:
                head = head_commit(repo.git_dir)
            except GitquarryError:
                head = None
            out[git_store_ref(repo)] = {
                "last_indexed_commit": head if head in found[1] else None,
                "last_indexed_at": found[0],
            }
        return out

    # -- events ----------------------------------------------------------------------------

    def _on_event(self, ref: str, kind: str) -> None:
        self.debouncer.touch((ref, kind))

    def _settled(self, key: tuple[str, str]) -> None:
        ref, kind = key
        job_type = GRAPH_REINDEX if kind == "graph" else HISTORY_INDEX
        try:
            if kind == "git":
                self._sync(self._get(ref))  # a new worktree or nested repository
            self._submit(job_type, ref, origin="watch")
        except WorkspaceUnavailableError:
            # let a job record the typed failure the user sees in `jobs list`
            self._submit(job_type, ref, origin="watch", target="unavailable")
        except GitquarryError as exc:
            log.warning("%s: %s", ref, exc)

    def reconcile_all(self) -> None:
        for hook in self._reconcile_hooks:  # registered docs sources: a job per new HEAD
            hook()
        for ws in self.state.workspaces():
            try:
                self._sync(ws)
            except WorkspaceUnavailableError:
                # a job records the typed failure (and retries with backoff) for the user
                try:
                    self._submit(HISTORY_INDEX, ws.ref, origin="reconcile",
                                       target="unavailable")
                except GitquarryError as exc:
                    log.warning("reconcile %s: %s", ws.name, exc)
                continue
            except GitquarryError as exc:
                log.warning("reconcile %s: %s", ws.name, exc)
                continue
            for job_type in (HISTORY_INDEX, GRAPH_REINDEX, HISTORY_EMBED):
                if job_type == GRAPH_REINDEX and not self._has_graph_sources(ws.ref):
                    continue
                if job_type == HISTORY_EMBED and not self._embeds(ws.ref):
                    continue
                try:
                    self._submit(job_type, ws.ref, origin="reconcile")
                except GitquarryError as exc:
                    log.warning("reconcile %s: %s", ws.name, exc)

    def _embeds(self, ref: str) -> bool:
        """Whether the daemon embeds this workspace's commits (daemon and workspace config)."""
        if not self.config.embed:
            return False
        try:
            return self.load_workspace(ref).config.embedding.provider != "none"
        except GitquarryError:
            return False

    def _has_graph_sources(self, ref: str) -> bool:
        from gitquarry.graph.sources import docs_dir_files, graph_files

        try:
            ws = self.load_workspace(ref)
        except GitquarryError:
            return False
        return bool(graph_files(ws.root, ws.config.graph)
                    or docs_dir_files(ws.root, ws.config.graph))

    # -- status ----------------------------------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """Per workspace and repository: last indexed commit, pending work, active job."""
        out: list[dict[str, Any]] = []
        pending_keys = {k[0] for k in self.debouncer.pending() if isinstance(k, tuple)}
        current = self._current_job()
        for ws in self.state.workspaces():
            with self._lock:
                repos = list(self._repos.get(ws.ref) or [])
                missing = self._missing.get(ws.ref)
            states = self.state.repo_states(ws.ref)
            if any(git_store_ref(r) not in states for r in repos):
                states = {**self._indexed_from_index(ws, repos), **states}
            queued = [
                j.public_id for j in self.state.list_jobs(
                    statuses=("queued", "interrupted"), scope=ws.ref, limit=20)
            ]
            active = (current.public_id
                      if current is not None and current.scope == ws.ref else None)
            repositories = []
            for repo in repos:
                sref = git_store_ref(repo)
                state = states.get(sref, {})
                repositories.append({
                    "git_store_ref": sref,
                    "name": relative_name(ws.path, repo.path),
                    "last_indexed_commit": state.get("last_indexed_commit"),
                    "last_indexed_at": state.get("last_indexed_at"),
                })
            lease = None
            from gitquarry.store.lease import read_holder

            try:
                workspace = self.load_workspace(ws.ref)
                holder = read_holder(workspace.index_dir / "index.lock")
                lease = holder.to_dict() if holder is not None else None
            except GitquarryError:
                pass
            out.append({
                "workspace_ref": ws.ref,
                "name": ws.name,
                "generation": ws.generation,
                "state": "unavailable" if missing else "watching",
                "unavailable_reason": missing,
                "watch_mode": self.watcher.mode(ws.ref),
                "watch_warning": self.watcher.warnings.get(ws.ref),
                "repositories": repositories,
                "pending_events": ws.ref in pending_keys,
                "pending_jobs": queued,
                "active_job": active,
                "writer": lease,
                "next_reconcile_at": round(self.next_reconcile_at, 3),
            })
        return out
