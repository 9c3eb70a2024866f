"""The daemon process: one per user, holding the job store, the runner, the coordinator and
the IPC server together.

``Daemon().run()`` (``gitquarry daemon run``) takes the per-user lock (``daemon.lock`` in the
state directory, an ``flock`` held for the process's life, recording the pid and the socket
path; a second daemon, whatever its ``XDG_RUNTIME_DIR``, reads the holder's pid from it and
refuses), opens the state, turns jobs left ``queued``/``running`` by a previous process into
``interrupted`` (or ``cancelled`` when their tombstone matches), binds the socket, starts the
worker, the watcher and the reconcile loop, and serves until ``stop`` (SIGTERM, SIGINT or the
``shutdown`` request). A running job is stopped at its next progress point and left
``interrupted``; the next daemon resumes it. Logs go to ``<state dir>/daemon.log``, rotated.

The daemon is the composition root of ``service/``: it builds the runner and the
coordinator from the few callables each uses, and the ``JobServices`` every job gets; none
of them holds the ``Daemon``. The web page is hosted through the ``web`` hook (a
``WebHosting``: ``gitquarry.web.WebService`` in practice, wired in by ``gitquarry daemon
run``), so this module never imports ``gitquarry.web``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import logging.handlers
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from gitquarry.config import DaemonConfig, load_config
from gitquarry.errors import (
    DaemonAlreadyRunningError,
    GitquarryError,
    InternalError,
    InvalidArgumentError,
    UsageError,
)
from gitquarry.service import paths
from gitquarry.service.checkpoint import CheckpointStore
from gitquarry.service.job_store import Job, StateStore, parse_public_id
from gitquarry.service.redact import redact, redact_payload
from gitquarry.store.lease import pid_alive

if TYPE_CHECKING:
    from gitquarry.service.coordinator import Coordinator
    from gitquarry.service.ipc import IpcServer
    from gitquarry.service.jobs import JobServices
    from gitquarry.service.runner import Runner

log = logging.getLogger("gitquarry.daemon")

#: how long ``jobs.attach`` may wait in one request, seconds
MAX_ATTACH_S = 3600.0
#: ``jobs.attach`` repeats the job's state after this many seconds without a change, so a
#: follower (whose socket read times out after 60 s) never takes a long quiet phase (one slow
#: embedding batch) for a daemon that stopped answering
ATTACH_HEARTBEAT_S = 15.0
_CHECKPOINT_PRUNE_S = 3600.0


class InstanceLock:
    """The one-daemon-per-user lock in the state directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def acquire(self, **info: Any) -> None:
        """Take the lock and record ``{"pid", **info}`` in it.

        :raises DaemonAlreadyRunningError: another daemon holds it (names its pid)."""
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held for life
        os.chmod(self.path, 0o600)
        deadline = time.monotonic() + 1.0
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                # a daemon (which records its pid at once), one just starting, or a client
                # probing the lock for a moment (``paths.lock_held``): look again briefly
                holder = read_lock_info(self.path)
                if _alive(int(holder.get("pid") or 0)) or time.monotonic() >= deadline:
                    handle.close()
                    raise DaemonAlreadyRunningError(int(holder.get("pid") or 0),
                                                    str(holder.get("since") or "")) from None
                time.sleep(0.02)
        self._handle = handle
        self.write({"pid": os.getpid(), **info})

    def write(self, info: dict[str, Any]) -> None:
        assert self._handle is not None
        fd = self._handle.fileno()
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)

    def release(self) -> None:
        if self._handle is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._handle.fileno(), 0)
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


#: whether process ``pid`` exists (a record left by a killed daemon names a dead one)
_alive = pid_alive


read_lock_info = paths.read_lock_info
lock_held = paths.lock_held


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """``daemon.log`` rotated by size; the file a rotation opens is private (0600) like the
    first (``RotatingFileHandler`` would create it with the umask's mode)."""

    def _open(self) -> Any:
        paths.private_file(Path(self.baseFilename))
        return super()._open()


