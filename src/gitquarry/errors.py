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
"""

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


# --- the families ---------------------------------------------------------------------------
# UsageError, NotFoundError and ConfigError are families that are also raised as they are;
# the others are raised only through their subclasses.


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


# --- usage errors (bad input from the user) -------------------------------------------------


class UsageError(GitquarryError):
    """Family (and the error itself): the caller passed an invalid argument. CLI exit code
    2."""

    code = "invalid_argument"
    kind = ErrorKind.INVALID


class InvalidGlobError(UsageError):
    """A files glob could not be compiled. ``pattern`` is the pattern as given."""

    code = "invalid_glob"

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"invalid glob pattern {pattern!r}: {reason}")
        self.pattern = pattern
        self.reason = reason


class InvalidTimeError(UsageError):
    """A time bound was neither Unix seconds nor an ISO-8601 date/time."""

    code = "invalid_time"

    def __init__(self, value: str) -> None:
        super().__init__(
            f"invalid time {value!r}: use an ISO-8601 date or time (2024-05-01, 20240501, "
            "2024-05-01T12:00:00Z), Unix seconds (1700000000; @12345678 for eight digits) or "
            "a relative date (2.weeks.ago, yesterday, '3 months ago')"
        )
        self.value = value


class InvalidArgumentError(UsageError):
    """Any other invalid argument. ``argument`` names it as the library knows it (``top_n``);
    surfaces show it under their own name (``--top-n`` on the command line) with ``detail``."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}")
        self.argument = argument
        self.detail = message


class UnknownArgumentError(UsageError):
    """A call named an argument the tool does not have (MCP: checked against the tool's input
    schema). ``names`` are the unknown ones, ``accepted`` lists the tool's arguments."""

    code = "unknown_argument"

    def __init__(self, tool: str, names: list[str], accepted: str) -> None:
        listed = ", ".join(repr(name) for name in names)
        plural = "s" if len(names) > 1 else ""
        super().__init__(f"{tool} has no argument{plural} {listed} (accepted: {accepted})")
        self.tool = tool
        self.names = names
        self.accepted = accepted


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


# --- workspace, index and store -------------------------------------------------------------


class NoIndexError(IndexStateError):
    """No index exists yet for the workspace."""

    code = "no_index"

    def __init__(self, workspace: Path) -> None:
        super().__init__(
            f"no gitquarry index in {workspace} or its parent directories; run "
            "`gitquarry index <dir>` on the directory that holds your repositories, or pass "
            "--project <dir>"
        )
        self.workspace = workspace


#: The repository-docs cache's file name (``repo_docs.cache.DB_NAME``): its corruption has
#: another remedy than the workspace index's.
DOCS_CACHE_NAME = "repo_docs.db"


class IndexCorruptError(IndexStateError):
    """The SQLite index file is unreadable or malformed."""

    code = "index_corrupt"

    def __init__(self, db_path: Path, detail: str) -> None:
        if db_path.name == DOCS_CACHE_NAME:  # not the workspace's index: rebuild-index
            remedy = ("it holds only derived data (never document text): delete it and run "
                      "`gitquarry repo-docs index` to rebuild it")
        else:
            remedy = "run `gitquarry rebuild-index` to rebuild it from Git"
        super().__init__(
            f"the index database {db_path} is corrupt or unreadable ({detail}); {remedy}"
        )
        self.db_path = db_path
        self.detail = detail


class SchemaTooNewError(IndexStateError):
    """The index was written by a newer gitquarry than this one."""

    code = "schema_too_new"

    def __init__(self, db_path: Path, found: int, supported: int) -> None:
        super().__init__(
            f"{db_path} has schema version {found}, this gitquarry supports up to {supported}; "
            "upgrade gitquarry or run `gitquarry rebuild-index`"
        )
        self.db_path = db_path
        self.found = found
        self.supported = supported


