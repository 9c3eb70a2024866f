"""Issue 7 §9, the indexing-run messages: resumed runs, Ctrl-C, progress off a terminal,
the ETA. (Vanished repositories: test_git_locations; an error printed once: test_git_refs.)"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.cli.progress import RichProgress, format_duration
from gitquarry.history.index.progress import EtaEstimator

from .conftest import FastCommit, GitRepo, Indexer, gitquarry_executable

CLI = Callable[..., tuple[int, str, str]]


def _batch_size(n: int) -> None:
    Path(os.environ["GITQUARRY_CONFIG"]).write_text(f"[git_indexing]\nbatch_size = {n}\n")


@pytest.fixture
def config_restore() -> object:
    path = Path(os.environ["GITQUARRY_CONFIG"])
    before = path.read_bytes() if path.exists() else None
    yield
    if before is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(before)


def test_resumed_run_says_what_it_does(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI
) -> None:
    repo = make_repo()
    repo.fast_import([FastCommit({"f.txt": f"{i}\n"}, f"commit {i}") for i in range(20)])
    indexer.run()
    with indexer.open() as store, store.atomic() as conn:
        conn.execute("UPDATE repositories SET run_in_progress = 1")
        conn.execute("DELETE FROM git_commits WHERE id > 12")
    code, out, err = cli("index", str(indexer.root), "--no-embed")
    assert code == 0, err
    assert "full reconciliation" not in err
    assert f"{repo.path}: resuming the interrupted run: commits stored before are kept" in err
    assert "Indexed 8 new commits" in out


def test_progress_lines_off_a_terminal(
    make_repo: Callable[..., GitRepo], indexer: Indexer, cli: CLI,
    monkeypatch: pytest.MonkeyPatch, config_restore: object,
) -> None:
    repo = make_repo("proj")
    repo.fast_import([FastCommit({"f.txt": f"{i}\n"}, f"commit {i}") for i in range(30)])
    _batch_size(10)
    monkeypatch.setenv("GITQUARRY_PROGRESS_INTERVAL", "0")
    code, _, err = cli("index", str(indexer.root), "--no-embed")
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if ln.startswith("progress: ")]
    assert lines[0] == "progress: commits proj: 30 to do"
    assert lines[1].startswith("progress: commits proj: 10/30 (33%), ")
    assert "/s, elapsed 0:00:0" in lines[1] and ", ETA 0:00:" in lines[1]
    assert lines[2].startswith("progress: commits proj: 20/30 (66%)")  # rounded down
    assert len(lines) == 3  # none at 100%: the summary says it
    code, _, err = cli("index", str(indexer.root), "--no-embed", "--quiet")
    assert "progress:" not in err


def test_progress_interval_limits_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    progress = RichProgress(interval_s=15.0, clock=lambda: clock[0])
    printed: list[str] = []
    progress._line = printed.append  # type: ignore[method-assign]
    with progress:
        progress.phase("commits x", 1000)
        for _ in range(9):
            clock[0] += 5.0
            progress.advance(100)
    assert printed[0] == "commits x: 1,000 to do"
    counts = [p.split(":")[1].strip().split(" ")[0] for p in printed[1:]]
    assert counts == ["300/1,000", "600/1,000", "900/1,000"]


@pytest.mark.slow
def _sigint_as_in_a_shell() -> None:
    """SIGINT delivered and handled by default in the child, as when a user presses Ctrl-C in
    a shell: a blocked mask or an ignored disposition is inherited across exec, and a test
    process that ran other tests first (threads, servers, browsers) may hold either."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.slow  # issue 24: >= 5 s under load (~1 s idle); CI runs it
