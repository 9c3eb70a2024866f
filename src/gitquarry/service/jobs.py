"""Job types and the context a running job gets.

A job type is registered once (``register_job_type``) with a name, a priority (lower runs
first: keyword indexing before embedding) and a ``run`` function. ``run(ctx)`` does the work
and returns a JSON-able result dict (no absolute paths, no document text). It reports progress
through ``ctx.progress`` (the indexer's ``Progress`` protocol) and is stopped cooperatively:
``ctx.check()`` (called from every progress callback and before each provider call) raises
``JobStop`` when the job was cancelled, the daemon is shutting down, or a more urgent job is
waiting and this one said it may yield.

A job sees the daemon only through ``JobServices``: the few callables and settings jobs use
(the daemon builds it; a test builds one from plain functions and a real ``StateStore``),
never the ``Daemon`` itself.

Built-in types: ``history_index``, ``history_embed``, ``graph_reindex``
(``service.job_types``) and ``repo_docs_index`` (``service.docs_jobs``), registered through
``service.catalog`` (which also looks types up), so this module imports none of them. A
work key is
(type, scope, registration generation, target); the target names the exact work (a
fingerprint of the refs being indexed, the commit of a revision set).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gitquarry.service.job_store import Job

if TYPE_CHECKING:
    from gitquarry.service.checkpoint import CheckpointStore
    from gitquarry.workspace import Workspace

StopReason = Literal["cancelled", "shutdown", "yield"]


class JobStop(Exception):
    """Raised inside a running job to stop it; ``reason`` says why."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class JobType:
    """``run`` does the work; ``yields`` says whether the job may stop early (and be
    re-queued) when a more urgent job waits; ``target`` computes the work's identity for a
    scope at submission (None: a constant).

    ``done(services, scope, target, last)`` says whether the work an automatic request names
    is already done, so the request is dropped (``last``: the scope's last succeeded job of
    this type, or None). It must look at the state the work produces (the index), not only
    at ``last``: a target that names settings but not the data leaves new data unprocessed.
    None: done when ``last`` has the same target.

    ``distinct_targets``: jobs of one scope with different targets are different work (a
    revision set per commit), so a request joins only an open job with the same target and
    ``last`` is the last success with that target; otherwise a newer target replaces the
    target of a queued job (the workspace's refs moved on)."""

    name: str
    priority: int
    run: Callable[[JobContext], dict[str, Any]]
    yields: bool = False
    target: Callable[[JobServices, str], str] | None = None
    description: str = ""
    done: Callable[[JobServices, str, str, Job | None], bool] | None = None
    distinct_targets: bool = False


_JOB_TYPES: dict[str, JobType] = {}


def register_job_type(job_type: JobType, *, replace: bool = False) -> None:
    """Make ``job_type`` available to ``submit``. :raises ValueError: name taken."""
    if job_type.name in _JOB_TYPES and not replace:
        raise ValueError(f"job type {job_type.name!r} is already registered")
    _JOB_TYPES[job_type.name] = job_type


def registered_job_type(name: str) -> JobType:
    """A registered type (``service.catalog.job_type`` registers the built-in ones first).

    :raises KeyError: unknown type."""
    return _JOB_TYPES[name]


def registered_job_type_names() -> list[str]:
    return sorted(_JOB_TYPES)


def work_key(type_: str, scope: str, generation: int, target: str) -> str:
    return f"{type_}:{scope}:{generation}:{target}"


def _no_redaction(text: str) -> str:
    return text


def _no_checkpoints() -> CheckpointStore:
    from gitquarry.errors import UsageError

    raise UsageError("this job host keeps no embedding checkpoints")


@dataclass(frozen=True)
class JobServices:
    """Everything of the daemon a job, or a job type's ``target``/``done`` test, may use.

    - ``load_workspace(scope)`` -> ``Workspace`` (configuration loaded now); raises
      ``WorkspaceUnavailableError``/``ConfigError``.
    - ``save_progress(job_id, progress, waiting_for)`` and ``add_event(job_id, kind, data)``:
      the job store's writes (raise ``JobStateWriteError``).
    - ``submit(type, scope, origin=..., target=..., params=..., generation=..., name=...)``:
      submit follow-up work (``Runner.submit``); ``retarget(job, target)``.
    - ``refs_fingerprint(scope)`` (hex SHA-256 of the workspace's indexed ref tips) and
      ``after_history_index(scope, workspace)`` (record each repository's HEAD).
    - ``redact(text)`` / ``add_redaction(path, label)``: the daemon's path redaction.
    - ``checkpoints()``: the vector-only ``CheckpointStore``.
    - ``lease_wait_s`` (seconds a job waits for a writer lease), ``embed`` (whether the
      daemon chains ``history_embed`` jobs).
    """

    load_workspace: Callable[[str], Workspace]
    save_progress: Callable[[int, dict[str, Any], str | None], None]
    add_event: Callable[[int, str, dict[str, Any]], None]
    submit: Callable[..., Job | None]
    retarget: Callable[[Job, str], None]
    refs_fingerprint: Callable[[str], str]
    after_history_index: Callable[[str, Workspace], None]
    redact: Callable[[str], str] = _no_redaction
    add_redaction: Callable[[str, str], None] = lambda path, label: None
    checkpoints: Callable[[], CheckpointStore] = _no_checkpoints
    lease_wait_s: float = 0.0
    embed: bool = False


