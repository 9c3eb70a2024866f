"""``gitquarry jobs list|show|attach|cancel``: the daemon's durable jobs."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from gitquarry.cli.common import (
    Command,
    Group,
    JsonOption,
    note,
    out,
    print_json,
    printable,
    stderr,
)

jobs_app = typer.Typer(name="jobs", help="List, inspect, follow and cancel daemon jobs.",
                       no_args_is_help=True, cls=Group)

JobIdArg = Annotated[str, typer.Argument(help="Job id, e.g. job-000001.", metavar="JOB_ID")]


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S") if ts else "-"


def _progress_text(job: dict[str, Any]) -> str:
    p = job.get("progress") or {}
    if not p.get("phase"):
        return p.get("note") or ""
    total = p.get("total")
    count = f"{p.get('done', 0):,}/{total:,}" if total else f"{p.get('done', 0):,}"
    return f"{p['phase']} {count}" + (f" ({p['note']})" if p.get("note") else "")


class PlainProgress:
    """Progress of a followed job as plain lines, for stderr off a terminal (piped, CI, a
    log), where the progress bar shows nothing: one line when the job's status or phase
    changes, otherwise at most one every ``interval_s`` seconds (``GITQUARRY_PROGRESS_INTERVAL``,
    as ``gitquarry index``'s progress lines) while its count moves.
    """

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._key: tuple[Any, ...] | None = None
        self._count: tuple[Any, ...] | None = None
        self._at = 0.0

    def line(self, job: dict[str, Any], now: float) -> str | None:
        """The line to print for this update of ``job`` at ``now`` (seconds, monotonic), or
        None when it says nothing new: ``progress: JOB STATUS[: PHASE DONE/TOTAL]``."""
        p = job.get("progress") or {}
        key = (job.get("status"), p.get("phase") or p.get("note"))
        count = (p.get("done"), p.get("total"))
        if key == self._key and (count == self._count or now - self._at < self.interval_s):
            return None
        self._key, self._count, self._at = key, count, now
        detail = _progress_text(job)
        return printable(f"progress: {job['id']} {job['status']}"
                         + (f": {detail}" if detail else ""))


def job_line(job: dict[str, Any]) -> str:
    extra = ""
    if job.get("error"):
        extra = f"  {job['error']['code']}: {job['error']['message']}"
        if job.get("next_attempt_at"):
            extra += f" (retry at {_when(job['next_attempt_at'])})"
    elif job["status"] == "running":
        extra = f"  {_progress_text(job)}"
    return printable(
        f"{job['id']}  {job['status']:<11} {job['type']:<14} {job.get('workspace', '-')}"
        f"  {_when(job['created_at'])}{extra}"
    )


def _client() -> Any:
    from gitquarry.service.client import connect

    return connect(wait_for_socket_s=None)


@jobs_app.command(cls=Command, name="list")
def list_cmd(
    status: Annotated[str | None, typer.Option(
        "--status", metavar="STATUS", help="Only jobs in this status: queued, running, "
        "interrupted, succeeded, superseded, failed or cancelled.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many (1-1000).",
                                       min=1, max=1000)] = 20,
    as_json: JsonOption = False,
) -> None:
    """List jobs, newest first."""
    from gitquarry.service.job_store import check_status

    check_status(status)  # a usage error before the daemon is looked for
    result = _client().call("jobs.list", status=status, limit=limit)
    if as_json:
        print_json(result)
        return
    if not result["jobs"]:
        out("No jobs.")
    for job in result["jobs"]:
        out(job_line(job))


@jobs_app.command(cls=Command, name="show")
def show_cmd(job_id: JobIdArg, as_json: JsonOption = False) -> None:
    """Show one job: status, attempts, progress, result or error, events."""
    from gitquarry.service.job_store import check_job_id

    check_job_id(job_id)  # a usage error before the daemon is looked for
    result = _client().call("jobs.show", id=job_id)
    if as_json:
        print_json(result)
        return
    job = result["job"]
    out(job_line(job))
    out(f"  origin {job['origin']}, attempts {job['attempts']}, runs {job['runs']}, "
                 f"coalesced {job['coalesced']}, started {_when(job['started_at'])}, "
                 f"finished {_when(job['finished_at'])}")
    if job.get("waiting_for"):
        out(f"  waiting for the writer lease: {job['waiting_for']}")
    if job.get("result"):
        import json

        out("  result: " + json.dumps(job["result"], ensure_ascii=False))
    for event in result.get("events") or []:
        out(printable(f"  event {event['kind']}: {event['data']}"))


def attach(job_id: str, *, as_json: bool, timeout_s: float | None = None,
           quiet: bool = False) -> int:
    """Follow a job until it finishes, with a progress bar on stderr. Ctrl-C detaches.
    Returns the exit code (0 succeeded, 1 failed or cancelled, 130 detached)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from gitquarry.cli.progress import progress_interval
    from gitquarry.service.client import connect
    from gitquarry.service.job_store import check_job_id

    check_job_id(job_id)  # a usage error before the daemon is looked for
    client = connect(wait_for_socket_s=None)
    final: dict[str, Any] | None = None
    args: dict[str, Any] = {"id": job_id}
    if timeout_s is not None:
        args["timeout_s"] = timeout_s
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    # off a terminal the bar prints nothing (a silent wait): plain lines instead
    plain = (PlainProgress(progress_interval())
             if not (quiet or as_json or stderr.is_terminal) else None)
    try:
        with Progress(*columns, console=stderr, transient=True,
                      disable=quiet or as_json) as bar:
            task = bar.add_task(job_id, total=None)
            for payload in client.stream("jobs.attach", **args):
                job = payload["result"]["job"]
                p = job.get("progress") or {}
                bar.update(task, description=printable(
                    f"{job['id']} {job['status']} {p.get('phase') or p.get('note') or ''}"),
                    total=p.get("total"), completed=p.get("done") or 0)
                line = plain.line(job, time.monotonic()) if plain is not None else None
                if line is not None and not payload.get("final"):
                    note(line)
                if payload.get("final"):
                    final = payload["result"]
    except KeyboardInterrupt:
        note(f"Detached; {job_id} goes on in the daemon. Re-attach with "
                     f"`gitquarry jobs attach {job_id}`.")
        return 130
    assert final is not None
    job = final["job"]
    if as_json:
        print_json(final)
    else:
        out(job_line(job))
        if not final["finished"]:
            note(f"{job_id} is still {job['status']}; re-attach with `gitquarry jobs "
                         f"attach {job_id}`.")
    if not final["finished"]:
        return 0
    return 0 if job["status"] == "succeeded" else 1


@jobs_app.command(cls=Command, name="attach")
def attach_cmd(
    job_id: JobIdArg,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", help="Stop following after this many seconds (the job goes on).",
        min=0)] = None,
    as_json: JsonOption = False,
) -> None:
    """Follow a job's progress until it finishes; Ctrl-C detaches (the job goes on)."""
    raise typer.Exit(attach(job_id, as_json=as_json, timeout_s=timeout))


