"""``HistorySearcher``: one open index plus (lazily) the embedding model, shared by the CLI
and the MCP server so both surfaces run the same search."""

from __future__ import annotations

import os
from typing import Any

from gitquarry.history.index.refs_contain import RefContainment
from gitquarry.history.models import CommitResult, GitSearchResponse
from gitquarry.history.search.engine import Engine, run_history_search
from gitquarry.query.history import HistoryRequest
from gitquarry.retrieval.pipeline import PipelineSettings
from gitquarry.retrieval.rerank import reranker_for
from gitquarry.store import Store
from gitquarry.workspace import Workspace


class HistorySearcher:
    """Searches one workspace's commit index. The embedding model is loaded on the first
    semantic/hybrid query and kept for the life of the object; lexical queries never load it.
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._store: Store | None = None
        self._semantic: Any | None = None
        self._semantic_loaded = False
        self._opened_id: tuple[int, int] | None = None
        #: refs containing each commit, from the index (``history.refs_contain``): built once
        #: per index state and shared by results' ``refs`` and copies' ``refs``
        self.refs = RefContainment()

    @property
    def store(self) -> Store:
        """The open index; reopened when the file was replaced (``rebuild-index``) since."""
        if self._store is not None and self._file_id() != self._opened_id:
            self.close()
        if self._store is None:
            self._store = self.workspace.open_store()
            self._opened_id = self._file_id()
            self.refs = RefContainment()  # another file: its commit ids are not the old ones
            self._semantic = None
            self._semantic_loaded = False
        return self._store

    def _file_id(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.workspace.db_path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def semantic(self) -> Any | None:
        """The semantic ranker for the configured embedding namespace, or None."""
        if not self._semantic_loaded:
            self._semantic_loaded = True
            from gitquarry.history.search.semantic import load_semantic_ranker

            self._semantic = load_semantic_ranker(self.workspace.config, self.store)
        return self._semantic

    def loaded_semantic(self) -> Any | None:
        """The semantic ranker if a query already loaded it, else None (never loads it)."""
        return self._semantic if self._semantic_loaded else None

    def search(self, query: str, *, ranking_depth: int = 0, **fields: Any
               ) -> GitSearchResponse:
        """:meth:`run` in keyword form: ``fields`` name fields of
        ``gitquarry.query.history.HistoryRequest`` (``after``/``before`` as Unix seconds,
        ``narrowing`` as a ``history.narrow.Narrowing``; ``top_n`` default 5).

        :raises InvalidArgumentError, InvalidGlobError: see ``HistoryRequest.validate``.
        :raises TypeError: a keyword that is no field of the request.
        """
        fields.setdefault("top_n", 5)
        request = HistoryRequest.from_seconds(query, **fields).validate()
        return self.run(request, ranking_depth=ranking_depth)

    def run(self, request: HistoryRequest, *, ranking_depth: int = 0) -> GitSearchResponse:
        """Run a validated ``request`` (``HistoryRequest.validate``) with the workspace's
        ``[search]`` settings: ``top_n``, ``mode`` and ``merges`` None (or an empty mode or
        merges) mean the configured defaults; ``collapse``, ``diverse`` (MMR) and
        ``min_score`` None mean ``[search] collapse_copies``, ``mmr_enabled`` and
        ``min_confidence``. ``ranking_depth``: how long a ranking to return in ``more`` for
        cursors (0: none).

        :raises IndexCorruptError: the index cannot be read.
        """
        cfg = self.workspace.config.search
        request = request.with_defaults(top_n=cfg.top_n, mode=cfg.mode, merges=cfg.merges)
        settings = PipelineSettings.from_search_config(
            cfg, diverse=request.diverse, min_score=request.min_score,
            collapse=request.collapse
        )
        reranker, problem = reranker_for(cfg)
        store = self.store  # first: opening another index file brings new ref sets
        semantic = self.semantic() if request.mode in ("semantic", "hybrid") else None
        engine = Engine(
            semantic=semantic, lexical_weight=cfg.lexical_weight,
            semantic_weight=cfg.semantic_weight, rrf_k=cfg.rrf_k, pipeline=settings,
            reranker=reranker, reranker_problem=problem, refs=self.refs,
            weight_by_shape=cfg.weight_by_shape,
        )
        return run_history_search(store, request, engine, ranking_depth=ranking_depth)

    def timeline(self, query: str, *, files_glob: str | None = None, after: int | None = None,
                 before: int | None = None, bins: int = 36) -> Any:
        """``history.timeline.match_timeline`` over this index (the web page's histogram)."""
        from gitquarry.history.search.timeline import match_timeline

        return match_timeline(self.store, query, files_glob=files_glob or None, after=after,
                              before=before, bins=bins)

    def commit(self, commit_hash: str) -> CommitResult | None:
        """The stored commit with this full hash (message, files, stored diff excerpt), or
        None when the index does not hold it."""
        from gitquarry.history.search.engine import _result, hydrate

        row = self.store.conn.execute(
            "SELECT id FROM git_commits WHERE hash = ?", (commit_hash.lower(),)).fetchone()
        if row is None:
            return None
        rows = hydrate(self.store.conn, [int(row[0])])
        return _result(rows[int(row[0])], 0.0) if rows else None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
