"""``gitquarry daemon run|start|stop|status|watch|unwatch``: the per-user indexing daemon."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from gitquarry.cli.common import (
    Command,
    Group,
    JsonOption,
    hint,
    note,
    out,
    print_json,
    printable,
    warn,
)

daemon_app = typer.Typer(
    name="daemon",
    help="The per-user daemon that watches workspaces and runs indexing jobs.",
    no_args_is_help=True,
    cls=Group,
)


def _when(ts: float | None) -> str:
    if not ts:
        return "never"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@daemon_app.command(cls=Command, name="run")
def run_cmd(
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also write the log to stderr (e.g. for the journal).")] = False,
) -> None:
    """Run the daemon in the foreground (for systemd, launchd or a terminal)."""
    import logging

    from gitquarry.cli import daemon_docs, daemon_search
    from gitquarry.service.daemon import Daemon
    from gitquarry.web import WebService

    if verbose:
        logging.getLogger().setLevel(logging.INFO)
    from gitquarry.history.search import phrase_cache

    phrase_cache.enable()  # a long-lived process: keyword terms kept per index state
    from gitquarry.embedding.process_kind import mark_long_lived

    mark_long_lived()  # the optimised ONNX session from the first text on
    # the web page, hosted on request; the CLI's own search answers (thin client)
    daemon = Daemon(log_stderr=verbose, web=WebService,
                    answer_ops={**daemon_search.OPS, **daemon_docs.OPS})

    def ready() -> None:
        import os

        note(f"gitquarry daemon running (pid {os.getpid()}); Ctrl-C stops it.")

    raise typer.Exit(daemon.run(on_ready=ready))


@daemon_app.command(cls=Command, name="start")
def start_cmd(as_json: JsonOption = False) -> None:
    """Start the daemon in the background (does nothing when one already runs)."""
    from gitquarry.service.client import start_daemon

    client, started = start_daemon()
    info = client.call("ping")
    if as_json:
        print_json({"started": started, **info})
        return
    verb = "Started the gitquarry daemon" if started else "The gitquarry daemon is already running"
    out(f"{verb} (pid {info['pid']}).")


@daemon_app.command(cls=Command, name="stop")
def stop_cmd(as_json: JsonOption = False) -> None:
    """Stop the daemon; a running job is left interrupted and resumes at the next start."""
    from gitquarry.service.client import stop_daemon

    pid = stop_daemon()
    if as_json:
        print_json({"stopped": pid is not None, "pid": pid})
        return
    out(f"Stopped the gitquarry daemon (pid {pid})." if pid
                 else "No gitquarry daemon was running.")


def _print_status(data: dict[str, Any]) -> None:
    d = data["daemon"]
    out(f"Daemon:  pid {d['pid']}, version {d['version']}, up {d['uptime_s']:.0f} s, "
                 f"debounce {d['debounce_s']:g} s, reconcile every {d['reconcile_s']:g} s")
    counts = ", ".join(f"{n} {s}" for s, n in sorted(data["jobs"].items())) or "none"
    out(f"Jobs:    {counts}; active: {data['active_job'] or '-'}")
    workspaces = data["workspaces"]
    if not workspaces:
        out("Watching nothing; add a workspace with `gitquarry daemon watch PATH`.")
    for ws in workspaces:
        state = ws["state"] + (f" ({ws['unavailable_reason']})" if ws["unavailable_reason"]
                               else f", {ws['watch_mode']} watches")
        out(f"{ws['workspace_ref']}  {printable(ws['name'])}  {state}")
        if ws.get("watch_warning"):
            warn(f"{ws['name']}: {ws['watch_warning']}")
        writer = ws.get("writer")
        pending = ", ".join(ws["pending_jobs"]) or ("changes settling" if ws["pending_events"]
                                                    else "none")
        who = f"{writer['holder']} (pid {writer['pid']})" if writer else "-"
        out(f"  active job {ws['active_job'] or '-'}; pending {pending}; writer {who}; "
            f"next reconcile {_when(ws['next_reconcile_at'])}")
        for repo in ws["repositories"]:
            commit = (repo["last_indexed_commit"] or "-")[:12]
            out(f"  {printable(repo['name'])}: last indexed commit {commit} at "
                         f"{_when(repo['last_indexed_at'])}")


@daemon_app.command(cls=Command, name="status")
def status_cmd(as_json: JsonOption = False) -> None:
    """Show the daemon, its jobs and, per watched repository, the last indexed commit,
    pending work, the active job, the writer and the next reconcile time."""
    from gitquarry.service.client import connect

    data = connect(wait_for_socket_s=None).call("status")
    if as_json:
        print_json(data)
    else:
        _print_status(data)


@daemon_app.command(cls=Command, name="watch")
def watch_cmd(
    path: Annotated[Path, typer.Argument(help="Workspace directory to watch and index.",
                                         metavar="PATH", file_okay=False,
                                         show_default=False)],
    as_json: JsonOption = False,
) -> None:
    """Register a workspace: its repositories are indexed now and after every change to
    their refs (the daemon is started if none runs)."""
    result = watch_workspace(path)
    if as_json:
        print_json(result)
        return
    job = result.get("job") or {}
    out(f"Watching {printable(result['name'])} ({result['workspace_ref']}); "
                 f"{job.get('id', 'no job')} {job.get('status', '')}.".rstrip())
    hint("`gitquarry daemon status` shows what it indexed and what is pending"
         + (f"; `gitquarry jobs attach {job['id']}` follows this job" if job.get("id") else ""))


def watch_workspace(path: Path) -> dict[str, Any]:
    """Start the daemon if needed and register ``path``. :raises InvalidArgumentError."""
    from gitquarry.errors import InvalidArgumentError
    from gitquarry.service.client import start_daemon

    root = path.expanduser()
    if not root.is_dir():
        raise InvalidArgumentError("PATH", f"{path} is not a directory")
    client, _ = start_daemon()
    result: dict[str, Any] = client.call("watch", path=str(root.resolve()))
    return result


@daemon_app.command(cls=Command, name="unwatch")
def unwatch_cmd(
    workspace: Annotated[str, typer.Argument(help="Workspace ref (ws-…), name or path.",
                                             metavar="WORKSPACE")],
    as_json: JsonOption = False,
) -> None:
    """Stop watching a workspace (its index stays)."""
    from gitquarry.service.client import connect

    ref = workspace
    if Path(workspace).expanduser().is_dir():
        ref = str(Path(workspace).expanduser().resolve())
    result = connect(wait_for_socket_s=None).call("unwatch", workspace=ref)
    if as_json:
        print_json(result)
    else:
        out(f"Stopped watching {result['workspace_ref']}.")


def register(app: typer.Typer) -> None:
    app.add_typer(daemon_app, name="daemon")