class IndexFullError(IndexStateError):
    """The disk (or the quota) holding the index is full: SQLite said "database or disk is
    full". Work committed before it is kept; a re-run resumes."""

    code = "index_disk_full"

    def __init__(self, db_path: Path, detail: str) -> None:
        super().__init__(
            f"no space left for the index {db_path} ({detail}); free space on that disk (or "
            "move the index with [indexing] index_dir in your own configuration) and run the "
            "command again: what was written before is kept"
        )
        self.db_path = db_path
        self.detail = detail


class IndexIOError(IndexStateError):
    """Reading or writing the index file failed at the operating-system level (SQLite's
    "disk I/O error"): a failing disk, a vanished network mount, a file changed underneath."""

    code = "index_io_error"

    def __init__(self, db_path: Path, detail: str) -> None:
        super().__init__(
            f"reading or writing the index {db_path} failed ({detail}); check the disk or "
            "mount it lives on, then run the command again (`gitquarry rebuild-index` if it "
            "keeps failing)"
        )
        self.db_path = db_path
        self.detail = detail


class IndexLocationConflictError(IndexStateError):
    """An absolute ``[indexing] index_dir`` already holds another workspace's index."""

    code = "index_location_conflict"

    def __init__(self, index_dir: Path, owner: Path, workspace: Path) -> None:
        super().__init__(
            f"{index_dir} holds the index of the workspace {owner}, not {workspace}; an "
            "absolute [indexing] index_dir serves one workspace: give this workspace its own "
            "(a relative index_dir such as '.gitquarry' keeps one per workspace)"
        )
        self.index_dir = index_dir
        self.owner = owner
        self.workspace = workspace


class IndexBusyError(IndexStateError):
    """Another process holds the index's write lock."""

    code = "index_busy"

    def __init__(self, db_path: Path) -> None:
        super().__init__(f"another gitquarry process is writing {db_path}; try again shortly")
        self.db_path = db_path


# --- git ------------------------------------------------------------------------------------


class GitError(GitFailureError):
    """A git command failed. ``argv`` is the full argv (for debugging; never shown),
    ``stderr`` what git printed, ``command`` the subcommand (``log``, ``rev-list``) and
    ``repository`` the ``--git-dir`` it ran against (None for discovery)."""

    code = "git_failed"

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        self.command = _git_subcommand(argv)
        self.repository = next(
            (a.split("=", 1)[1] for a in argv if a.startswith("--git-dir=")), None
        )
        detail = git_message(stderr) or f"exit code {returncode}"
        super().__init__(f"git {self.command} failed: {detail}")


def _git_subcommand(argv: list[str]) -> str:
    """The subcommand of a git argv: the first word after git's own options."""
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg in ("-c", "-C"):
            skip = True
        elif not arg.startswith("-"):
            return arg
    return "command"


