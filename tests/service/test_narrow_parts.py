"""Issue 23 §2: the daemon's parts are built and tested alone, each from the few callables
it uses, with no ``Daemon``: a job from a ``JobContext`` over ``JobServices``, the runner
from a job store and those services, the coordinator from a job store and a ``submit``.
Real git repositories, real SQLite job stores and indexes; the recorders below stand in
only for the daemon's other parts."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gitquarry.config import DaemonConfig, load_config
from gitquarry.errors import InvalidArgumentError, UsageError
from gitquarry.service import jobs
from gitquarry.service.coordinator import Coordinator, workspace_ref
from gitquarry.service.job_store import Job, StateStore
from gitquarry.service.job_types import HISTORY_EMBED, HISTORY_INDEX, run_history_index
from gitquarry.service.jobs import JobContext, JobServices, JobStop, JobType
from gitquarry.service.runner import Runner
from gitquarry.store.lease import read_holder
from gitquarry.workspace import Workspace

from .conftest import commit, make_repo


@pytest.fixture
def state(tmp_path: Path) -> Iterator[StateStore]:
    store = StateStore(tmp_path / "state.db")
    yield store
    store.close()


def _job(state: StateStore, scope: str, type_: str = HISTORY_INDEX) -> Job:
    now = time.time()
    return state.insert(Job(id=0, type=type_, scope=scope, generation=1, target="t0",
                            work_key=f"{type_}:{scope}:1:t0", params={"workspace": "w"},
                            status="running", origin="cli", priority=10, created_at=now,
                            updated_at=now))


class Calls:
    """What a part asked of the daemon's other parts, in order."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def __call__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> None:
            self.items.append((name, *args, *sorted(kwargs.items())))
        return record

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [c for c in self.items if c[0] == name]


def _services(state: StateStore, calls: Calls, workspace: Workspace | None = None,
              **overrides: Any) -> JobServices:
    def load(scope: str) -> Workspace:
        assert workspace is not None
        return workspace

    fields: dict[str, Any] = {
        "load_workspace": load,
        "save_progress": state.save_progress,
        "add_event": state.add_event,
        "submit": calls("submit"),
        "retarget": lambda job, target: calls("retarget")(job.id, target),
        "refs_fingerprint": lambda scope: "fingerprint-of-" + scope,
        "after_history_index": lambda scope, ws: calls("after_history_index")(scope),
        "redact": lambda text: text.replace(str(workspace.root) if workspace else "\0",
                                            "<ws>"),
        "embed": True,
    }
    fields.update(overrides)
    return JobServices(**fields)


# -- a job, from a JobContext without the daemon -------------------------------------------


def test_history_index_job_runs_from_a_job_context_without_a_daemon(
    service_env: dict[str, str], tmp_path: Path, state: StateStore
) -> None:
    repo = make_repo(tmp_path / "repo", commits=4)
    config = load_config(repo)
    # a workspace that embeds (the job only chains the embed job; nothing is embedded here)
    config = replace(config, embedding=replace(config.embedding, provider="fake"))
    ws = Workspace(root=repo, config=config)
    calls = Calls()
    job = _job(state, "ws-a")
    changes: list[int] = []
    ctx = JobContext(job=job, services=_services(state, calls, ws),
                     on_change=lambda j: changes.append(j.id))
    result = run_history_index(ctx)
    assert result["new_commits"] == 4 and result["total_commits"] == 4
    assert [r["name"] for r in result["repositories"]] == ["repo"]
    # the job asked the daemon's parts for exactly this, through its services
    assert calls.named("retarget") == [("retarget", job.id, "fingerprint-of-ws-a")]
    assert calls.named("after_history_index") == [("after_history_index", "ws-a")]
    assert calls.named("submit") == [("submit", HISTORY_EMBED, "ws-a", ("origin", "chain"))]
    assert changes and set(changes) == {job.id}
    saved = state.get(job.id)
    assert saved is not None and saved.progress.get("phase")  # saved through the services
    assert read_holder(ws.index_dir / "index.lock") is None  # the lease was let go
    # the same job again: nothing new, and no embed chained when the daemon does not embed
    ws = Workspace(root=repo, config=load_config(repo))
    calls2 = Calls()
    ctx2 = JobContext(job=_job(state, "ws-a"), services=_services(state, calls2, ws,
                                                                 embed=False),
                      on_change=lambda j: None)
    again = run_history_index(ctx2)
    assert again["new_commits"] == 0 and again["total_commits"] == 4
    assert calls2.named("submit") == []


def test_a_cancelled_job_context_stops_the_job_at_its_first_progress_point(
    service_env: dict[str, str], tmp_path: Path, state: StateStore
) -> None:
    repo = make_repo(tmp_path / "repo", commits=3)
    ws = Workspace(root=repo, config=load_config(repo))
    ctx = JobContext(job=_job(state, "ws-b"), services=_services(state, Calls(), ws),
                     on_change=lambda j: None)
    ctx.request_stop("cancelled")
    with pytest.raises(JobStop) as stopped:
        run_history_index(ctx)
    assert stopped.value.reason == "cancelled"
    assert read_holder(ws.index_dir / "index.lock") is None


