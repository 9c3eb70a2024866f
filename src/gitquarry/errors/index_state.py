"""Index-state errors (family ``IndexStateError``, kind ``FAILED``: CLI exit 1, HTTP 409): the
index, docs cache, cursor, job record or graph files a request needs are missing, stale,
busy, corrupt, full or unusable."""

from __future__ import annotations

from pathlib import Path

from gitquarry.errors.base import (
    GitquarryError,
    IndexStateError,
)


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


class IndexSchemaOutdatedError(IndexStateError):
    """The index was written by an older gitquarry and needs a schema upgrade, which only
    a command that builds the index performs (``gitquarry index``, under the writer lease):
    a read (``history``, ``status``, ``show``, the MCP tools, the web page) never writes."""

    code = "index_schema_outdated"

    def __init__(self, db_path: Path, found: int, current: int) -> None:
        super().__init__(
            f"{db_path} was written by an older gitquarry (schema version {found}, this one "
            f"uses {current}); run `gitquarry index` on the workspace once to upgrade it "
            "(searches do not write to the index)"
        )
        self.db_path = db_path
        self.found = found
        self.current = current


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


class NoGraphError(IndexStateError):
    """The project has no architecture graph files."""

    code = "no_graph"

    def __init__(self, project: Path, graph_dir: Path) -> None:
        super().__init__(
            f"{project} has no architecture graph: no *.yml or *.yaml files under {graph_dir}"
            " (this search reads a beadloom graph, docs/graph.md; commits and repository docs"
            " have their own: `gitquarry history`, `gitquarry repo-docs search`, over MCP"
            " search_git_history, repository_docs_search)"
        )
        self.project = project
        self.graph_dir = graph_dir


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

    def __init__(self, path: Path, reason: str, records: Path | None = None) -> None:
        """``records``: the state directory's folder of owner tokens that was looked in
        (named in the message: an index built under another ``XDG_STATE_HOME`` or ``HOME``,
        as an MCP client's reduced environment can give, reads as foreign there)."""
        if reason == "legacy":
            why = ("it was made by an older gitquarry (or by something pretending to be "
                   "one) and has not been adopted yet")
            remedy = ("run `gitquarry index` on the workspace once to adopt it (allowed only "
                      "while git does not track it), or `gitquarry rebuild-index` to build "
                      "a new one")
        else:
            why = "this installation did not create it (its owner token is not recorded"
            why += f" in {records})" if records is not None else ")"
            remedy = ("if it was built by this user under another state directory "
                      "(`XDG_STATE_HOME` or `HOME` set differently, e.g. in an MCP client's "
                      "environment), run this command with the same one; otherwise run "
                      "`gitquarry index` to set it aside and build a new one, or "
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


class IndexCancelledError(IndexStateError):
    """An indexing run was cancelled by its caller; work done so far is kept."""

    code = "cancelled"

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} was cancelled; finished work is kept and a re-run resumes")


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
