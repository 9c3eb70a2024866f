"""Every call to ``git``: discovery, refs, rev-list, the streaming ``git log`` reader."""

from gitquarry.gitio.discovery import Repository, discover_repositories
from gitquarry.gitio.log import LogCommit, stream_commits
from gitquarry.gitio.refs import RefTip, snapshot_refs

__all__ = [
    "LogCommit",
    "RefTip",
    "Repository",
    "discover_repositories",
    "snapshot_refs",
    "stream_commits",
]
