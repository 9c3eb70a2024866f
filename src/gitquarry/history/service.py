"""``HistorySearcher``: one open index plus (lazily) the embedding model, shared by the CLI
and the MCP server so both surfaces run the same search."""

from __future__ import annotations

import os
from typing import Any

from gitquarry.history.models import CommitResult, GitSearchResponse
from gitquarry.history.narrow import Narrowing, validate_narrowing
from gitquarry.history.refs_contain import RefContainment
from gitquarry.history.search import search_git_history, validate_request
from gitquarry.retrieval.pipeline import PipelineSettings, check_min_score
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
            from gitquarry.history.semantic import load_semantic_ranker

            self._semantic = load_semantic_ranker(self.workspace.config, self.store)
        return self._semantic

    def loaded_semantic(self) -> Any | None:
        """The semantic ranker if a query already loaded it, else None (never loads it)."""
        return self._semantic if self._semantic_loaded else None

    def search(
        self,
        query: str,
        *,
        top_n: int = 5,
        files_glob: str | None = None,
        after: int | None = None,
        before: int | None = None,
        mode: str | None = None,
        collapse: bool | None = None,
        diverse: bool | None = None,
        min_score: float | None = None,
        narrowing: Narrowing | None = None,
        ranking_depth: int = 0,
        merges: str | None = None,
        sort: str = "relevance",
    ) -> GitSearchResponse:
        """Run ``search_git_history`` with the workspace's ``[search]`` settings.

        ``mode`` and ``merges`` None mean the configured defaults (hybrid and include unless
        changed). ``collapse``, ``diverse`` (MMR) and ``min_score`` override ``[search]
        collapse_copies``, ``mmr_enabled`` and ``min_confidence`` for this request (None:
        configured). ``sort``: relevance, newest or oldest.
        ``narrowing``: author/committer/path/pickaxe filters (``history.narrow``).
        ``ranking_depth``: how long a ranking to return in ``more`` for cursors (0: none).

        :raises InvalidArgumentError: also for ``min_score`` outside [0, 1].
        """
        cfg = self.workspace.config.search
        mode = mode or cfg.mode
        merges = merges or cfg.merges
        validate_request(
            top_n=top_n, mode=mode, files_glob=files_glob, after=after, before=before,
            merges=merges, sort=sort,
        )
        check_min_score(min_score)
        settings = PipelineSettings.from_search_config(
            cfg, diverse=diverse, min_score=min_score, collapse=collapse
        )
        reranker, problem = reranker_for(cfg)
        semantic = self.semantic() if mode in ("semantic", "hybrid") else None
        return search_git_history(
            self.store,
            query,
            top_n=top_n,
            files_glob=files_glob,
            after=after,
            before=before,
            mode=mode,
            semantic=semantic,
            lexical_weight=cfg.lexical_weight,
            semantic_weight=cfg.semantic_weight,
            rrf_k=cfg.rrf_k,
            pipeline=settings,
            reranker=reranker,
            reranker_problem=problem,
            narrowing=validate_narrowing(narrowing) if narrowing is not None else None,
            ranking_depth=ranking_depth,
            refs=self.refs,
            weight_by_shape=cfg.weight_by_shape,
            merges=merges,
            sort=sort,
        )

    def timeline(self, query: str, *, files_glob: str | None = None, after: int | None = None,
                 before: int | None = None, bins: int = 36) -> Any:
        """``history.timeline.match_timeline`` over this index (the web page's histogram)."""
        from gitquarry.history.timeline import match_timeline

        return match_timeline(self.store, query, files_glob=files_glob or None, after=after,
                              before=before, bins=bins)

    def commit(self, commit_hash: str) -> CommitResult | None:
        """The stored commit with this full hash (message, files, stored diff excerpt), or
        None when the index does not hold it."""
        from gitquarry.history.search import _result, hydrate

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
