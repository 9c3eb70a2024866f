"""The base of the error hierarchy: ``GitquarryError``, the kinds and their CLI exit
status, the family roots and the areas (see ``gitquarry.errors``)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path


class ErrorKind(Enum):
    """What a surface needs to know about an error, whatever the surface.

    ``INVALID``: the request (or the user's own configuration) is wrong; the caller must
    change it. ``NOT_FOUND``: a well-formed name of something that does not exist (a commit
    hash or prefix no indexed commit has, a path, a revision, a job id, a page).
    ``FAILED``: a valid request could not be carried out here and now (the index's state,
    git, a refused input, a missing tool or service). ``INTERNAL``: a bug in gitquarry.
    """

    INVALID = "invalid"
    NOT_FOUND = "not_found"
    FAILED = "failed"
    INTERNAL = "internal"


#: CLI exit status of a usage error (a bad option or value, as click uses)
USAGE_EXIT = 2


#: CLI exit status of a well-formed name of something that does not exist: a commit hash or
#: prefix no indexed commit has, a path no indexed repository has, a revision, a job id
NOT_FOUND_EXIT = 3


#: The CLI's exit status of each kind (docs/cli.md; 0 is success and 130 an interrupt). The
#: one mapping: ``GitquarryError.exit_code`` reads it, and the daemon sends that number to
#: its clients.
EXIT_CODE_OF_KIND: dict[ErrorKind, int] = {
    ErrorKind.INVALID: USAGE_EXIT,
    ErrorKind.NOT_FOUND: NOT_FOUND_EXIT,
    ErrorKind.FAILED: 1,
    ErrorKind.INTERNAL: 1,
}


def kind_of_exit_code(exit_code: int) -> ErrorKind:
    """The kind an exit status stands for (the inverse of :data:`EXIT_CODE_OF_KIND`, 1 read
    as ``FAILED``): how an error relayed from another process by its exit status alone
    (``service.ipc.RemoteError``) keeps its kind."""
    if exit_code == USAGE_EXIT:
        return ErrorKind.INVALID
    if exit_code == NOT_FOUND_EXIT:
        return ErrorKind.NOT_FOUND
    return ErrorKind.FAILED


class GitquarryError(Exception):
    """Base class. ``code`` is stable for automation; ``kind`` is the family's
    :class:`ErrorKind` and ``exit_code`` what the CLI returns for it. Never raised itself:
    raise a family's class (an unexpected exception becomes :class:`InternalError`)."""

    code = "error"
    kind: ErrorKind = ErrorKind.FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    @property
    def exit_code(self) -> int:
        """The CLI exit status: :data:`EXIT_CODE_OF_KIND` of ``kind``."""
        return EXIT_CODE_OF_KIND[self.kind]


class NotFoundError(GitquarryError):
    """Family (and the error itself): a well-formed name of something that does not exist.
    Raised as it is when a page or tool asks for something absent (a workspace, a commit, a
    graph node, an action): ``what`` names the sort, ``detail`` says what was asked. CLI exit
    code 3."""

    code = "not_found"
    kind = ErrorKind.NOT_FOUND

    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"{what}: {detail}")
        self.what = what
        self.detail = detail


class IndexStateError(GitquarryError):
    """Family: the stored state a request needs (the index, the docs cache, a cursor, a job's
    record, the graph files) is missing, stale, busy, corrupt, full or unusable."""

    kind = ErrorKind.FAILED


class GitFailureError(GitquarryError):
    """Family: git, or a repository as git reads it, failed."""

    kind = ErrorKind.FAILED


class TrustError(GitquarryError):
    """Family: something a checkout (or a provider) supplies was refused by a trust rule or
    is malformed untrusted input (docs/security.md): a file that is not a regular file, bad
    repository YAML or policy, another user's repository, a remote data boundary."""

    kind = ErrorKind.FAILED


class UnavailableError(GitquarryError):
    """Family: a tool, service or resource the request needs is not available here (the
    daemon, an embedding model, package or endpoint, SQLite's FTS5, a port, a workspace)."""

    kind = ErrorKind.FAILED


class InternalError(GitquarryError):
    """Family: an unexpected exception, a bug in gitquarry. ``cause`` is that exception;
    ``message`` defaults to ``internal error (<type>: <cause>)``, and a surface may word it
    its own way (the web page leaves the cause's text out). Every surface reports what
    nothing else caught as one of these."""

    code = "internal_error"
    kind = ErrorKind.INTERNAL

    def __init__(self, cause: BaseException, message: str | None = None) -> None:
        super().__init__(
            f"internal error ({type(cause).__name__}: {cause})" if message is None else message
        )
        self.cause = cause


class UsageError(GitquarryError):
    """Family (and the error itself): the caller passed an invalid argument. CLI exit code
    2."""

    code = "invalid_argument"
    kind = ErrorKind.INVALID


class ConfigError(GitquarryError):
    """Family (and the error itself): the user's configuration is invalid (unknown key, wrong
    type, bad TOML, an ``[embedding]`` setting). CLI exit code 2. ``path`` is the file, or
    None."""

    code = "config_invalid"
    kind = ErrorKind.INVALID

    def __init__(self, path: Path | None, message: str) -> None:
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{message}")
        self.path = path


class EmbeddingError(GitquarryError):
    """Area (not a family, never raised itself): the embedding provider failed or is
    misconfigured. ``except EmbeddingError`` catches every embedding error; each subclass
    names its family too."""

    code = "embedding_failed"


class WebError(GitquarryError):
    """Area (not a family, never raised itself): a failure of the local web page
    (``gitquarry web``)."""

    code = "web_error"


#: The families: every concrete error class is a subclass of exactly one of these.
FAMILIES: tuple[type[GitquarryError], ...] = (
    UsageError, NotFoundError, ConfigError, IndexStateError, GitFailureError, TrustError,
    UnavailableError, InternalError,
)


#: The areas: groups of one part's errors across families, never raised themselves.
AREAS: tuple[type[GitquarryError], ...] = (EmbeddingError, WebError)