def git_message(stderr: str, *, max_chars: int = 400) -> str:
    """What git said, for a user: its ``fatal:``/``error:`` lines (else the first line),
    joined with ``; `` and cut to ``max_chars``."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    wanted = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines[:1]
    text = "; ".join(dict.fromkeys(wanted))
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


class GitNotFoundError(GitFailureError):
    """The git executable is not on PATH."""

    code = "git_not_found"

    def __init__(self) -> None:
        super().__init__("the `git` executable was not found on PATH; install Git 2.31 or newer")


class NotARepositoryError(UsageError):
    """A path given as a repository is not one."""

    code = "not_a_repository"

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is not a Git repository")
        self.path = path


class GitObjectMissingError(GitFailureError):
    """A Git object is not in the local object store (partial/shallow clone, pruned)."""

    code = "git_object_unavailable"

    def __init__(self, object_id: str, repo: Path) -> None:
        super().__init__(f"Git object {object_id} is missing from {repo}")
        self.object_id = object_id
        self.repo = repo


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


class RepositoryUnreadableError(GitFailureError):
    """Git cannot open a repository (bad configuration, unsupported format or extension,
    broken ``HEAD``). ``detail`` is what git said."""

    code = "repository_unreadable"

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(f"{path}: Git cannot read this repository: {detail}")
        self.path = path
        self.detail = detail


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


# --- embedding ------------------------------------------------------------------------------


class EmbeddingError(GitquarryError):
    """Area (not a family, never raised itself): the embedding provider failed or is
    misconfigured. ``except EmbeddingError`` catches every embedding error; each subclass
    names its family too."""

    code = "embedding_failed"


class EmbeddingFailedError(EmbeddingError, UnavailableError):
    """The embedding provider could not embed (none configured, a model that does not load
    or does not report its vector length)."""

    code = "embedding_failed"


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


class UnknownEmbeddingProviderError(EmbeddingError, ConfigError):
    """``[embedding] provider`` names no registered provider. ``known`` lists those that are."""

    code = "embedding_provider_unknown"

    def __init__(self, provider: str, known: list[str]) -> None:
        known_list = ", ".join(sorted(known))
        ConfigError.__init__(
            self, None, f"unknown embedding provider {provider!r}; known: {known_list}"
        )
        self.provider = provider
        self.known = known


class EmbeddingConfigInvalidError(EmbeddingError, ConfigError):
    """An ``[embedding]`` setting is invalid for the chosen provider; ``key`` names it."""

    code = "embedding_config_invalid"

    def __init__(self, key: str, message: str) -> None:
        ConfigError.__init__(self, None, f"[embedding] {key}: {message}")
        self.key = key


class EmbeddingDependencyMissingError(EmbeddingError, UnavailableError):
    """The provider needs a Python package that is not installed; ``install`` says how."""

    code = "embedding_dependency_missing"

    def __init__(self, provider: str, package: str, install: str) -> None:
        super().__init__(
            f"embedding provider {provider!r} needs the {package!r} package, which is not "
            f"installed: {install}"
        )
        self.provider = provider
        self.package = package
        self.install = install


class EmbeddingModelUnavailableError(EmbeddingError, UnavailableError):
    """The model's files are not on this machine (gitquarry never downloads a model)."""

    code = "embedding_model_unavailable"

    def __init__(self, provider: str, model: str, detail: str) -> None:
        super().__init__(
            f"embedding model {model!r} ({provider}) is not available locally: {detail}"
        )
        self.provider = provider
        self.model = model
        self.detail = detail


class EmbeddingDeviceUnavailableError(EmbeddingError, UnavailableError):
    """``device = "cuda"`` was requested but no CUDA runtime is usable by the provider."""

    code = "embedding_device_unavailable"

    def __init__(self, provider: str, device: str, detail: str) -> None:
        super().__init__(f"embedding provider {provider!r} cannot use device {device!r}: {detail}")
        self.provider = provider
        self.device = device
        self.detail = detail


class EmbeddingEndpointError(EmbeddingError, UnavailableError):
    """An HTTP embedding endpoint failed: unreachable, an HTTP error, or a malformed reply.

    ``status`` is the HTTP status, or None when no response arrived.
    """

    code = "embedding_endpoint_failed"

    def __init__(self, url: str, status: int | None, detail: str) -> None:
        what = f"HTTP {status}" if status is not None else "no response"
        super().__init__(f"embedding endpoint {url} failed ({what}): {detail}")
        self.url = url
        self.status = status
        self.detail = detail


# --- graph ----------------------------------------------------------------------------------


class GraphError(TrustError):
    """The architecture graph could not be loaded."""

    code = "graph_invalid"


class NoGraphError(IndexStateError):
    """The project has no architecture graph files."""

    code = "no_graph"

    def __init__(self, project: Path, graph_dir: Path) -> None:
        super().__init__(
            f"{project} has no architecture graph: no *.yml or *.yaml files under {graph_dir}"
        )
        self.project = project
        self.graph_dir = graph_dir


