"""``DocsRequest``: one repository-docs search, as every surface asks it.

``gitquarry repo-docs search``, the MCP tool ``repository_docs_search`` and the web page's
Documentation tab each build one with :func:`docs_request` and answer it with
:func:`search_docs` (``RepoDocsService.search``). The one validation
(:meth:`DocsRequest.validate`: the token budget, then ``repo_docs.service``'s argument
checks) runs in the builder, before the registry or any cache is read.

Units: ``limit`` hits (1-50; None: ``[docs] limit``); ``min_score`` in [0, 1];
``max_tokens`` tokens (None: no budget).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gitquarry.repo_docs.api import RepoDocsService
    from gitquarry.repo_docs.registry import Selector


@dataclass(frozen=True, kw_only=True)
class DocsRequest:
    """One docs search: which registration (``selector``), what to find, at which revision
    (None: HEAD), how (``mode`` None: ``[docs] mode``), how many (``limit``), with the
    working-tree overlay or not, the pipeline switches (None: as configured), ``explain``
    and the response's token budget."""

    selector: Selector
    query: str
    revision: str | None = None
    mode: str | None = None
    limit: int | None = None
    include_worktree: bool = False
    diverse: bool | None = None
    min_score: float | None = None
    explain: bool = False
    max_tokens: int | None = None

    def validate(self) -> DocsRequest:
        """Check the arguments (no registry or cache is read); returns ``self``.

        :raises InvalidArgumentError: ``max_tokens`` out of range, unknown mode, limit
            outside 1-50, empty or overlong query, ``min_score`` outside [0, 1].
        """
        from gitquarry.repo_docs.api import check_search_arguments
        from gitquarry.token_budget import check_max_tokens

        check_max_tokens(self.max_tokens)
        check_search_arguments(self.query, mode=self.mode or None, limit=self.limit,
                               min_score=self.min_score)
        return self


def docs_request(selector: Selector, query: str, **fields: Any) -> DocsRequest:
    """Build and validate the request of one docs search (every keyword a field of
    :class:`DocsRequest`).

    :raises InvalidArgumentError: see :meth:`DocsRequest.validate`.
    """
    return DocsRequest(selector=selector, query=query, **fields).validate()


def search_docs(service: RepoDocsService, request: DocsRequest) -> dict[str, Any]:
    """``service.search`` for ``request`` (the response before any token budget: the
    surfaces fit it, with ``index_state`` where they add one)."""
    return service.search(request.selector, request.query, revision=request.revision or None,
                          mode=request.mode or None, limit=request.limit,
                          include_worktree=request.include_worktree, diverse=request.diverse,
                          min_score=request.min_score, explain=request.explain)