@jobs_app.command(cls=Command, name="cancel")
def cancel_cmd(job_id: JobIdArg, as_json: JsonOption = False) -> None:
    """Cancel a job; acknowledged once the cancellation is durably recorded."""
    from gitquarry.service.job_store import check_job_id

    check_job_id(job_id)
    result = _client().call("jobs.cancel", id=job_id)
    if as_json:
        print_json(result)
        return
    job = result["job"]
    if result["already_finished"]:
        out(f"{job['id']} had already finished ({job['status']}).")
    else:
        out(f"Cancelled {job['id']}.")


def submit_docs_index(selector: dict[str, Any], *, revision: str | None,
                      include_worktree: bool, detach: bool, quiet: bool,
                      as_json: bool) -> int:
    """``repo-docs index`` through the daemon: submit (starting the daemon if needed), then
    follow the job unless ``detach``. Returns the exit code.

    :raises DaemonUnavailableError: no daemon can run here (says to use --foreground).
    :raises RepoDocsRegistrationError: (and the others of ``check_docs_selector``) before
        any daemon is started.
    """
    from gitquarry.errors import DaemonUnavailableError
    from gitquarry.service.client import start_daemon
    from gitquarry.service.docs_jobs import check_docs_selector

    check_docs_selector(selector)  # an unknown repository starts no daemon
    try:
        client, _ = start_daemon()
    except DaemonUnavailableError as exc:
        raise DaemonUnavailableError(
            f"{exc.reason}; run `gitquarry repo-docs index --foreground` to index in this "
            "process") from exc
    result = client.call("docs.submit", **selector, revision=revision,
                         include_worktree=include_worktree)
    job = result["job"]
    if detach:
        if as_json:
            print_json(result)
        else:
            out(f"Submitted {job['id']} ({job['status']}); follow it with `gitquarry jobs "
                f"attach {job['id']}`.")
        return 0
    return attach(job["id"], as_json=as_json, quiet=quiet)


def register(app: typer.Typer) -> None:
    app.add_typer(jobs_app, name="jobs")
