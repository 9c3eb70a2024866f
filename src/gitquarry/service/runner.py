"""The job runner: submission with coalescing, the worker loop, retries, cancellation.

Submission (``submit``) coalesces equivalent work on (type, scope, generation), and on the
target too for job types whose targets are distinct work (``distinct_targets``: a docs
revision set per commit, so a request for HEAD never retargets a queued job for a tag; only
an automatic request for the same moving revision name takes over a waiting automatic
job, as reconcile's HEAD does when HEAD moved before the job ran): a
queued or interrupted job absorbs the new request (taking its newer target); a failed job
awaiting its retry absorbs automatic requests (watcher, reconcile) and is run now by an
explicit one; a running job with the same target absorbs it; an automatic request whose work
key has a cancel tombstone, whose exact work last failed with an error that is not retryable
(a configuration error: it waits for its input, the commit or the settings, to change), or
whose work is already done (the job type's ``done`` test, which reads the index; by
default: the target equals the last success's), is dropped. Otherwise a new job is queued.

One worker thread runs jobs one at a time, lowest priority value first, oldest first. A job
that stops on writer contention goes back to ``queued`` (not a failure); a failure is retried
after ``retry_base_s × 2^(n−1)`` seconds, capped at ``retry_max_s``, keeping its public id;
a usage/configuration error is not retried. ``interrupted`` (daemon stopped or killed) is
resumed and never counts as a failure.

The runner sees the daemon only through what it is given: the job store, the
``JobServices`` it hands each job (and each type's ``target``/``done`` test), a
``scope_identity`` callable (a workspace scope's generation and name), ``redact_payload``
and the retry timings; a test builds one without a ``Daemon``.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from gitquarry.errors import (
    GitquarryError,
    IndexBusyError,
    InternalError,
    JobNotFoundError,
    JobSnapshotWriteError,
    JobStateWriteError,
)
from gitquarry.service.catalog import job_type
from gitquarry.service.job_store import ACTIVE, Job, StateStore
from gitquarry.service.jobs import JobContext, JobServices, JobStop, JobType, work_key

log = logging.getLogger(__name__)

#: origins of automatic submissions: these respect tombstones and retry backoff.
AUTO_ORIGINS = ("watch", "reconcile", "chain", "startup")
#: delay before a job that lost the writer lease tries again (seconds).
CONTENTION_RETRY_S = 1.0


def classify(exc: BaseException) -> GitquarryError:
    """The typed error for a job failure: gitquarry errors as they are, storage failures
    (disk full, I/O, read-only, corrupt) through the store's one translation, anything else
    as an internal error."""
    from gitquarry.store.connection import translate_storage_error

    typed = translate_storage_error(exc)
    if typed is not None:
        return typed
    return InternalError(exc)


def error_payload(err: GitquarryError, redact: Any) -> dict[str, Any]:
    retryable = bool(getattr(err, "retryable", err.exit_code != 2))
    return {"code": err.code, "message": redact(str(err)), "retryable": retryable}


def _follows(job: Job, auto: bool, params: dict[str, Any]) -> bool:
    """An automatic request for a moving revision (reconcile's ``HEAD``) may take over an
    automatic job waiting for the same revision name: HEAD moved on before it ran. An
    explicit request, or one for another revision, is other work."""
    return (auto and job.origin in AUTO_ORIGINS and "revision" in params
            and job.params.get("revision") == params.get("revision"))


def _failed_for_good(job: Job | None) -> bool:
    """The job failed with an error that is not retryable (no retry is scheduled)."""
    return (job is not None and job.status == "failed" and job.not_before is None
            and not (job.error or {}).get("retryable", True))


class Runner:
    """Owns the worker thread; all job state changes go through here.

    ``scope_identity(scope)`` -> (registration generation, name) of a workspace scope
    (raises ``InvalidArgumentError`` for one not watched); ``redact_payload`` strips
    absolute paths from a result; a failure is retried after ``retry_base_s × 2^(n−1)``
    seconds, at most ``retry_max_s``."""

    def __init__(self, state: StateStore, services: JobServices, *,
                 scope_identity: Callable[[str], tuple[int, str]],
                 redact_payload: Callable[[Any], Any] = lambda value: value,
                 retry_base_s: float = 60.0, retry_max_s: float = 3840.0) -> None:
        self.state = state
        self.services = services
        self._scope_identity = scope_identity
        self._redact_payload = redact_payload
        self.retry_base_s = retry_base_s
        self.retry_max_s = retry_max_s
        self._cond = threading.Condition(threading.RLock())
        self._submit_lock = threading.Lock()
        self._current: JobContext | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._cancels: dict[int, Future[Job]] = {}
        self._cancel_lock = threading.Lock()
        #: bumped on every job change; attach waits on ``changed``
        self.version = 0
        self.changed = threading.Condition()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="gitquarry-jobs", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        with self._cond:
            self._stopping = True
            if self._current is not None:
                self._current.request_stop("shutdown")
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def notify_change(self, job: Job | None = None) -> None:
        with self.changed:
            self.version += 1
            self.changed.notify_all()

    @property
    def current(self) -> JobContext | None:
        return self._current

    # -- submission ------------------------------------------------------------------------

    def submit(self, type_: str, scope: str, *, origin: str, target: str | None = None,
               params: dict[str, Any] | None = None, generation: int | None = None,
               name: str | None = None) -> Job | None:
        """Submit work; returns the job that will do it, or None when an automatic request
        was dropped (tombstoned or already done).

        :raises KeyError: unknown job type. :raises JobStateWriteError: not recorded.
        :raises WorkspaceUnavailableError: computing the target needs the workspace.
        """
        jt = job_type(type_)
        if generation is None:  # a workspace scope
            generation, ws_name = self._scope_identity(scope)
            params = {"workspace": ws_name, **(params or {})}
        else:
            params = {"workspace": name or scope, **(params or {})}
        if target is None:
            target = jt.target(self.services, scope) if jt.target is not None else ""
        key = work_key(type_, scope, generation, target)
        auto = origin in AUTO_ORIGINS
        with self._submit_lock, self._cond:
            if auto and self.state.tombstoned(key):
                return None
            if auto and _failed_for_good(self.state.latest_for_key(key)):
                return None  # a configuration failure waits for its input to change
            open_jobs = self.state.open_jobs(type_, scope, generation)
            if jt.distinct_targets:
                open_jobs = [j for j in open_jobs if j.target == target or (
                    _follows(j, auto, params) and j.status != "running")]
            for job in open_jobs:
                if job.status in ("queued", "interrupted"):
                    job.target, job.work_key = target, key
                    job.coalesced += 1
                    if not auto:
                        job.not_before = None
                    self.state.update(job, action="the coalesced job")
                    self._wake(job)
                    return job
            for job in open_jobs:
                if job.status == "failed":  # awaiting its retry
                    job.target, job.work_key = target, key
                    job.coalesced += 1
                    if not auto:
                        job.status, job.not_before = "queued", None
                    self.state.update(job, action="the coalesced job")
                    self._wake(job)
                    return job
            running = [j for j in open_jobs if j.status == "running"]
            for job in running:
                if job.target == target:
                    job.coalesced += 1
                    self.state.update(job, action="the coalesced job")
                    return job
            if auto and not running and self._done(jt, scope, generation, target):
                return None
            now = time.time()
            job = self.state.insert(Job(
                id=0, type=type_, scope=scope, generation=generation, target=target,
                work_key=key, params=params, status="queued", origin=origin,
                priority=jt.priority, created_at=now, updated_at=now,
            ))
            log.info("%s queued: %s %s (%s)", job.public_id, type_, params.get("workspace"),
                     origin)
            self._wake(job)
            return job

    def _done(self, jt: JobType, scope: str, generation: int, target: str) -> bool:
        """Whether the work ``target`` names is already done (the type's ``done`` test;
        default: the last success has the same target). A test that cannot read the state
        says not done: running the job is the safe side."""
        last = self.state.last_succeeded(jt.name, scope, generation,
                                         target=target if jt.distinct_targets else None)
        if jt.done is None:
            return last is not None and last.target == target
        try:
            return jt.done(self.services, scope, target, last)
        except (GitquarryError, sqlite3.Error, OSError) as exc:
            log.info("%s %s: cannot tell whether done (%s); submitting", jt.name, scope, exc)
            return False

    def _wake(self, job: Job) -> None:
        current = self._current
        if (
            current is not None and current.job.id != job.id
            and job.priority < current.job.priority and job_type(current.job.type).yields
        ):
            current.request_stop("yield")
        self._cond.notify_all()
        self.notify_change(job)

    def retarget(self, job: Job, target: str) -> None:
        """A running job found the exact state it covers; record it as its target."""
        if target == job.target:
            return
        job.target = target
        job.work_key = work_key(job.type, job.scope, job.generation, target)
        self.state.update(job, only_if_status=("running",), action="the job's target")

    # -- the worker ------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                if self._stopping:
                    return
                job, due = self.state.next_runnable(time.time())
                if job is None:
                    wait = 60.0 if due is None else max(0.01, min(60.0, due - time.time()))
                    self._cond.wait(wait)
                    continue
                job.status = "running"
                job.runs += 1
                job.started_at = time.time()
                job.finished_at = None
                job.not_before = None
                job.waiting_for = None
                job.progress = {}
                try:
                    ok = self.state.update(
                        job, only_if_status=("queued", "interrupted", "failed"),
                        action="the job start",
                    )
                except JobStateWriteError as exc:
                    log.error("cannot start %s: %s", job.public_id, exc)
                    self._cond.wait(1.0)
                    continue
                if not ok:
                    continue
                ctx = JobContext(job=job, services=self.services, on_change=self.notify_change)
                self._current = ctx
            self.notify_change(job)
            try:
                self._run(ctx)
            except Exception:  # never let the worker die
                log.exception("%s: unexpected error finishing the job", job.public_id)
            finally:
                with self._cond:
                    self._current = None
                self.notify_change(job)

    def _run(self, ctx: JobContext) -> None:
        from gitquarry.store.lease import current_holder

        outer = current_holder.get()
        try:
            self._run_job(ctx)
        finally:
            current_holder.set(outer)

    def _run_job(self, ctx: JobContext) -> None:
        job = ctx.job
        jt = job_type(job.type)
        log.info("%s running (%s, attempt %d)", job.public_id, job.type, job.attempts + 1)
        from gitquarry.store.lease import current_holder

        current_holder.set(f"daemon {job.public_id}")
        try:
            result = jt.run(ctx)
        except JobStop as stop:
            self._stopped(job, stop.reason)
            return
        except IndexBusyError as exc:  # the writer lease (or a docs cache) is held
            job.status = "queued"
            job.not_before = time.time() + CONTENTION_RETRY_S
            job.waiting_for = getattr(exc, "holder", "") or "another writer"
            job.progress["note"] = f"waiting for the writer lease ({job.waiting_for})"
            self._final(job, f"{job.public_id} re-queued: writer busy ({job.waiting_for})")
            return
        except Exception as exc:
            self._failed(job, exc)
            return
        job.status = "superseded" if result.pop("job_status", None) == "superseded" \
            else "succeeded"
        job.finished_at = time.time()
        job.result = self._redact_payload(result)
        job.error = None
        job.progress.pop("note", None)
        self._final(job, f"{job.public_id} {job.status}")
        if job.status == "succeeded":
            self._supersede_older(job)

    def _stopped(self, job: Job, reason: str) -> None:
        if reason == "cancelled":
            job.status, job.finished_at = "cancelled", time.time()
        elif reason == "shutdown":
            job.status = "interrupted"
        else:  # yield: back in the queue behind the more urgent job
            job.status = "queued"
        self._final(job, f"{job.public_id} {job.status} ({reason})")

    def _failed(self, job: Job, exc: BaseException) -> None:
        err = classify(exc)
        payload = error_payload(err, self.services.redact)
        if isinstance(err, InternalError):
            log.error("%s failed", job.public_id, exc_info=exc)
        job.attempts += 1
        job.status = "failed"
        job.finished_at = time.time()
        job.error = payload
        if payload["retryable"]:
            delay = min(self.retry_base_s * (2 ** (job.attempts - 1)), self.retry_max_s)
            job.not_before = time.time() + delay
        else:
            job.not_before = None
        self._final(job, f"{job.public_id} failed ({err.code}): {payload['message']}")

    def _final(self, job: Job, message: str) -> None:
        log.info("%s", message)
        try:
            # a job cancelled meanwhile keeps its cancelled status
            self.state.update(job, only_if_status=("running",), action="the job's result")
        except JobStateWriteError as exc:
            log.error("%s: could not record the outcome: %s", job.public_id, exc)

    def _supersede_older(self, done: Job) -> None:
        distinct = job_type(done.type).distinct_targets
        for job in self.state.open_jobs(done.type, done.scope, done.generation):
            if distinct and job.target != done.target:
                continue  # other work (another commit's set), not an older try of this one
            if job.status == "failed" and job.id != done.id:
                job.status, job.not_before = "superseded", None
                job.finished_at = time.time()
                with contextlib.suppress(JobStateWriteError):
                    self.state.update(job, only_if_status=("failed",))

    # -- reading ---------------------------------------------------------------------------

    def snapshot(self, job_id: int) -> Job:
        """The job with live progress when it is running. :raises JobNotFoundError."""
        from gitquarry.service.job_store import public_id

        job = self.state.get(job_id)
        if job is None:
            raise JobNotFoundError(public_id(job_id))
        current = self._current
        if current is not None and current.job.id == job_id:
            job = replace(job, progress=dict(current.job.progress),
                          waiting_for=current.waiting_for)
        return job

    # -- cancellation ----------------------------------------------------------------------

    def cancel(self, job_id: int) -> Job:
        """Cancel a job: commit its tombstone (only then is the cancel acknowledged), signal
        its worker, then record ``cancelled``. Concurrent calls share one resolution.

        :raises JobNotFoundError: no such job.
        :raises JobStateWriteError: the tombstone could not be committed (nothing changed;
            the worker keeps running).
        :raises JobSnapshotWriteError: tombstone committed and worker signalled, but the
            job's status could not be written (a restart reconstructs it).
        """
        with self._cancel_lock:
            future = self._cancels.get(job_id)
            owner = future is None
            if future is None:
                future = Future()
                self._cancels[job_id] = future
        if not owner:
            return future.result()
        try:
            job = self._cancel(job_id)
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            future.set_result(job)
            return job
        finally:
            with self._cancel_lock:
                self._cancels.pop(job_id, None)

    def _cancel(self, job_id: int) -> Job:
        from gitquarry.service.job_store import public_id

        with self._cond:
            job = self.state.get(job_id)
            if job is None:
                raise JobNotFoundError(public_id(job_id))
            if job.terminal:
                return job
            self.state.write_tombstone(job)  # the acknowledgement point
            current = self._current
            if current is not None and current.job.id == job_id:
                current.request_stop("cancelled")
            job.status, job.finished_at, job.not_before = "cancelled", time.time(), None
            try:
                self.state.update(job, only_if_status=(*ACTIVE, "failed"),
                                  action="the cancelled status")
            except JobStateWriteError as exc:
                raise JobSnapshotWriteError(job.public_id, exc.detail) from exc
            log.info("%s cancelled", job.public_id)
            self._cond.notify_all()
        self.notify_change(job)
        return self.state.get(job_id) or job