def test_ctrl_c_says_what_was_kept_and_a_rerun_resumes(
    make_repo: Callable[..., GitRepo], workspace: Path, config_restore: object
) -> None:
    repo = make_repo()
    TOTAL = 6000
    payload = "".join(f"line {n} of a moderately sized file body\n" for n in range(40))
    repo.fast_import(
        [FastCommit({f"d{i % 50}/f{i}.txt": f"{i}\n{payload}"}, f"commit number {i}")
         for i in range(TOTAL)]
    )
    _batch_size(50)
    env = dict(os.environ, GITQUARRY_PROGRESS_INTERVAL="0")
    proc = subprocess.Popen(
        [gitquarry_executable(), "index", "--no-embed", str(workspace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
        preexec_fn=_sigint_as_in_a_shell,
    )
    assert proc.stderr is not None
    try:
        # interrupt early in the run (a progress line at most a third of the way), so a fast
        # machine cannot finish the last batches between the line and the signal
        deadline = time.monotonic() + 60
        seen = ""
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            if line.startswith("progress: commits") and f"/{TOTAL:,}" in line:
                seen = line
                if int(line.split(": ")[2].split("/")[0].replace(",", "")) <= TOTAL // 3:
                    break
        assert proc.poll() is None, f"indexing finished before it could be interrupted: {seen}"
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert f"Interrupted while indexing {repo.path}. Kept: " in err
    assert "every finished batch is saved. Run `gitquarry index` again to resume" in err
    kept = int(err.split("Kept: ")[1].split(" ")[0].replace(",", ""))
    assert 0 < kept < TOTAL
    done = subprocess.run(
        [gitquarry_executable(), "index", "--no-embed", str(workspace)],
        capture_output=True, text=True, env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    assert "resuming the interrupted run" in done.stderr
    assert f"Indexed {TOTAL - kept:,} new commits" in done.stdout


# --- the ETA ---------------------------------------------------------------------------------


def _simulate(cost: Callable[[float], float], total: int = 10_000, batch: int = 250
              ) -> list[tuple[float, float, float]]:
    """(fraction done, weighted ETA / actual, average-rate ETA / actual) after each batch,
    for a phase whose cost per unit at position x in [0, 1] is ``cost(x)`` seconds."""
    costs = [cost((i + 0.5) / total) for i in range(total)]
    now = 0.0
    eta = EtaEstimator(total, now)
    out = []
    for start in range(0, total - batch, batch):
        now += sum(costs[start : start + batch])
        eta.advance(batch, now)
        done = start + batch
        actual = sum(costs[done:])
        average = now / done * (total - done)
        weighted = eta.remaining(now)
        assert weighted is not None
        out.append((done / total, weighted / actual, average / actual))
    return out


def test_eta_follows_falling_cost_where_the_average_overestimates() -> None:
    """Newest commits cost git more: cost falls along the run (e^-2x, as measured)."""
    points = [p for p in _simulate(lambda x: 0.008 * math.exp(-2 * x)) if p[0] <= 0.5]
    after_warmup = points[4:]
    assert all(0.8 <= w <= 1.25 for _, w, _ in after_warmup), after_warmup
    assert max(a for _, _, a in points) >= 1.8  # what users saw: up to 1.8x and more


def test_eta_is_exact_for_flat_cost_and_bounded_for_rising_cost() -> None:
    flat = _simulate(lambda x: 0.002)
    assert all(abs(w - 1) < 1e-6 for _, w, _ in flat)
    rising = _simulate(lambda x: 0.002 * (1 + x))
    assert all(0.5 <= w <= 1.01 for _, w, _ in rising[4:])  # never worse than the average
    assert all(w >= a - 1e-9 for _, w, a in rising)


def test_eta_counts_down_between_batches() -> None:
    eta = EtaEstimator(100, 0.0)
    assert eta.remaining(0.0) is None
    eta.advance(10, 1.0)
    assert eta.remaining(1.0) == pytest.approx(9.0)
    assert eta.remaining(4.0) == pytest.approx(6.0)
    assert eta.remaining(50.0) == 0.0
    assert format_duration(None) == "-:--:--" and format_duration(3725.4) == "1:02:05"


def test_json_run_summary_has_codes(make_repo: Callable[..., GitRepo], indexer: Indexer,
                                    cli: CLI) -> None:
    repo = make_repo()
    repo.commit({"a.txt": "a\n"}, "one")
    code, out, err = cli("index", str(indexer.root), "--no-embed", "--json")
    assert code == 0, err
    data = json.loads(out)
    rep = data["repositories"][0]
    for key in ("error_code", "problems", "reconcile_reason", "invalid_time_commits",
                "identities_remapped", "replace_refs"):
        assert key in rep
    for key in ("skipped", "removed", "moved", "environment_warnings"):
        assert data[key] == []