def test_a_job_waits_for_the_writer_lease_as_long_as_its_services_say(
    service_env: dict[str, str], tmp_path: Path, state: StateStore
) -> None:
    from gitquarry.errors import WriterBusyError

    repo = make_repo(tmp_path / "repo", commits=1)
    ws = Workspace(root=repo, config=load_config(repo))
    ctx = JobContext(job=_job(state, "ws-c"),
                     services=_services(state, Calls(), ws, lease_wait_s=0.3),
                     on_change=lambda j: None)
    with ws.write_lock(wait_s=0, holder="cli index"):
        started = time.monotonic()
        with pytest.raises(WriterBusyError, match="cli index"), ctx.writer_lease(ws):
            pass
        waited = time.monotonic() - started
    assert 0.3 <= waited < 10.0
    assert ctx.waiting_for is not None and "cli index" in ctx.waiting_for


# -- the runner, from a job store and services ---------------------------------------------


@pytest.fixture
def test_types() -> Iterator[list[dict[str, Any]]]:
    """Two job types registered for one test (and removed after it)."""
    seen: list[dict[str, Any]] = []

    def echo(ctx: JobContext) -> dict[str, Any]:
        seen.append(dict(ctx.job.params))
        ctx.set_progress(phase="echo", done=1, total=1)
        return {"path": "/secret/place", "scope": ctx.job.scope}

    def boom(ctx: JobContext) -> dict[str, Any]:
        from gitquarry.errors import GitError

        raise GitError(["log"], 128, "fatal: broken in /secret/place")

    jobs.register_job_type(JobType(name="test_echo", priority=5, run=echo,
                                   target=lambda services, scope: f"target-{scope}"))
    jobs.register_job_type(JobType(name="test_boom", priority=5, run=boom))
    yield seen
    for name in ("test_echo", "test_boom"):
        jobs._JOB_TYPES.pop(name, None)