@dataclass
class JobContext:
    """What a running job sees: its ``job`` and the daemon's ``services`` (no ``Daemon``).
    ``stop_event`` is set by cancel/shutdown/preemption with the reason in
    ``stop_reason``; ``on_change`` wakes attached clients."""

    job: Job
    services: JobServices
    on_change: Callable[[Job], None]
    stop_event: threading.Event = field(default_factory=threading.Event)
    stop_reason: StopReason | None = None
    waiting_for: str | None = None
    _last_save: float = 0.0

    # -- control ---------------------------------------------------------------------------

    def request_stop(self, reason: StopReason) -> None:
        if self.stop_reason is None or reason != "yield":
            self.stop_reason = reason
        self.stop_event.set()

    def check(self) -> None:
        """:raises JobStop: the job must stop now."""
        if self.stop_event.is_set() and self.stop_reason is not None:
            raise JobStop(self.stop_reason)

    # -- progress --------------------------------------------------------------------------

    def set_progress(self, **values: Any) -> None:
        self.job.progress.update(values)
        self._changed()

    def _changed(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_save >= 1.0:
            self._last_save = now
            self.services.save_progress(self.job.id, self.job.progress, self.waiting_for)
        self.on_change(self.job)

    @property
    def progress(self) -> _ProgressAdapter:
        return _ProgressAdapter(self)

    def event(self, kind: str, **data: Any) -> None:
        """Record a job event (e.g. ``gc``); best effort."""
        import contextlib

        from gitquarry.errors import JobStateWriteError

        with contextlib.suppress(JobStateWriteError):
            self.services.add_event(self.job.id, kind, data)

    def retarget(self, target: str) -> None:
        """Record the exact state this running job covers as its target."""
        self.services.retarget(self.job, target)

    # -- resources -------------------------------------------------------------------------

    def workspace(self) -> Workspace:
        """The job's workspace, configuration freshly loaded.

        :raises WorkspaceUnavailableError: its directory is gone or not readable.
        """
        return self.services.load_workspace(self.job.scope)

    @contextmanager
    def writer_lease(self, workspace: Workspace) -> Iterator[None]:
        """Hold ``workspace``'s writer lease, waiting ``[daemon] lease_wait_s`` at most; the
        holder shows in this job's ``waiting_for`` meanwhile.

        :raises WriterBusyError: still held after the wait (the runner re-queues the job).
        """
        def on_wait(holder: Any) -> None:
            self.waiting_for = holder.describe() if holder is not None else "another writer"
            self.set_progress(note=f"waiting for the writer lease ({self.waiting_for})")
            self._changed(force=True)

        with workspace.write_lock(
            wait_s=self.services.lease_wait_s,
            holder=f"daemon {self.job.public_id}",
            on_wait=on_wait,
        ):
            if self.waiting_for is not None:
                self.waiting_for = None
                self.set_progress(note=None)
            yield


class _ProgressAdapter:
    """The indexer's ``Progress`` protocol, feeding the job's progress and raising
    ``JobStop`` (from ``ctx.check``) when the job must stop."""

    def __init__(self, ctx: JobContext) -> None:
        self._ctx = ctx

    def phase(self, name: str, total: int | None) -> None:
        self._ctx.check()
        self._ctx.set_progress(phase=_public_phase(name), done=0, total=total)

    def advance(self, units: int) -> None:
        progress = self._ctx.job.progress
        progress["done"] = int(progress.get("done") or 0) + units
        self._ctx._changed()
        self._ctx.check()

    def note(self, message: str) -> None:
        self._ctx.check()


def _public_phase(name: str) -> str:
    """Phase names may carry a repository path (``"commits /x/y"``); keep the last part."""
    head, _, rest = name.partition(" ")
    if rest.startswith("/"):
        return f"{head} {Path(rest).name}"
    return name
