"""Internal errors (family ``InternalError``, kind ``INTERNAL``: CLI exit 1, HTTP 500) recorded
rather than raised at a surface."""

from __future__ import annotations

from gitquarry.errors.base import (
    GitquarryError,
    InternalError,
)


class RepositoryIndexError(InternalError):
    """Indexing one repository failed unexpectedly (a bug in gitquarry, or an input it does
    not handle yet). The other repositories are still indexed. An internal error recorded
    for one repository (``cause`` is the exception)."""

    code = "repository_failed"

    def __init__(self, path: str, cause: BaseException) -> None:
        GitquarryError.__init__(
            self, f"{path}: not indexed: unexpected {type(cause).__name__}: {cause}. "
            "This is a bug in gitquarry; re-run with GITQUARRY_DEBUG=1 and report the traceback"
        )
        self.path = path
        self.cause = cause