class WebHost(Protocol):
    """A running web page as the daemon sees it (``gitquarry.web.WebService``)."""

    @property
    def port(self) -> int: ...

    @property
    def running(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def login(self) -> dict[str, Any]:
        """``{"port", "url", "login_url"}`` with a fresh single-use sign-in token."""
        ...

    def status(self) -> dict[str, Any]: ...

    def open_on(self, workspace_ref: str) -> None:
        """The watched workspace the page opens on from now on."""
        ...


#: an answer hooked into the daemon: ``(daemon, args, send)``, replying through ``send``
AnswerOp = Callable[[Any, dict[str, Any], Callable[[dict[str, Any]], None]], None]


class WebHosting(Protocol):
    """The hook the daemon hosts a web page through (the ``WebService`` class itself):
    ``check_bind(host, port)`` validates a request before anything starts (``host`` None:
    the default, 127.0.0.1; raises ``WebBindRefusedError``/``WebPortError``), and calling
    it with the daemon and a port (0: any free one) builds an unstarted page."""

    def check_bind(self, host: str | None, port: int) -> None: ...

    def __call__(self, daemon: Daemon, *, port: int = 0) -> WebHost: ...


class Daemon:
    """One daemon. ``config`` defaults to the user configuration's ``[daemon]`` section;
    ``web`` is how it serves the web page (None: ``web.start`` is refused)."""

    state: StateStore
    checkpoints: CheckpointStore
    runner: Runner
    coordinator: Coordinator
    services: JobServices
    ipc: IpcServer

    def __init__(self, config: DaemonConfig | None = None, *, log_stderr: bool = False,
                 web: WebHosting | None = None,
                 answer_ops: Mapping[str, AnswerOp] | None = None) -> None:
        from gitquarry import __version__

        self.log_stderr = log_stderr
        self.web_hosting = web
        #: requests answered verbatim, before the redacting ops (hooked in by the command
        #: that starts the daemon: ``cli.daemon_search.OPS``; the daemon imports no surface)
        self.answer_ops: Mapping[str, AnswerOp] = dict(answer_ops or {})
        self.config = config or load_config(None).daemon
        self.version = __version__
        self.started_at = time.time()
        self.stop_event = threading.Event()
        self._roots: dict[str, str] = {}
        self._roots_lock = threading.Lock()
        self.web: WebHost | None = None  # once `gitquarry web` asked for it
        self._web_lock = threading.Lock()
        home = os.path.expanduser("~")
        if home and home != "/":
            self._roots[home] = "~"

    # -- redaction -------------------------------------------------------------------------

    def add_redaction(self, path: str, label: str) -> None:
        with self._roots_lock:
            self._roots[path] = label

    def redact(self, text: str) -> str:
        with self._roots_lock:
            roots = dict(self._roots)
        return redact(text, roots)

    def redact_payload(self, value: Any) -> Any:
        with self._roots_lock:
            roots = dict(self._roots)
        return redact_payload(value, roots)

    # -- wiring ----------------------------------------------------------------------------

    def submit(self, type_: str, scope: str, *, origin: str, target: str | None = None,
               params: dict[str, Any] | None = None) -> Job | None:
        return self.runner.submit(type_, scope, origin=origin, target=target, params=params)

    def retarget(self, job: Job, target: str) -> None:
        self.runner.retarget(job, target)

    def job_services(self) -> JobServices:
        """What jobs see of this daemon (built once the runner and coordinator exist; each
        callable reaches them when called)."""
        from gitquarry.service.jobs import JobServices

        return JobServices(
            load_workspace=lambda scope: self.coordinator.load_workspace(scope),
            save_progress=lambda job_id, progress, waiting: self.state.save_progress(
                job_id, progress, waiting),
            add_event=lambda job_id, kind, data: self.state.add_event(job_id, kind, data),
            submit=lambda *args, **kwargs: self.runner.submit(*args, **kwargs),
            retarget=self.retarget,
            refs_fingerprint=lambda scope: self.coordinator.refs_fingerprint(scope),
            after_history_index=lambda scope, ws: self.coordinator.after_history_index(
                scope, ws),
            redact=self.redact,
            add_redaction=self.add_redaction,
            checkpoints=lambda: self.checkpoints,
            lease_wait_s=self.config.lease_wait_s,
            embed=self.config.embed,
        )

    def run(self, *, on_ready: Any = None) -> int:
        """Serve until stopped. Returns the exit status.

        :raises DaemonAlreadyRunningError: another daemon runs for this user.
        :raises DaemonUnavailableError: the socket cannot be created here.
        """
        from gitquarry.service.coordinator import Coordinator
        from gitquarry.service.ipc import IpcServer
        from gitquarry.service.runner import Runner

        state_dir = paths.ensure_private_dir(paths.state_dir())
        lock = InstanceLock(state_dir / paths.LOCK_NAME)
        sock_dir = paths.choose_socket_dir(state_dir)
        sock_path = sock_dir / paths.SOCKET_NAME
        lock.acquire(socket=str(sock_path))
        self.add_redaction(str(state_dir), "<state>")
        if sock_dir != state_dir:
            self.add_redaction(str(sock_dir), "<runtime>")
        handler = self._setup_logging(state_dir)
        try:
            self.state = StateStore(state_dir / paths.STATE_DB_NAME)
            self.checkpoints = CheckpointStore(state_dir / paths.CHECKPOINT_DB_NAME)
            interrupted, cancelled = self.state.recover()
            for ws in self.state.workspaces():
                self.add_redaction(str(ws.path), f"<workspace {ws.name}>")
            self.services = self.job_services()
            self.runner = Runner(
                self.state, self.services, scope_identity=self._scope_identity,
                redact_payload=self.redact_payload, retry_base_s=self.config.retry_base_s,
                retry_max_s=self.config.retry_max_s,
            )
            self.coordinator = Coordinator(
                self.state, self.config, submit=self.submit, add_redaction=self.add_redaction,
                current_job=self._current_job, reconcile_hooks=[self._reconcile_docs],
            )
            self.ipc = IpcServer(sock_path, self.handle)
            self.ipc.bind()
            lock.write({"pid": os.getpid(), "socket": str(sock_path), "version": self.version,
                        "since": datetime.fromtimestamp(self.started_at, UTC).isoformat(
                            timespec="seconds")})
            log.info("daemon %s started (pid %d); %d interrupted job(s) to resume, %d "
                     "cancelled on recovery", self.version, os.getpid(), len(interrupted),
                     len(cancelled))
            self._install_signals()
            self.runner.start()
            self.coordinator.start()
            self.ipc.start()
            if on_ready is not None:
                on_ready()
            last_prune = 0.0
            while not self.stop_event.wait(max(0.05, self.config.socket_check_s or 1.0)):
                try:
                    self.ipc.check_socket()
                except (OSError, GitquarryError) as exc:
                    log.error("cannot re-create the socket: %s", exc)
                if time.monotonic() - last_prune > _CHECKPOINT_PRUNE_S:
                    last_prune = time.monotonic()
                    self._prune_checkpoints()
            log.info("daemon stopping")
            self._stop_web()
            self.ipc.close()
            self.coordinator.stop()
            self.runner.stop()
            self.checkpoints.close()
            self.state.close()
            log.info("daemon stopped")
        finally:
            lock.release()
            logging.getLogger("gitquarry").removeHandler(handler)
            logging.getLogger("gitquarry").propagate = True
            handler.close()
        return 0

    def stop(self) -> None:
        self.stop_event.set()

    def _scope_identity(self, scope: str) -> tuple[int, str]:
        """A workspace scope's registration generation and name (for the runner).

        :raises InvalidArgumentError: not a watched workspace."""
        return self.coordinator.generation(scope), self.coordinator.name(scope)

    def _current_job(self) -> Job | None:
        current = self.runner.current
        return current.job if current is not None else None

    def _reconcile_docs(self) -> None:
        from gitquarry.service.docs_jobs import reconcile_docs

        reconcile_docs(self.services)

    def _install_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: self.stop())

    def _setup_logging(self, state_dir: Path) -> logging.Handler:
        log_path = paths.private_file(state_dir / paths.LOG_NAME)
        handler = _PrivateRotatingFileHandler(
            log_path, maxBytes=self.config.log_max_bytes, backupCount=self.config.log_backups,
            encoding="utf-8",
        )
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger("gitquarry")
        root.addHandler(handler)
        # the log file is the record; stderr (a service manager's journal) only on request
        root.propagate = self.log_stderr
        if root.level in (logging.NOTSET,) or root.level > logging.INFO:
            root.setLevel(logging.INFO)
        return handler

    def _prune_checkpoints(self) -> None:
        from gitquarry.service.job_store import ACTIVE

        active = {j.work_key for j in self.state.list_jobs(statuses=ACTIVE, limit=10_000)}
        active |= {j.work_key for j in self.state.list_jobs(statuses=("failed",), limit=10_000)
                   if j.not_before is not None}
        report = self.checkpoints.prune(active_work_keys=active)
        if report:
            log.info("checkpoint retention: %s", report)

    # -- requests --------------------------------------------------------------------------

    def handle(self, request: dict[str, Any], send: Any) -> None:
        """Answer one IPC request (every payload redacted of absolute paths)."""
        op = str(request.get("op") or "")
        args = request.get("args") or {}
        try:
            if not isinstance(args, dict):
                raise InvalidArgumentError("args", "must be an object")
            if op == "jobs.attach":
                self._attach(args, send)
                return
            if op in self.answer_ops:  # the caller's own answer, verbatim (cli/daemon_search.py)
                return self.answer_ops[op](self, args, send)
            method = _OPS.get(op)
            if method is None:
                raise InvalidArgumentError("op", f"unknown request {op!r}")
            result = method(self, args)
            send({"ok": True, "result": self.redact_payload(result), "final": True})
        except GitquarryError as exc:
            send(self._error(exc))
        except Exception as exc:
            log.exception("request %s failed", op)
            send(self._error(InternalError(exc)))

    def _error(self, exc: GitquarryError) -> dict[str, Any]:
        retryable = bool(getattr(exc, "retryable", False))
        return {"ok": False, "final": True, "error": {
            "code": exc.code, "message": self.redact(str(exc)), "retryable": retryable,
            "exit_code": exc.exit_code}}

    def _job_arg(self, args: dict[str, Any]) -> int:
        raw = str(args.get("id") or "")
        row_id = parse_public_id(raw)
        if row_id is None:
            raise InvalidArgumentError("JOB_ID", f"{raw!r} is not a job id like job-000001")
        return row_id

    def op_ping(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"pid": os.getpid(), "version": self.version,
                "started_at": round(self.started_at, 3)}

    def op_status(self, args: dict[str, Any]) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for job in self.state.list_jobs(limit=100_000):
            counts[job.status] = counts.get(job.status, 0) + 1
        current = self.runner.current
        return {
            "daemon": {"pid": os.getpid(), "version": self.version,
                       "started_at": round(self.started_at, 3),
                       "uptime_s": round(time.time() - self.started_at, 1),
                       "debounce_s": self.config.debounce_s,
                       "reconcile_s": self.config.reconcile_s},
            "active_job": current.job.public_id if current is not None else None,
            "jobs": counts,
            "web": self.web.status() if self.web is not None else None,
            "workspaces": self.coordinator.status(),
        }

    def op_watch(self, args: dict[str, Any]) -> dict[str, Any]:
        path = args.get("path")
        if not isinstance(path, str) or not path:
            raise InvalidArgumentError("PATH", "is required")
        ws, job = self.coordinator.watch(path)
        return {"workspace_ref": ws.ref, "name": ws.name, "generation": ws.generation,
                "job": job.to_public() if job is not None else None}

    def op_unwatch(self, args: dict[str, Any]) -> dict[str, Any]:
        ref = self.coordinator.resolve_ref(str(args.get("workspace") or ""))
        return {"workspace_ref": ref, "removed": self.coordinator.unwatch(ref)}

    def op_submit(self, args: dict[str, Any]) -> dict[str, Any]:
        from gitquarry.service.catalog import job_type_names

        type_ = str(args.get("type") or "")
        if type_ not in job_type_names():
            raise InvalidArgumentError("type", f"must be one of {', '.join(job_type_names())}")
        ref = self.coordinator.resolve_ref(str(args.get("workspace") or ""))
        job = self.submit(type_, ref, origin=str(args.get("origin") or "cli"))
        assert job is not None
        return {"job": job.to_public()}

    def op_docs_submit(self, args: dict[str, Any]) -> dict[str, Any]:
        """Submit (or join) the repository-docs revision-set job for a registry selector:
        ``repo``, optional ``registration_id``/``source_registration_id``/
        ``source_registration_generation``, ``revision``, ``include_worktree``."""
        from gitquarry.service.docs_jobs import submit_docs_job

        revision = args.get("revision")
        if revision is not None and not isinstance(revision, str):
            raise InvalidArgumentError("revision", "must be a string")
        job = submit_docs_job(self.services, args, revision=revision,
                              include_worktree=bool(args.get("include_worktree")),
                              origin=str(args.get("origin") or "cli"))
        assert job is not None
        return {"job": job.to_public()}

    def op_reconcile(self, args: dict[str, Any]) -> dict[str, Any]:
        self.coordinator.request_reconcile()
        return {"requested": True}

    def op_jobs_list(self, args: dict[str, Any]) -> dict[str, Any]:
        from gitquarry.service.job_store import STATUSES

        status = args.get("status")
        statuses: tuple[str, ...] | None = None
        if status:
            if status not in STATUSES:
                raise InvalidArgumentError("--status", f"must be one of {', '.join(STATUSES)}")
            statuses = (str(status),)
        limit = args.get("limit", 50)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
            raise InvalidArgumentError("--limit", "must be from 1 to 1000")
        scope = None
        if args.get("workspace"):
            scope = self.coordinator.resolve_ref(str(args["workspace"]))
        jobs = self.state.list_jobs(statuses=statuses, scope=scope, limit=limit)
        return {"jobs": [self.runner.snapshot(j.id).to_public() for j in jobs]}

    def op_jobs_show(self, args: dict[str, Any]) -> dict[str, Any]:
        row_id = self._job_arg(args)
        job = self.runner.snapshot(row_id)
        return {"job": job.to_public(), "events": self.state.events(row_id)}

    def op_jobs_cancel(self, args: dict[str, Any]) -> dict[str, Any]:
        row_id = self._job_arg(args)
        before = self.runner.snapshot(row_id)
        job = self.runner.cancel(row_id)
        return {"job": job.to_public(), "cancelled": job.status == "cancelled",
                "already_finished": before.terminal}

    def op_web_start(self, args: dict[str, Any]) -> dict[str, Any]:
        """Serve the web page (once; later calls reuse it) and mint a sign-in token.

        ``port``: 0 or absent = keep the running server, or any free port for a new one.
        ``workspace``: a watched workspace (ref, name or path) the page opens on from now on
        (``gitquarry web PATH``); absent = keep the current choice.
        :raises InvalidArgumentError: ``workspace`` is not a watched workspace.
        :raises WebPortError: another port is asked while the page runs, or it is taken.
        :raises WebBindRefusedError: ``host`` is given and is not 127.0.0.1.
        :raises UsageError: this daemon was started without a web page (no ``web`` hook).
        """
        from gitquarry.errors import WebPortError

        hosting = self.web_hosting
        if hosting is None:
            raise UsageError("this daemon was started without the web page "
                             "(`gitquarry daemon run` serves it)")
        port = args.get("port") or 0
        host = str(args["host"]) if "host" in args else None
        workspace = args.get("workspace")
        chosen = self.coordinator.resolve_ref(str(workspace)) if workspace else None
        hosting.check_bind(host, port if isinstance(port, int) else -1)
        with self._web_lock:
            started = False
            if self.web is not None and port and port != self.web.port:
                raise WebPortError(port, f"the page already runs on port "
                                   f"{self.web.port} (`gitquarry web --stop` first)")
            if self.web is None or not self.web.running:
                web = hosting(self, port=port)
                web.start()
                self.web = web
                started = True
            if chosen is not None:
                self.web.open_on(chosen)
            return {**self.web.login(), "started": started}

    def op_web_stop(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"stopped": self._stop_web()}

    def _stop_web(self) -> bool:
        with self._web_lock:
            web, self.web = self.web, None
        if web is None:
            return False
        web.stop()
        return True

    def op_shutdown(self, args: dict[str, Any]) -> dict[str, Any]:
        threading.Timer(0.05, self.stop).start()
        return {"stopping": True, "pid": os.getpid()}

    def _attach(self, args: dict[str, Any], send: Any) -> None:
        """Stream the job's state on every change until it finishes or ``timeout_s``."""
        row_id = self._job_arg(args)
        timeout = args.get("timeout_s", MAX_ATTACH_S)
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not (
            0 <= timeout <= MAX_ATTACH_S
        ):
            raise UsageError(f"timeout_s must be from 0 to {MAX_ATTACH_S:g}")
        deadline = time.monotonic() + float(timeout)
        last: dict[str, Any] | None = None
        last_sent = 0.0
        runner = self.runner
        while True:
            with runner.changed:
                version = runner.version
            job = runner.snapshot(row_id)
            public = self.redact_payload(job.to_public())
            done = job.terminal or job.status == "failed"
            if done or time.monotonic() >= deadline or self.stop_event.is_set():
                send({"ok": True, "event": "end", "result": {"job": public, "finished": done},
                      "final": True})
                return
            if public != last or time.monotonic() - last_sent >= ATTACH_HEARTBEAT_S:
                send({"ok": True, "event": "progress", "result": {"job": public},
                      "final": False})
                last, last_sent = public, time.monotonic()
            with runner.changed:
                if runner.version == version:
                    runner.changed.wait(min(0.5, max(0.01, deadline - time.monotonic())))


_OPS = {
    "ping": Daemon.op_ping,
    "status": Daemon.op_status,
    "watch": Daemon.op_watch,
    "unwatch": Daemon.op_unwatch,
    "submit": Daemon.op_submit,
    "reconcile": Daemon.op_reconcile,
    "docs.submit": Daemon.op_docs_submit,
    "jobs.list": Daemon.op_jobs_list,
    "jobs.show": Daemon.op_jobs_show,
    "jobs.cancel": Daemon.op_jobs_cancel,
    "shutdown": Daemon.op_shutdown,
    "web.start": Daemon.op_web_start,
    "web.stop": Daemon.op_web_stop,
}