class GraphFileError(GraphError):
    """A graph file is not valid YAML or not shaped like a beadloom graph file.

    ``path`` is the file; ``detail`` says what is wrong (parser message or expected shape).
    """

    code = "graph_file_invalid"

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"invalid architecture graph file {path}: {detail}")
        self.path = path
        self.detail = detail


# --- sqlite capabilities --------------------------------------------------------------------


class Fts5UnavailableError(UnavailableError):
    """This process's SQLite has no FTS5 module, which commit-history search needs."""

    code = "fts5_unavailable"

    def __init__(self) -> None:
        super().__init__(
            "this Python's SQLite was built without the FTS5 module, which commit-history "
            "search needs; use a Python whose sqlite3 has FTS5 (python.org and most Linux "
            "distributions ship it) and run `gitquarry rebuild-index`"
        )


class IndexAccessError(IndexStateError):
    """The index location cannot be created, opened or written (permissions, a file where a
    directory should be, a read-only file system)."""

    code = "index_unavailable"

    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"cannot use the index at {path}: {detail}")
        self.path = path
        self.detail = detail


class IndexPathUnsafeError(IndexAccessError):
    """A file or directory where gitquarry keeps its state (an index directory, a
    repository's ``.gitquarry/``) is a symbolic link, not a regular file (or directory), or
    tracked by git: the checkout placed it, and gitquarry never follows, opens or deletes it.
    ``path`` is the offending path, ``what`` what it is, ``tracked`` whether git tracks it."""

    code = "index_path_unsafe"

    def __init__(self, path: Path, what: str, *, tracked: bool = False) -> None:
        if tracked:
            remedy = ("it came with the checkout, so gitquarry neither reads nor writes it: "
                      "remove it from the repository and the working tree, or set [indexing] "
                      "index_dir in your own configuration to a directory outside the "
                      "checkout")
        else:
            remedy = ("gitquarry never follows a link or opens a non-regular file there: "
                      "remove it; it came with the checkout (or an archive), not from "
                      "gitquarry")
        GitquarryError.__init__(
            self, f"cannot use the index at {path}: it is {what}, so gitquarry is refusing to "
            f"use it; {remedy}")
        self.path = path
        self.detail = what
        self.what = what
        self.tracked = tracked


class IndexUntrustedError(IndexAccessError):
    """An index (or docs cache) that this installation did not create: it carries no owner
    token recorded in the user's state directory. ``reason`` is ``"foreign"`` (a token this
    user never recorded: another installation, an archive, a forgery) or ``"legacy"`` (no
    token: an older gitquarry, or a forgery of one)."""

    code = "index_untrusted"

    def __init__(self, path: Path, reason: str) -> None:
        if reason == "legacy":
            why = ("it was made by an older gitquarry (or by something pretending to be "
                   "one) and has not been adopted yet")
            remedy = ("run `gitquarry index` on the workspace once to adopt it (allowed only "
                      "while git does not track it), or `gitquarry rebuild-index` to build "
                      "a new one")
        else:
            why = "this installation did not create it (its owner token is not recorded)"
            remedy = ("run `gitquarry index` to set it aside and build a new one, or "
                      "`gitquarry rebuild-index`")
        if path.name == DOCS_CACHE_NAME:
            remedy = ("run `gitquarry repo-docs index` to adopt it or set it aside and build "
                      "a new one")
        GitquarryError.__init__(
            self, f"cannot use the index at {path}: refusing to read it, {why}, so its "
            f"contents are not trusted; {remedy}"
        )
        self.path = path
        self.detail = why
        self.reason = reason


# --- untrusted YAML -------------------------------------------------------------------------


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


class RevisionNotFoundError(NotFoundError):
    """A revision (branch, tag, hash, ``HEAD~3``) names no commit in the repository. CLI exit
    code 3 (not found)."""

    code = "revision_not_found"

    def __init__(self, revision: str) -> None:
        GitquarryError.__init__(self, f"revision {revision!r} names no commit in this repository")
        self.revision = revision


# --- repository docs ------------------------------------------------------------------------


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


