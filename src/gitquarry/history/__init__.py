"""The commit-history corpus: indexing every commit of every repository, and searching it."""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.history.index.indexer import IndexReport, RepoReport, index_workspace
    from gitquarry.history.models import CommitResult, GitSearchResponse
    from gitquarry.history.search.engine import search_git_history

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "IndexReport": "gitquarry.history.index.indexer",
    "RepoReport": "gitquarry.history.index.indexer",
    "index_workspace": "gitquarry.history.index.indexer",
    "CommitResult": "gitquarry.history.models",
    "GitSearchResponse": "gitquarry.history.models",
    "search_git_history": "gitquarry.history.search.engine",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CommitResult",
    "GitSearchResponse",
    "IndexReport",
    "RepoReport",
    "index_workspace",
    "search_git_history",
]
