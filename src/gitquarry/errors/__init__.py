"""The error hierarchy. Every error gitquarry raises on purpose derives from GitquarryError.

Each class is one condition and carries its data in fields. Messages are written to be shown
to users as they are. ``code`` is a stable machine-readable identifier.

Every concrete class sits under exactly one *family* (:data:`FAMILIES`): :class:`UsageError`,
:class:`NotFoundError`, :class:`ConfigError`, :class:`IndexStateError`,
:class:`GitFailureError`, :class:`TrustError`, :class:`UnavailableError` or
:class:`InternalError` (an unexpected exception: a bug). A family declares one
surface-neutral :class:`ErrorKind`; each surface maps the kind in one place: the CLI's exit
status (:data:`EXIT_CODE_OF_KIND`, read as ``exit_code``), the web page's HTTP status
(``web.errors.http_status``) and the MCP tool error (``mcp.errors.as_tool_error``). Nothing
recognises an error by its message text or its ``code``.

Two classes are *areas*, not families: :class:`EmbeddingError` and :class:`WebError` group
the errors of one part (so ``except EmbeddingError`` keeps working) and are never raised
themselves; each concrete subclass also names its family (``DataBoundaryError`` is a trust
error, ``UnknownEmbeddingProviderError`` a configuration error).

One module per family (``usage``, ``not_found``, ``config``, ``index_state``, ``git``,
``trust``, ``unavailable``, ``internal``) under ``base``; every name is re-exported here, so
``from gitquarry.errors import X`` is the way to import any of them.
"""

from gitquarry.errors.base import (
    AREAS,
    EXIT_CODE_OF_KIND,
    FAMILIES,
    NOT_FOUND_EXIT,
    USAGE_EXIT,
    ConfigError,
    EmbeddingError,
    ErrorKind,
    GitFailureError,
    GitquarryError,
    IndexStateError,
    InternalError,
    NotFoundError,
    TrustError,
    UnavailableError,
    UsageError,
    WebError,
    kind_of_exit_code,
)
from gitquarry.errors.config import (
    EmbeddingConfigInvalidError,
    UnknownEmbeddingProviderError,
)
from gitquarry.errors.git import (
    GitError,
    GitNotFoundError,
    GitObjectMissingError,
    RepositoryUnreadableError,
    WorktreeOverlayStaleError,
    git_message,
)
from gitquarry.errors.index_state import (
    DOCS_CACHE_NAME,
    CursorExpiredError,
    IndexAccessError,
    IndexBusyError,
    IndexCancelledError,
    IndexCorruptError,
    IndexFullError,
    IndexIOError,
    IndexLocationConflictError,
    IndexPathUnsafeError,
    IndexReadOnlyError,
    IndexSchemaOutdatedError,
    IndexUntrustedError,
    JobSnapshotWriteError,
    JobStateWriteError,
    NoGraphError,
    NoIndexError,
    RepoDocsStaleGenerationError,
    SchemaTooNewError,
    WriterBusyError,
)
from gitquarry.errors.internal import (
    RepositoryIndexError,
)
from gitquarry.errors.not_found import (
    CommitNotFoundError,
    JobNotFoundError,
    PathNotFoundError,
    RevisionNotFoundError,
)
from gitquarry.errors.trust import (
    BareRepositoryRefusedError,
    DataBoundaryError,
    FileRefusedError,
    GraphError,
    GraphFileError,
    RepoDocsBoundaryBlockedError,
    RepoDocsPolicyInvalidError,
    RepositoryNotTrustedError,
    UndeclaredDataBoundaryError,
    YamlInputError,
    YamlLimitError,
)
from gitquarry.errors.unavailable import (
    DaemonAlreadyRunningError,
    DaemonError,
    DaemonNotRunningError,
    DaemonUnavailableError,
    DaemonUnreachableError,
    EmbeddingDependencyMissingError,
    EmbeddingDeviceUnavailableError,
    EmbeddingEndpointError,
    EmbeddingFailedError,
    EmbeddingModelUnavailableError,
    Fts5UnavailableError,
    SearchRefusedError,
    WebPortError,
    WorkspaceUnavailableError,
)
from gitquarry.errors.usage import (
    InvalidArgumentError,
    InvalidGlobError,
    InvalidTimeError,
    NotARepositoryError,
    RepoDocsRegistrationError,
    UnknownArgumentError,
    WebBindRefusedError,
)

__all__ = [
    "AREAS",
    "DOCS_CACHE_NAME",
    "EXIT_CODE_OF_KIND",
    "FAMILIES",
    "NOT_FOUND_EXIT",
    "USAGE_EXIT",
    "BareRepositoryRefusedError",
    "CommitNotFoundError",
    "ConfigError",
    "CursorExpiredError",
    "DaemonAlreadyRunningError",
    "DaemonError",
    "DaemonNotRunningError",
    "DaemonUnavailableError",
    "DaemonUnreachableError",
    "DataBoundaryError",
    "EmbeddingConfigInvalidError",
    "EmbeddingDependencyMissingError",
    "EmbeddingDeviceUnavailableError",
    "EmbeddingEndpointError",
    "EmbeddingError",
    "EmbeddingFailedError",
    "EmbeddingModelUnavailableError",
    "ErrorKind",
    "FileRefusedError",
    "Fts5UnavailableError",
    "GitError",
    "GitFailureError",
    "GitNotFoundError",
    "GitObjectMissingError",
    "GitquarryError",
    "GraphError",
    "GraphFileError",
    "IndexAccessError",
    "IndexBusyError",
    "IndexCancelledError",
    "IndexCorruptError",
    "IndexFullError",
    "IndexIOError",
    "IndexLocationConflictError",
    "IndexPathUnsafeError",
    "IndexReadOnlyError",
    "IndexSchemaOutdatedError",
    "IndexStateError",
    "IndexUntrustedError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidGlobError",
    "InvalidTimeError",
    "JobNotFoundError",
    "JobSnapshotWriteError",
    "JobStateWriteError",
    "NoGraphError",
    "NoIndexError",
    "NotARepositoryError",
    "NotFoundError",
    "PathNotFoundError",
    "RepoDocsBoundaryBlockedError",
    "RepoDocsPolicyInvalidError",
    "RepoDocsRegistrationError",
    "RepoDocsStaleGenerationError",
    "RepositoryIndexError",
    "RepositoryNotTrustedError",
    "RepositoryUnreadableError",
    "RevisionNotFoundError",
    "SchemaTooNewError",
    "SearchRefusedError",
    "TrustError",
    "UnavailableError",
    "UndeclaredDataBoundaryError",
    "UnknownArgumentError",
    "UnknownEmbeddingProviderError",
    "UsageError",
    "WebBindRefusedError",
    "WebError",
    "WebPortError",
    "WorkspaceUnavailableError",
    "WorktreeOverlayStaleError",
    "WriterBusyError",
    "YamlInputError",
    "YamlLimitError",
    "git_message",
    "kind_of_exit_code",
]