def _wait(predicate: Any, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_runner_runs_coalesces_and_retries_without_a_daemon(
    state: StateStore, test_types: list[dict[str, Any]]
) -> None:
    calls = Calls()
    identities: list[str] = []

    def identity(scope: str) -> tuple[int, str]:
        identities.append(scope)
        if scope != "ws-x":
            raise InvalidArgumentError("workspace", f"{scope} is not a watched workspace")
        return 3, "x"

    def redact_payload(value: Any) -> Any:
        return {k: (v.replace("/secret", "<s>") if isinstance(v, str) else v)
                for k, v in value.items()}

    services = _services(state, calls, redact=lambda t: t.replace("/secret", "<s>"))
    runner = Runner(state, services, scope_identity=identity, redact_payload=redact_payload,
                    retry_base_s=0.25, retry_max_s=0.5)
    with pytest.raises(InvalidArgumentError):
        runner.submit("test_echo", "ws-gone", origin="cli")
    # two requests before the worker starts: one job (the second coalesces)
    first = runner.submit("test_echo", "ws-x", origin="cli")
    second = runner.submit("test_echo", "ws-x", origin="watch")
    assert first is not None and second is not None and first.id == second.id
    assert first.generation == 3 and first.target == "target-ws-x"
    runner.start()
    try:
        _wait(lambda: runner.snapshot(first.id).status == "succeeded")
        done = runner.snapshot(first.id)
        assert done.result == {"path": "<s>/place", "scope": "ws-x"}
        assert done.coalesced == 1 and test_types == [{"workspace": "x"}]
        # an automatic request for finished work is dropped (same target as the success)
        assert runner.submit("test_echo", "ws-x", origin="reconcile") is None
        # a failure is retried after retry_base_s, keeping its public id
        failed = runner.submit("test_boom", "ws-x", origin="cli")
        assert failed is not None
        _wait(lambda: runner.snapshot(failed.id).attempts >= 1)
        row = runner.snapshot(failed.id)
        assert row.error is not None and row.error["code"] == "git_failed"
        assert row.error["retryable"] is True
        assert "/secret" not in row.error["message"] and "place" in row.error["message"]
        _wait(lambda: runner.snapshot(failed.id).attempts >= 2)
        assert runner.snapshot(failed.id).public_id == failed.public_id
        cancelled = runner.cancel(failed.id)
        assert cancelled.status == "cancelled" and state.tombstoned(cancelled.work_key)
    finally:
        runner.stop(timeout_s=10)
    assert identities.count("ws-x") >= 3


# -- the coordinator, from a job store and a submit ----------------------------------------


def test_coordinator_watches_fingerprints_and_reconciles_without_a_daemon(
    service_env: dict[str, str], tmp_path: Path, state: StateStore
) -> None:
    repo = make_repo(tmp_path / "repo", commits=2)
    hooks: list[str] = []
    redactions: dict[str, str] = {}
    submitted: list[tuple[str, str, str]] = []

    def submit(type_: str, scope: str, *, origin: str, target: str | None = None) -> None:
        submitted.append((type_, scope, origin))

    coordinator = Coordinator(
        state, DaemonConfig(debounce_s=0.1, reconcile_s=3600, poll_s=0.2),
        submit=submit, add_redaction=lambda path, label: redactions.update({path: label}),
        current_job=lambda: None, reconcile_hooks=[lambda: hooks.append("docs")],
    )
    try:
        ws, _ = coordinator.watch(str(repo))
        ref = workspace_ref(repo.resolve())
        assert ws.ref == ref and ws.name == "repo"
        assert submitted == [(HISTORY_INDEX, ref, "watch-request")]
        assert redactions == {str(repo.resolve()): "<workspace repo>"}
        assert coordinator.resolve_ref(str(repo)) == ref == coordinator.resolve_ref("repo")
        with pytest.raises(InvalidArgumentError):
            coordinator.resolve_ref(str(tmp_path / "elsewhere"))
        before = coordinator.refs_fingerprint(ref)
        assert before == coordinator.refs_fingerprint(ref)
        commit(repo, "one more")
        assert coordinator.refs_fingerprint(ref) != before
        coordinator.reconcile_all()
        assert hooks == ["docs"]
        assert (HISTORY_INDEX, ref, "reconcile") in submitted
        status = coordinator.status()
        assert [s["workspace_ref"] for s in status] == [ref]
        assert status[0]["active_job"] is None and status[0]["state"] == "watching"
        assert [r["name"] for r in status[0]["repositories"]] == ["repo"]
        assert coordinator.unwatch(ref) is True and coordinator.status() == []
    finally:
        coordinator.stop()


def test_coordinator_turns_a_commit_into_a_debounced_history_submit(
    service_env: dict[str, str], tmp_path: Path, state: StateStore
) -> None:
    repo = make_repo(tmp_path / "repo", commits=1)
    submitted: list[tuple[str, str]] = []
    arrived = threading.Event()

    def submit(type_: str, scope: str, *, origin: str, target: str | None = None) -> None:
        submitted.append((type_, origin))
        if origin == "watch":
            arrived.set()

    coordinator = Coordinator(state, DaemonConfig(debounce_s=0.2, reconcile_s=3600,
                                                  poll_s=0.2), submit=submit)
    try:
        coordinator.watch(str(repo))
        assert submitted == [(HISTORY_INDEX, "watch-request")]
        commit(repo, "one more")
        assert arrived.wait(30), "no job submitted after the commit settled"
        assert {s for s in submitted if s[1] == "watch"} == {(HISTORY_INDEX, "watch")}
    finally:
        coordinator.stop()


# -- the daemon hosts the web page through a hook ------------------------------------------


def test_a_daemon_without_a_web_hook_refuses_web_start_with_a_typed_error() -> None:
    from gitquarry.service.daemon import Daemon

    daemon = Daemon(DaemonConfig())
    with pytest.raises(UsageError, match="without the web page"):
        daemon.op_web_start({})
    assert daemon.op_web_stop({}) == {"stopped": False}


def test_the_client_socket_wait_is_five_seconds_unless_the_environment_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gitquarry.service.client import SOCKET_WAIT_ENV, socket_wait_s

    for raw, expected in (("", 5.0), ("2.5", 2.5), ("0", 5.0), ("-1", 5.0), ("soon", 5.0),
                          ("1e9", 5.0), ("0.2", 0.2)):
        monkeypatch.setenv(SOCKET_WAIT_ENV, raw)
        assert socket_wait_s() == expected, raw
    monkeypatch.delenv(SOCKET_WAIT_ENV)
    assert socket_wait_s() == 5.0


# -- jobs.attach keeps a follower alive through a quiet phase ------------------------------


def test_attach_repeats_an_unchanged_job_so_a_follower_never_times_out(
    state: StateStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job whose state does not change (one slow embedding batch) still sends a progress
    line every ``ATTACH_HEARTBEAT_S``: the follower's 60 s socket read took the silence for
    "the daemon is unavailable" and exited 1 while the job went on (s3 newcomer finding)."""
    from gitquarry.service import daemon as daemon_module
    from gitquarry.service.daemon import Daemon

    monkeypatch.setattr(daemon_module, "ATTACH_HEARTBEAT_S", 0.2)
    job = _job(state, "ws-x")  # running, and nothing will change it
    host = Daemon(DaemonConfig())
    host.runner = Runner(state, _services(state, Calls()), scope_identity=lambda s: (1, s))
    sent: list[dict[str, Any]] = []
    started = time.monotonic()
    host._attach({"id": job.public_id, "timeout_s": 2.1}, sent.append)
    assert time.monotonic() - started >= 2.0
    progress = [p for p in sent if p["event"] == "progress"]
    assert len(progress) >= 3  # the first state, then one per wake-up (0.5 s) past 0.2 s
    assert all(p["result"]["job"] == progress[0]["result"]["job"] for p in progress)
    assert sent[-1]["final"] is True and sent[-1]["result"]["finished"] is False
