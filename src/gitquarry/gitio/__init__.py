"""Every call to ``git``: discovery, refs, rev-list, the streaming ``git log`` reader."""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.gitio.discovery import Repository, discover_repositories
    from gitquarry.gitio.log import LogCommit, stream_commits
    from gitquarry.gitio.refs import RefTip, snapshot_refs

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "Repository": "gitquarry.gitio.discovery",
    "discover_repositories": "gitquarry.gitio.discovery",
    "LogCommit": "gitquarry.gitio.log",
    "stream_commits": "gitquarry.gitio.log",
    "RefTip": "gitquarry.gitio.refs",
    "snapshot_refs": "gitquarry.gitio.refs",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "LogCommit",
    "RefTip",
    "Repository",
    "discover_repositories",
    "snapshot_refs",
    "stream_commits",
]