class RepoDocsRegistrationError(UsageError):
    """A repository-docs selector does not resolve to exactly one registration.

    ``reason``: ``not_registered``, ``ambiguous`` (several registrations: pass the full
    selector), ``partial_selector``, ``unknown_selector`` or ``invalid_path``.
    """

    code = "repository_docs_registration_invalid"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class RepoDocsStaleGenerationError(IndexStateError):
    """A selector or rebind names a source generation that is no longer current."""

    code = "repository_docs_source_stale"

    def __init__(self, given: int, current: int) -> None:
        super().__init__(
            f"source registration generation {given} is stale (current: {current}); run "
            "`gitquarry repo-docs sources` for the current selector, or re-register / rebind"
        )
        self.given = given
        self.current = current


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


class WorktreeOverlayStaleError(GitFailureError):
    """The working tree changed while an overlay answer was being built."""

    code = "worktree_overlay_stale"

    def __init__(self, path: str) -> None:
        super().__init__(
            f"the working tree changed while answering ({path}); re-run with --include-worktree"
        )
        self.path = path


class IndexCancelledError(IndexStateError):
    """An indexing run was cancelled by its caller; work done so far is kept."""

    code = "cancelled"

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} was cancelled; finished work is kept and a re-run resumes")
# --- daemon, jobs and the writer lease ------------------------------------------------------


class WriterBusyError(IndexBusyError):
    """The index's writer lease stayed held past the bounded wait. ``holder`` is the current
    writer's public identity (``"daemon job-000004 (pid 812)"``), or "" if unknown."""

    code = "writer_busy"
    #: waiting and trying again later is the remedy
    retryable = True

    def __init__(self, db_path: Path, holder: str, waited_s: float) -> None:
        super().__init__(db_path)
        who = f" ({holder})" if holder else ""
        self.message = (
            f"another gitquarry process is writing {db_path}{who}; waited {waited_s:.1f} s, "
            "try again shortly"
        )
        self.holder = holder
        self.waited_s = waited_s


class DaemonError(UnavailableError):
    """A failure talking to, starting or running the gitquarry daemon."""

    code = "daemon_error"
    retryable = False


class DaemonNotRunningError(DaemonError):
    """No daemon answers on this user's socket."""

    code = "daemon_not_running"

    def __init__(self) -> None:
        super().__init__(
            "no gitquarry daemon is running for this user; start one with `gitquarry daemon "
            "start` (or `gitquarry daemon run` in the foreground)"
        )


class DaemonAlreadyRunningError(DaemonError):
    """A second daemon was asked to run; ``pid`` is the one already running (0: unknown)."""

    code = "daemon_already_running"

    def __init__(self, pid: int, since: str) -> None:
        who = f"pid {pid}" if pid else "pid unknown"
        when = f", running since {since}" if since else ""
        super().__init__(f"a gitquarry daemon is already running for this user ({who}{when})")
        self.pid = pid


class DaemonUnavailableError(DaemonError):
    """The daemon cannot be used here (no Unix sockets, socket path too long, no answer)."""

    code = "daemon_unavailable"

    def __init__(self, reason: str) -> None:
        super().__init__(f"the gitquarry daemon is unavailable: {reason}")
        self.reason = reason


class DaemonUnreachableError(DaemonUnavailableError):
    """This user's daemon runs (it holds the lock in the state directory) but this process
    cannot reach the socket it recorded; no second daemon is started beside it."""

    code = "daemon_unreachable"

    def __init__(self, pid: int, socket: str, why: str) -> None:
        who = f"pid {pid}" if pid else "pid unknown"
        super().__init__(
            f"a gitquarry daemon is already running for this user ({who}) but this process "
            f"cannot reach its socket {socket or '(not recorded yet)'}: {why}; use the same "
            "XDG_STATE_HOME/XDG_RUNTIME_DIR as that daemon, or stop it with `gitquarry "
            "daemon stop` (or by its pid) from a shell that reaches it"
        )
        self.pid = pid
        self.socket = socket


