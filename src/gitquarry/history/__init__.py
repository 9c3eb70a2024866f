"""The commit-history corpus: indexing every commit of every repository, and searching it."""

from gitquarry.history.indexer import IndexReport, RepoReport, index_workspace
from gitquarry.history.models import CommitResult, GitSearchResponse
from gitquarry.history.search import search_git_history

__all__ = [
    "CommitResult",
    "GitSearchResponse",
    "IndexReport",
    "RepoReport",
    "index_workspace",
    "search_git_history",
]
