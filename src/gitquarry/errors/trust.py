"""Trust errors (family ``TrustError``, kind ``FAILED``: CLI exit 1, HTTP 409): untrusted input
refused (docs/security.md)."""

from __future__ import annotations

from pathlib import Path

from gitquarry.errors.base import (
    EmbeddingError,
    TrustError,
)


class RepositoryNotTrustedError(TrustError):
    """Git refuses a repository owned by another user ("dubious ownership"): it is not
    listed in the ``safe.directory`` configuration. ``remedy`` is the command git suggests."""

    code = "repository_not_trusted"

    def __init__(self, path: str, remedy: str) -> None:
        super().__init__(
            f"{path}: Git refuses to read this repository because it is owned by another user "
            f"(\"dubious ownership\"). If you trust it, run: {remedy}"
        )
        self.path = path
        self.remedy = remedy


class BareRepositoryRefusedError(TrustError):
    """A bare repository found by walking the workspace, refused by ``safe.bareRepository
    = explicit`` in the user's git configuration."""

    code = "bare_repository_refused"

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path}: Git refuses to use this bare repository (safe.bareRepository is "
            "'explicit' in your git configuration); it is not indexed"
        )
        self.path = path


class DataBoundaryError(EmbeddingError, TrustError):
    """Repository content may not be sent through a provider with this data boundary."""

    code = "data_boundary_refused"

    def __init__(self, provider: str, boundary: str) -> None:
        super().__init__(
            f"embedding provider {provider!r} declares data_boundary={boundary!r}; repository "
            "content is only sent to 'local_process' or 'local_network' providers. Set "
            "[embedding] allow_remote = true to opt in explicitly."
        )
        self.provider = provider
        self.boundary = boundary


class UndeclaredDataBoundaryError(DataBoundaryError):
    """An HTTP embedding provider declares no ``data_boundary``; it is treated as unknown."""

    code = "data_boundary_undeclared"

    def __init__(self, provider: str) -> None:
        EmbeddingError.__init__(
            self,
            f"embedding provider {provider!r} has no data_boundary; declare where its text "
            "goes with [embedding] data_boundary = 'local_process', 'local_network', 'remote' "
            "or 'unknown'. Repository content is only sent to 'local_process' or "
            "'local_network' providers unless [embedding] allow_remote = true.",
        )
        self.provider = provider
        self.boundary = "unknown"


class GraphError(TrustError):
    """The architecture graph could not be loaded."""

    code = "graph_invalid"


class GraphFileError(GraphError):
    """A graph file is not valid YAML or not shaped like a beadloom graph file.

    ``path`` is the file; ``detail`` says what is wrong (parser message or expected shape).
    """

    code = "graph_file_invalid"

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"invalid architecture graph file {path}: {detail}")
        self.path = path
        self.detail = detail


class YamlInputError(TrustError):
    """An untrusted YAML file (graph file, docs policy) is refused.

    ``source`` names the file (repository- or project-relative), ``line`` is 1-based (0 when
    the whole file is meant), ``key`` the offending mapping key when there is one, ``detail``
    what is wrong.
    """

    code = "yaml_invalid"

    def __init__(self, source: str, line: int, detail: str, *, key: str | None = None) -> None:
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {detail}")
        self.source = source
        self.line = line
        self.key = key
        self.detail = detail


class YamlLimitError(YamlInputError):
    """An untrusted YAML file exceeds a bound (size, nesting depth, values after alias
    expansion)."""

    code = "yaml_limit_exceeded"


class FileRefusedError(TrustError):
    """A file a checkout can place (graph file or doc, ``.mailmap``, an overlay file, a
    workspace configuration file) was not read: it is not a regular file (a FIFO, socket,
    device or directory), it is a symbolic link where none is followed, or it cannot be
    opened. ``path`` is the path as given, ``reason`` says which, in words ("is a FIFO")."""

    code = "file_refused"

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}; not read")
        self.path = path
        self.reason = reason


class RepoDocsPolicyInvalidError(TrustError):
    """The repository's docs policy (``repository_docs`` in ``.gitquarry.yaml`` or
    ``.gitcode/gitcode-mcp.yaml``) is invalid; nothing is indexed or searched under it.

    ``policy_file`` is the repository-relative file, ``key`` the offending key (or None),
    ``pattern`` the offending pattern (or None), ``detail`` what is wrong.
    """

    code = "repository_docs_policy_invalid"
    #: a configuration failure: it fails once and waits for the committed policy to change
    retryable = False

    def __init__(self, policy_file: str, detail: str, *, key: str | None = None,
                 pattern: str | None = None, line: int = 0) -> None:
        where = f"{policy_file}:{line}" if line else policy_file
        super().__init__(
            f"invalid repository docs policy in {where}: {detail}; correct and commit the policy"
        )
        self.policy_file = policy_file
        self.key = key
        self.pattern = pattern
        self.line = line
        self.detail = detail


class RepoDocsBoundaryBlockedError(TrustError):
    """Indexing repository docs needs a provider whose data boundary is ``local_process``
    or ``local_network``; ``boundary`` is the provider's effective one."""

    code = "repository_docs_provider_boundary_blocked"
    #: a configuration failure: it waits for the provider settings to change
    retryable = False

    def __init__(self, provider: str, boundary: str) -> None:
        super().__init__(
            f"embedding provider {provider!r} has data_boundary {boundary!r}; repository docs "
            "are only embedded by 'local_process' or 'local_network' providers (full-text "
            "search needs no provider: `gitquarry repo-docs search --mode fulltext`)"
        )
        self.provider = provider
        self.boundary = boundary
