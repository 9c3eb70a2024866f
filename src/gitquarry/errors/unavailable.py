"""Unavailable errors (family ``UnavailableError``, kind ``FAILED``: CLI exit 1, HTTP 409): a
tool, service or resource the request needs is not available here."""

from __future__ import annotations

from gitquarry.errors.base import (
    EmbeddingError,
    UnavailableError,
    WebError,
)


class EmbeddingFailedError(EmbeddingError, UnavailableError):
    """The embedding provider could not embed (none configured, a model that does not load
    or does not report its vector length)."""

    code = "embedding_failed"


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


class Fts5UnavailableError(UnavailableError):
    """This process's SQLite has no FTS5 module, which commit-history search needs."""

    code = "fts5_unavailable"

    def __init__(self) -> None:
        super().__init__(
            "this Python's SQLite was built without the FTS5 module, which commit-history "
            "search needs; use a Python whose sqlite3 has FTS5 (python.org and most Linux "
            "distributions ship it) and run `gitquarry rebuild-index`"
        )


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
        self.why = why


class WorkspaceUnavailableError(UnavailableError):
    """A watched workspace's directory is gone, moved or no longer readable. ``name`` is the
    workspace's display name (never its path)."""

    code = "workspace_unavailable"
    retryable = True

    def __init__(self, name: str, detail: str) -> None:
        super().__init__(f"workspace {name!r} is unavailable: {detail}")
        self.name = name
        self.detail = detail


class WebPortError(WebError, UnavailableError):
    """The requested port cannot be used (taken, out of range, or another web port runs)."""

    code = "web_port_unavailable"

    def __init__(self, port: int, reason: str) -> None:
        super().__init__(f"cannot serve the web page on port {port}: {reason}")
        self.port = port
        self.reason = reason


class SearchRefusedError(UnavailableError):
    """The daemon does not answer this search for this client (another installation or
    environment, no absolute start directory): the client answers it itself."""

    code = "search_refused"

    def __init__(self, why: str) -> None:
        super().__init__(f"search not answered here: {why}")
        self.why = why
