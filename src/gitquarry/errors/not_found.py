"""Not-found errors (family ``NotFoundError``, kind ``NOT_FOUND``: CLI exit 3, HTTP 404): a
well-formed name of something that does not exist."""

from __future__ import annotations

from gitquarry.errors.base import (
    ErrorKind,
    GitquarryError,
    NotFoundError,
)


class RevisionNotFoundError(NotFoundError):
    """A revision (branch, tag, hash, ``HEAD~3``) names no commit in the repository. CLI exit
    code 3 (not found)."""

    code = "revision_not_found"

    def __init__(self, revision: str) -> None:
        GitquarryError.__init__(self, f"revision {revision!r} names no commit in this repository")
        self.revision = revision


class JobNotFoundError(NotFoundError):
    """No job has this public id. CLI exit code 3 (not found)."""

    code = "job_not_found"

    def __init__(self, job_id: str) -> None:
        GitquarryError.__init__(self, f"no job {job_id!r}; `gitquarry jobs list` shows the jobs")
        self.job_id = job_id


class CommitNotFoundError(NotFoundError):
    """A commit hash or prefix names no indexed commit (``missing``: CLI exit code 3, not
    found), or it is malformed or ambiguous (exit code 2, a usage error)."""

    code = "commit_not_found"

    def __init__(self, commit: str, reason: str, *, missing: bool = False) -> None:
        GitquarryError.__init__(self, f"commit {commit!r}: {reason}")
        self.commit = commit
        self.reason = reason
        self.kind = ErrorKind.NOT_FOUND if missing else ErrorKind.INVALID


class PathNotFoundError(NotFoundError):
    """A file path names no file of an indexed repository at the revision asked for
    (``missing``: CLI exit code 3, not found), or several and it must say which (exit 2)."""

    code = "path_not_found"

    def __init__(self, path: str, reason: str, *, missing: bool = True) -> None:
        GitquarryError.__init__(self, f"{path!r}: {reason}")
        self.path = path
        self.reason = reason
        self.kind = ErrorKind.NOT_FOUND if missing else ErrorKind.INVALID
