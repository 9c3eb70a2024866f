"""What the web page asks of the daemon, one method per concern, each calling the same
library function the CLI and the MCP server call (``HistorySearcher``, ``graph.api``,
``RepoDocsService``, the daemon's job runner and coordinator). Nothing here ranks, searches
or computes status itself; it only selects, and turns private facts into public ones:
workspaces and repositories by opaque ref and relative name, never by absolute path.

Every public method returns JSON-ready data and raises ``GitquarryError`` subclasses.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitquarry.errors import (
    GitquarryError,
    InvalidArgumentError,
    NoIndexError,
    NotFoundError,
    RepoDocsPolicyInvalidError,
    RepoDocsStaleGenerationError,
)
from gitquarry.service.job_types import relative_name

if TYPE_CHECKING:
    from gitquarry.history.search.searcher import HistorySearcher
    from gitquarry.query.docs import DocsRequest
    from gitquarry.query.graph import GraphRequest
    from gitquarry.query.history import HistoryRequest
    from gitquarry.repo_docs.api import RepoDocsService
    from gitquarry.repo_docs.registry import Selector
    from gitquarry.service.daemon import Daemon
    from gitquarry.service.job_store import WatchedWorkspace
    from gitquarry.workspace import Workspace

HISTORY_MODES = ("hybrid", "lexical", "semantic")
DOCS_MODES = ("hybrid", "fulltext")
MAX_TOP_N = 100


class WebBackend:
    """The daemon-side facade of the web page (one per web server)."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self._searchers: dict[str, tuple[tuple[str, ...], HistorySearcher, threading.Lock]] = {}
        self._docs: tuple[str, RepoDocsService] | None = None
        self._lock = threading.Lock()
        #: the workspace a page without ``?ws=`` opens on: the one the last
        #: ``gitquarry web PATH`` named (None: the first watched one)
        self.default_workspace: str | None = None

    def close(self) -> None:
        with self._lock:
            for _key, searcher, lock in self._searchers.values():
                with lock:
                    searcher.close()
            self._searchers.clear()
            if self._docs is not None:
                self._docs[1].close()
                self._docs = None

    # -- workspaces (history and graph corpora) --------------------------------------------

    def workspaces(self) -> list[dict[str, Any]]:
        """Watched workspaces: ``ref``, ``name`` (directory name), ``generation``."""
        return [{"ref": ws.ref, "name": ws.name, "generation": ws.generation}
                for ws in self.daemon.state.workspaces()]

    def _watched(self, ref: str | None) -> WatchedWorkspace:
        spaces = self.daemon.state.workspaces()
        if not spaces:
            raise NotFoundError("workspace", "the daemon watches no workspace yet: run "
                                "`gitquarry daemon watch PATH` (or `gitquarry web PATH`)")
        if not ref:
            chosen = self.default_ref()
            return next((ws for ws in spaces if ws.ref == chosen), spaces[0])
        for ws in spaces:
            if ws.ref == ref:
                return ws
        raise NotFoundError("workspace", f"{ref!r} is not a watched workspace")

    def default_ref(self) -> str | None:
        """The workspace ref a page without ``?ws=`` uses, when it is still watched."""
        chosen = self.default_workspace
        if chosen and any(ws.ref == chosen for ws in self.daemon.state.workspaces()):
            return chosen
        return None

    def workspace(self, ref: str | None) -> tuple[dict[str, Any], Workspace]:
        ws = self._watched(ref)
        workspace = self.daemon.coordinator.load_workspace(ws.ref)
        return {"ref": ws.ref, "name": ws.name, "generation": ws.generation}, workspace

    def _searcher(self, ref: str | None) -> tuple[dict[str, Any], Workspace,
                                                  HistorySearcher, threading.Lock]:
        from gitquarry.history.search.searcher import HistorySearcher

        public, workspace = self.workspace(ref)
        cfg = workspace.config
        key = (repr(cfg.search), repr(cfg.embedding))
        with self._lock:
            found = self._searchers.get(public["ref"])
            if found is None or found[0] != key:
                if found is not None:
                    with found[2]:
                        found[1].close()
                found = (key, HistorySearcher(workspace), threading.Lock())
                self._searchers[public["ref"]] = found
        return public, found[1].workspace, found[1], found[2]

    # -- history ---------------------------------------------------------------------------

    def history(self, ref: str | None, query: str, *, mode: str | None = None,
                files_glob: str | None = None, after: str | None = None,
                before: str | None = None, top_n: int | None = None, explain: bool = False,
                timeline: bool = True) -> dict[str, Any]:
        """A history search (``HistorySearcher.run``) plus the match timeline.

        ``after``/``before`` as the CLI takes them (ISO-8601 or Unix seconds); empty form
        fields count as not given; ``top_n`` None: ``[search] top_n``, as the CLI.
        :raises InvalidArgumentError, InvalidGlobError, InvalidTimeError, NotFoundError.
        """
        request = web_history_request(query, mode=mode, files_glob=files_glob, after=after,
                                      before=before, top_n=top_n, explain=explain)
        public, workspace, searcher, lock = self._searcher(ref)
        with lock:
            response = searcher.run(request)
            line = None
            if timeline and response.effective_mode != "semantic":
                line = searcher.timeline(query, files_glob=request.files_glob,
                                         after=request.after_s,
                                         before=request.before_s).to_dict()
        data = response.to_dict(explain=explain)
        for result in data["results"]:
            result["repository"] = relative_name(workspace.root, result.pop("repo_path") or "")
        data["timeline"] = line
        data["workspace"] = public
        data["filters"] = {name: b.to_dict() for name, b in request.bounds().items()}
        return data

    def commit(self, ref: str | None, commit_hash: str) -> dict[str, Any]:
        """One stored commit (message, files, the index's diff excerpt).

        :raises NotFoundError: not a full hash the index holds."""
        if not (7 <= len(commit_hash) <= 64) or any(
                c not in "0123456789abcdef" for c in commit_hash.lower()):
            raise NotFoundError("commit", f"{commit_hash[:80]!r} is not a commit hash")
        public, workspace, searcher, lock = self._searcher(ref)
        with lock:
            found = searcher.commit(commit_hash)
        if found is None:
            raise NotFoundError("commit", f"{commit_hash[:80]} is not in the index of "
                                f"{public['name']}")
        data = found.to_dict()
        data.pop("score", None)
        data["repository"] = relative_name(workspace.root, data.pop("repo_path") or "")
        data["workspace"] = public
        return data

    # -- graph -----------------------------------------------------------------------------

    def graph(self, ref: str | None, query: str, *, kind: str | None = None,
              limit: int | None = None) -> dict[str, Any]:
        """``graph.api.search_graph`` without the refresh (the daemon's jobs keep it current)
        plus the kinds to filter on; ``limit`` None: 10, as the CLI and the MCP tool."""
        from gitquarry.graph.api import workspace_kinds
        from gitquarry.query.graph import search_graph_request

        request = web_graph_request(query, kind=kind, limit=limit)
        public, workspace = self.workspace(ref)
        kinds = workspace_kinds(workspace)
        if not query.strip():
            return {"workspace": public, "kinds": kinds, "results": [], "engine": None}
        response = search_graph_request(workspace, request, refresh=False)
        return {"workspace": public, "kinds": kinds, "engine": response.engine,
                "results": [r.to_dict() for r in response.results]}

    def graph_node(self, ref: str | None, ref_id: str, query: str | None) -> dict[str, Any]:
        from gitquarry.graph.api import node_detail

        public, workspace = self.workspace(ref)
        return {"workspace": public, **node_detail(workspace, ref_id, query=query)}

    # -- repository docs -------------------------------------------------------------------

    def docs_service(self) -> RepoDocsService:
        """The docs service for the user's configuration as it is now (a changed
        ``[embedding]``/``[docs]``/``[search]`` replaces it: no daemon restart needed)."""
        from gitquarry.config import load_config
        from gitquarry.repo_docs.api import RepoDocsService

        config = load_config(None)
        key = repr((config.embedding, config.docs, config.search))
        with self._lock:
            if self._docs is None or self._docs[0] != key:
                if self._docs is not None:
                    self._docs[1].close()
                self._docs = (key, RepoDocsService(config))
            return self._docs[1]

    def registrations(self) -> list[dict[str, Any]]:
        """Every registered docs authority as public selectors (``RepoDocsService.sources``)."""
        return list(self.docs_service().sources()["sources"])

    def docs_snapshot(self, selector: Selector) -> dict[str, Any]:
        """The Documentation tab: see ``web.docs_state.snapshot``."""
        from gitquarry.web.docs_state import snapshot

        return snapshot(self, selector)

    def docs_search(self, selector: Selector, query: str, *, revision: str | None,
                    mode: str | None, limit: int | None,
                    include_worktree: bool) -> dict[str, Any]:
        """``RepoDocsService.search`` (exact revision, bounded snippets, citations)."""
        from gitquarry.query.docs import search_docs

        request = web_docs_request(selector, query, revision=revision, mode=mode,
                                   limit=limit, include_worktree=include_worktree)
        return search_docs(self.docs_service(), request)

    def docs_submit(self, selector: Selector, *, revision: str | None,
                    include_worktree: bool, origin: str) -> dict[str, Any]:
        """Submit (or join) the revision-set job, as ``repo-docs index`` does."""
        from gitquarry.service.docs_jobs import submit_docs_job

        job = submit_docs_job(self.daemon.services, {
            "repo": selector.repo, "registration_id": selector.registration_id,
            "source_registration_id": selector.source_registration_id,
            "source_registration_generation": selector.source_registration_generation,
        }, revision=revision or None, include_worktree=include_worktree, origin=origin)
        return self.daemon.redact_payload(job.to_public())

    # -- jobs ------------------------------------------------------------------------------

    def _job_id(self, public_id: str) -> int:
        from gitquarry.errors import JobNotFoundError
        from gitquarry.service.job_store import parse_public_id

        row_id = parse_public_id(public_id)
        if row_id is None:
            raise JobNotFoundError(public_id[:40])
        return row_id

    def job(self, public_id: str) -> dict[str, Any]:
        """The job's public state and its events (as ``jobs show``)."""
        row_id = self._job_id(public_id)
        job = self.daemon.runner.snapshot(row_id)
        return self.daemon.redact_payload({"job": job.to_public(),
                                           "events": self.daemon.state.events(row_id)})

    def jobs(self, *, scope: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        found = self.daemon.state.list_jobs(scope=scope, limit=limit)
        return [self.daemon.redact_payload(self.daemon.runner.snapshot(j.id).to_public())
                for j in found]

    def cancel(self, public_id: str) -> dict[str, Any]:
        """Cancel (acknowledged once the tombstone is durable, as ``jobs cancel``)."""
        row_id = self._job_id(public_id)
        before = self.daemon.runner.snapshot(row_id)
        job = self.daemon.runner.cancel(row_id)
        return self.daemon.redact_payload({
            "job": job.to_public(), "cancelled": job.status == "cancelled",
            "already_finished": before.terminal})

    # -- status ----------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Daemon health, and per watched workspace: repositories (relative names), commits,
        embedding coverage per namespace, index sizes (``history.status`` +
        ``history.corpora_status.extras_status``, as ``gitquarry status``)."""
        from gitquarry.corpora_status import extras_status
        from gitquarry.history.index.status import history_status

        daemon = self.daemon.op_status({})
        registered = self._registered_stores()
        watched = {w["workspace_ref"]: w for w in daemon.pop("workspaces")}
        spaces = []
        for ws in self.daemon.state.workspaces():
            entry: dict[str, Any] = {"ref": ws.ref, "name": ws.name,
                                     "daemon": watched.get(ws.ref)}
            try:
                workspace = self.daemon.coordinator.load_workspace(ws.ref)
                if workspace.has_index():
                    with workspace.open_store() as store:
                        hist = history_status(store)
                        extras = extras_status(workspace, store)
                        entry["index_bytes"] = store.size_bytes()
                    entry["total_commits"] = hist["total_commits"]
                    entry["last_indexed_at"] = hist["last_indexed_at"]
                    entry["repositories"] = [{
                        "name": relative_name(workspace.root, r["path"]),
                        "commits": r["commits"], "refs": r["refs"],
                        "object_format": r.get("object_format"),
                        "last_indexed_at": r.get("last_indexed_at"),
                        "exists": r.get("exists", True), "error_code": r.get("error_code"),
                        "problems": len(r.get("problems") or []),
                        "docs": registered.get(_store_ref_of(r["path"]) or ""),
                    } for r in hist["repositories"]]
                    entry["skipped"] = len(hist.get("skipped") or [])
                    entry["embedding_namespaces"] = extras.get("embedding_namespaces", [])
                    graph = extras.get("graph") or {}
                    entry["graph"] = {k: graph.get(k) for k in ("nodes", "edges", "docs",
                                                                "chunks", "last_indexed_at")}
                else:
                    entry["no_index"] = True
            except NoIndexError:  # an index.db with no schema yet: not indexed, left as is
                entry["no_index"] = True
            except GitquarryError as exc:
                entry["error"] = {"code": exc.code, "message": self.daemon.redact(str(exc))}
            spaces.append(entry)
        docs = []
        for source in self.registrations():
            docs.append(self._docs_index_size(source))
        web = self.daemon.web
        return self.daemon.redact_payload({
            "daemon": {**daemon["daemon"], "active_job": daemon["active_job"],
                       "jobs": daemon["jobs"], "now": round(time.time(), 3),
                       "web": web.status() if web is not None else None},
            "workspaces": spaces, "docs": docs,
        })

    def _registered_stores(self) -> dict[str, dict[str, Any]]:
        """Docs registrations by the registry's ``git_store_ref`` (first source wins)."""
        out: dict[str, dict[str, Any]] = {}
        try:
            for source in self.registrations():
                out.setdefault(source["git_store_ref"], source)
        except GitquarryError:
            pass
        return out

    def _docs_index_size(self, source: dict[str, Any]) -> dict[str, Any]:
        from gitquarry.repo_docs.cache import DB_NAME
        from gitquarry.repo_docs.indexer import cache_dir_for
        from gitquarry.repo_docs.registry import Selector

        out = {"repo_id": source["repo_id"],
               "source_registration_id": source["source_registration_id"]}
        try:
            service = self.docs_service()
            binding = service.registry.resolve(Selector(
                source["repo_id"], source["registration_id"], source["source_registration_id"],
                source["source_registration_generation"]))
            db = cache_dir_for(binding, service.config) / DB_NAME
            out["cache_bytes"] = sum(p.stat().st_size for p in (db, Path(f"{db}-wal"))
                                     if p.is_file())
        except (GitquarryError, OSError) as exc:
            out["error"] = getattr(exc, "code", "error")
        return out


def _store_ref_of(path: str) -> str | None:
    """The registry's opaque ``git_store_ref`` of a repository path (None if unreadable)."""
    from gitquarry.repo_docs.registry import describe_authority

    try:
        return describe_authority(Path(path))[1]
    except (GitquarryError, OSError):
        return None


def web_history_request(query: str, *, mode: str | None = None,
                        files_glob: str | None = None, after: str | None = None,
                        before: str | None = None, top_n: int | None = None,
                        explain: bool = False) -> HistoryRequest:
    """The ``HistoryRequest`` of the history tab's fields (an empty field: not given;
    ``top_n`` None: ``[search] top_n``, as ``gitquarry history`` without ``--top-n``).

    :raises InvalidArgumentError, InvalidGlobError, InvalidTimeError: see
        ``gitquarry.query.history.history_request``."""
    from gitquarry.query.history import history_request

    return history_request(query, after=after or None, before=before or None, top_n=top_n,
                           files_glob=files_glob or None, mode=mode or None, explain=explain)


def web_graph_request(query: str, *, kind: str | None = None, limit: int | None = None
                      ) -> GraphRequest:
    """The ``GraphRequest`` of the graph tab's fields (an empty kind: any; ``limit`` None:
    the request's default, 10, as ``gitquarry search`` and the MCP tool; it was 20).

    :raises InvalidArgumentError: see ``gitquarry.query.graph.graph_request``."""
    from gitquarry.query.graph import graph_request

    if limit is None:
        return graph_request(query, kind=kind or None)
    return graph_request(query, kind=kind or None, limit=limit)


def web_docs_request(selector: Selector, query: str, *, revision: str | None = None,
                     mode: str | None = None, limit: int | None = None,
                     include_worktree: bool = False) -> DocsRequest:
    """The ``DocsRequest`` of the Documentation tab's fields (an empty field: not given).

    :raises InvalidArgumentError: see ``gitquarry.query.docs.docs_request``."""
    from gitquarry.query.docs import docs_request

    return docs_request(selector, query, revision=revision or None, mode=mode or None,
                        limit=limit, include_worktree=include_worktree)


def selector_from(params: dict[str, Any]) -> Selector:
    """A docs selector from request parameters ``repo``, ``reg``, ``src``, ``gen``.

    :raises InvalidArgumentError: ``gen`` is not a positive integer."""
    from gitquarry.repo_docs.registry import Selector

    gen = params.get("gen")
    generation = None
    if gen not in (None, ""):
        if not str(gen).isdigit() or int(str(gen)) < 1:
            raise InvalidArgumentError("gen", "must be a positive integer")
        generation = int(str(gen))
    return Selector(params.get("repo") or None, params.get("reg") or None,
                    params.get("src") or None, generation)


__all__ = ["DOCS_MODES", "HISTORY_MODES", "RepoDocsPolicyInvalidError",
           "RepoDocsStaleGenerationError", "WebBackend", "selector_from", "web_docs_request",
           "web_graph_request", "web_history_request"]