class JobNotFoundError(NotFoundError):
    """No job has this public id. CLI exit code 3 (not found)."""

    code = "job_not_found"

    def __init__(self, job_id: str) -> None:
        GitquarryError.__init__(self, f"no job {job_id!r}; `gitquarry jobs list` shows the jobs")
        self.job_id = job_id


class JobStateWriteError(IndexStateError):
    """The daemon could not commit a job-state change (e.g. a cancel tombstone). Nothing
    changed: a cancelled job's worker keeps running. Retry the request."""

    code = "job_state_write_failed"
    retryable = True

    def __init__(self, action: str, detail: str) -> None:
        super().__init__(f"could not record {action} ({detail}); nothing changed, try again")
        self.action = action
        self.detail = detail


class JobSnapshotWriteError(IndexStateError):
    """A cancel's durable tombstone was committed and the worker signalled, but the job's
    terminal status could not be written; a restart reconstructs ``cancelled``."""

    code = "job_snapshot_write_failed"
    retryable = True

    def __init__(self, job_id: str, detail: str) -> None:
        super().__init__(
            f"{job_id}: cancellation recorded and the worker stopped, but its final status "
            f"could not be written ({detail})"
        )
        self.job_id = job_id
        self.detail = detail


class WorkspaceUnavailableError(UnavailableError):
    """A watched workspace's directory is gone, moved or no longer readable. ``name`` is the
    workspace's display name (never its path)."""

    code = "workspace_unavailable"
    retryable = True

    def __init__(self, name: str, detail: str) -> None:
        super().__init__(f"workspace {name!r} is unavailable: {detail}")
        self.name = name
        self.detail = detail





class IndexReadOnlyError(IndexAccessError):
    """The index can be read but not written (a read-only directory or mount, a file owned
    by another user). Searches still work; updating it does not."""

    code = "index_read_only"

    def __init__(self, path: Path, detail: str) -> None:
        IndexAccessError.__init__(
            self, path,
            f"{detail}; it can be searched but not updated here (make it writable, or point "
            "[indexing] index_dir in your own configuration at a writable directory)",
        )


class WebError(GitquarryError):
    """Area (not a family, never raised itself): a failure of the local web page
    (``gitquarry web``)."""

    code = "web_error"


class WebBindRefusedError(WebError, UsageError):
    """The web page was asked to listen anywhere but 127.0.0.1 (refused: loopback only)."""

    code = "web_bind_refused"

    def __init__(self, host: str) -> None:
        super().__init__(
            f"the web page listens on 127.0.0.1 only; refusing to bind {host!r}"
        )
        self.host = host


class WebPortError(WebError, UnavailableError):
    """The requested port cannot be used (taken, out of range, or another web port runs)."""

    code = "web_port_unavailable"

    def __init__(self, port: int, reason: str) -> None:
        super().__init__(f"cannot serve the web page on port {port}: {reason}")
        self.port = port
        self.reason = reason


# --- agent answers: cursors, commits, blame (issue 12) ---------------------------------------


class CursorExpiredError(IndexStateError):
    """A ``next_cursor`` names a ranking that is no longer kept (older than its time to live,
    evicted, or the index was rebuilt): run the search again without a cursor."""

    code = "cursor_expired"

    def __init__(self, cursor: str, reason: str) -> None:
        super().__init__(
            f"cursor {cursor!r} has expired ({reason}); run the search again without a cursor"
        )
        self.cursor = cursor
        self.reason = reason


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


#: The families: every concrete error class is a subclass of exactly one of these.
FAMILIES: tuple[type[GitquarryError], ...] = (
    UsageError, NotFoundError, ConfigError, IndexStateError, GitFailureError, TrustError,
    UnavailableError, InternalError,
)
#: The areas: groups of one part's errors across families, never raised themselves.
AREAS: tuple[type[GitquarryError], ...] = (EmbeddingError, WebError)
