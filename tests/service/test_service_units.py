"""Unit tests of the daemon's parts on real files: the writer lease across processes, the
job store's restart recovery, vector checkpoints, redaction, the [daemon] config section, the
inotify-limit fallback and the debouncer."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gitquarry.errors import ConfigError, IndexBusyError, WriterBusyError
from gitquarry.service.job_store import Job, StateStore, parse_public_id, public_id
from gitquarry.store.lease import read_holder, writer_lease

# -- the writer lease -----------------------------------------------------------------------


def test_lease_is_exclusive_across_processes_and_names_its_holder(tmp_path: Path) -> None:
    lock = tmp_path / "index.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from gitquarry.store.lease import writer_lease\n"
         "with writer_lease(Path(sys.argv[1]), db_path=Path('x'), holder='daemon job-000007'):"
         "\n    print('held', flush=True); sys.stdin.readline()\n", str(lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    current = read_holder(lock)
    assert current is not None and current.holder == "daemon job-000007"
    assert current.pid == holder.pid
    seen: list[object] = []
    started = time.monotonic()
    with pytest.raises(WriterBusyError) as busy, writer_lease(
        lock, db_path=tmp_path / "index.db", holder="cli index", wait_s=0.4,
        on_wait=seen.append,
    ):
        pass
    assert 0.35 <= time.monotonic() - started < 5
    assert isinstance(busy.value, IndexBusyError) and busy.value.retryable
    assert f"daemon job-000007 (pid {holder.pid})" in str(busy.value)
    assert seen == [current]  # told once
    # released by the holder: the waiter gets it (bounded wait with backoff)
    threading.Timer(0.3, lambda: holder.communicate("\n")).start()
    with writer_lease(lock, db_path=tmp_path / "index.db", holder="cli index", wait_s=10) as me:
        assert read_holder(lock) == me and me.pid == os.getpid()
    assert read_holder(lock) is None and lock.read_text() == ""


def test_lease_released_by_kill_9_and_dead_identity_ignored(tmp_path: Path) -> None:
    lock = tmp_path / "index.lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from gitquarry.store.lease import writer_lease\n"
         "with writer_lease(Path(sys.argv[1]), db_path=Path('x'), holder='doomed'):\n"
         "    print('held', flush=True); time.sleep(60)\n", str(lock)],
        stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    proc.kill()
    proc.wait()
    assert '"doomed"' in lock.read_text()  # left behind, but its process is gone
    assert read_holder(lock) is None
    with writer_lease(lock, db_path=tmp_path / "db", holder="next", wait_s=0):
        pass


# -- the job store --------------------------------------------------------------------------


def _job(store: StateStore, status: str, target: str = "t1") -> Job:
    now = time.time()
    return store.insert(Job(id=0, type="history_index", scope="ws-1", generation=1,
                            target=target, work_key=f"history_index:ws-1:1:{target}",
                            params={"workspace": "w"}, status=status, origin="cli",
                            priority=10, created_at=now, updated_at=now))


def test_recovery_reconstructs_cancelled_only_from_an_exactly_matching_tombstone(
    tmp_path: Path,
) -> None:
    store = StateStore(tmp_path / "daemon.db")
    exact = _job(store, "running")
    store.write_tombstone(exact)  # the cancel's status write was then lost
    other = _job(store, "running", target="t2")
    store.write_tombstone(other)
    other.target, other.work_key = "t3", "history_index:ws-1:1:t3"  # the job moved on
    store.update(other)
    plain = _job(store, "queued")
    done = _job(store, "succeeded")
    store.close()

    reopened = StateStore(tmp_path / "daemon.db")
    interrupted, cancelled = reopened.recover()
    assert [j.id for j in cancelled] == [exact.id]
    assert sorted(j.id for j in interrupted) == [other.id, plain.id]
    statuses = {j.id: j.status for j in reopened.list_jobs()}
    assert statuses == {exact.id: "cancelled", other.id: "interrupted",
                        plain.id: "interrupted", done.id: "succeeded"}
    assert reopened.tombstoned(exact.work_key)
    assert (public_id(7), parse_public_id("job-000007"), parse_public_id("x")) == (
        "job-000007", 7, None)
    assert oct(os.stat(tmp_path / "daemon.db").st_mode & 0o777) == "0o600"


def test_state_write_failure_is_typed_and_retryable(tmp_path: Path) -> None:
    from gitquarry.errors import JobStateWriteError

    store = StateStore(tmp_path / "daemon.db", busy_timeout_s=0.2)
    job = _job(store, "running")
    blocker = sqlite3.connect(str(tmp_path / "daemon.db"), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    with pytest.raises(JobStateWriteError) as exc:
        store.write_tombstone(job)
    assert exc.value.retryable and exc.value.code == "job_state_write_failed"
    blocker.execute("ROLLBACK")
    assert not store.tombstoned(job.work_key)
    store.write_tombstone(job)
    assert store.tombstoned(job.work_key)


# -- vector checkpoints ---------------------------------------------------------------------


def _history_store(tmp_path: Path, commits: int):  # type: ignore[no-untyped-def]
    from gitquarry.config import load_config
    from gitquarry.history.index.indexer import index_workspace
    from gitquarry.store import open_store

    from .conftest import make_repo

    repo = make_repo(tmp_path / "repo", commits=commits)
    store = open_store(tmp_path / "index.db")
    index_workspace(repo, store, load_config(None))
    return store


def test_checkpointed_vectors_replay_after_a_failed_write_without_a_provider_call(
    tmp_path: Path, service_env: dict[str, str]
) -> None:
    from gitquarry.embedding.fake import HashingEmbedder
    from gitquarry.history.index.embed import embed_pending
    from gitquarry.service.checkpoint import CheckpointingEmbedder, CheckpointStore

    store = _history_store(tmp_path, 12)
    checkpoints = CheckpointStore(tmp_path / "checkpoints.db")
    blocker = sqlite3.connect(str(tmp_path / "index.db"), isolation_level=None)

    class Contended(HashingEmbedder):
        """Another writer takes the index while the provider computes."""

        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            out = super()._embed_batch(texts)
            blocker.execute("BEGIN IMMEDIATE")
            return out

    first = Contended()
    wrapped = CheckpointingEmbedder(first, checkpoints, "key-1")
    store.conn.execute("PRAGMA busy_timeout = 100")
    with pytest.raises(IndexBusyError):
        embed_pending(store, wrapped, batch_size=50)
    blocker.execute("ROLLBACK")
    assert first.texts_embedded == 12 and wrapped.stats.computed == 12
    # the retry (a new provider instance, as after a restart) replays all twelve
    second = HashingEmbedder()
    replay = CheckpointingEmbedder(second, checkpoints, "key-1")
    report = embed_pending(store, replay, batch_size=50)
    assert second.texts_embedded == 0 and second.calls == 0
    assert replay.stats.replayed == 12 and report.with_vectors == 12
    # replayed vectors equal freshly computed ones
    fresh = HashingEmbedder().embed(["alpha beta"])
    ck = CheckpointingEmbedder(HashingEmbedder(), checkpoints, "k")
    np.testing.assert_allclose(ck.embed(["alpha beta"]), fresh, rtol=1e-6)
    # no text is stored: only digests and vectors
    raw = (tmp_path / "checkpoints.db").read_bytes()
    assert b"commit number" not in raw and b"alpha beta" not in raw


def test_corrupt_checkpoints_are_cache_misses(tmp_path: Path) -> None:
    from gitquarry.embedding.fake import HashingEmbedder
    from gitquarry.service.checkpoint import CheckpointingEmbedder, CheckpointStore

    path = tmp_path / "checkpoints.db"
    checkpoints = CheckpointStore(path)
    CheckpointingEmbedder(HashingEmbedder(), checkpoints, "k").embed(["one", "two"])
    conn = sqlite3.connect(str(path))
    conn.execute("UPDATE vectors SET vector = zeroblob(length(vector))")  # digest mismatch
    conn.commit()
    conn.close()
    inner = HashingEmbedder()
    again = CheckpointingEmbedder(inner, checkpoints, "k")
    again.embed(["one", "two"])
    assert again.stats.corrupt == 2 and inner.texts_embedded == 2
    checkpoints.close()
    path.write_bytes(b"this is not a database" * 100)  # an unreadable file
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    inner = HashingEmbedder()
    fresh = CheckpointingEmbedder(inner, CheckpointStore(path), "k")
    assert fresh.embed(["one"]).shape == (1, inner.dimensions)
    assert inner.texts_embedded == 1


def test_checkpoint_retention_by_age_orphan_and_bytes(tmp_path: Path) -> None:
    from gitquarry.embedding.fake import HashingEmbedder
    from gitquarry.service.checkpoint import CheckpointingEmbedder, CheckpointStore

    checkpoints = CheckpointStore(tmp_path / "checkpoints.db")
    for key, words in (("old", ["a1", "a2"]), ("live", ["b1", "b2", "b3"]),
                       ("gone", ["c1"])):
        CheckpointingEmbedder(HashingEmbedder(), checkpoints, key).embed(words)
    conn = sqlite3.connect(str(tmp_path / "checkpoints.db"))
    conn.execute("UPDATE vectors SET created_at = created_at - 8 * 86400 WHERE work_key = 'old'")
    conn.commit()
    report = checkpoints.prune(active_work_keys={"live", "old"}, max_bytes=2 * 64 * 4)
    assert report["aged"] == 2 and report["orphans"] == 1 and report["over_ceiling"] == 1
    assert report["vector_bytes_before"] == 6 * 64 * 4
    assert report["vector_bytes_after"] == 2 * 64 * 4
    assert checkpoints.discard("live") == 2


# -- redaction, config ----------------------------------------------------------------------


def test_redaction_keeps_refs_and_relative_paths() -> None:
    from gitquarry.service.redact import redact

    text = ("cannot use the index at /home/ada/src/.gitquarry/index.db: denied; "
            "see /var/log/x.log. refs/heads/main docs/a.md and/or http://h/p")
    out = redact(text, {"/home/ada/src": "<workspace src>"})
    assert out == ("cannot use the index at <workspace src>/.gitquarry/index.db: denied; "
                   "see <path>. refs/heads/main docs/a.md and/or http://h/p")


def test_daemon_section_only_from_the_user_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitquarry.config import load_config

    user = tmp_path / "user.toml"
    user.write_text("[daemon]\ndebounce_s = 0.5\nreconcile_s = 30\n", encoding="utf-8")
    ws = tmp_path / "ws"
    ws.mkdir()
    config = load_config(ws, user_file=user)
    assert (config.daemon.debounce_s, config.daemon.reconcile_s) == (0.5, 30)
    (ws / ".gitquarry.toml").write_text("[daemon]\nreconcile_s = 0.1\n", encoding="utf-8")
    for trust in ("", f"[trust]\nworkspaces = [{str(ws)!r}]\n"):
        # refused even from a workspace the user trusts: one daemon serves every workspace
        user.write_text("[daemon]\ndebounce_s = 0.5\nreconcile_s = 30\n" + trust,
                        encoding="utf-8")
        config = load_config(ws, user_file=user)
        assert config.daemon.reconcile_s == 30
        assert any("[daemon] reconcile_s" in w.keys for w in config.warnings)
    user.write_text("[daemon]\ndebounce_s = -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="debounce_s"):
        load_config(None, user_file=user)


# -- watching -------------------------------------------------------------------------------


_LIMIT_PROBE = """
import json, os, resource, sys, time
from pathlib import Path
from gitquarry.service.watcher import Watcher, WatchSpec

mode, root = sys.argv[1], Path(sys.argv[2])
seen = []
dirs = [root / f"d{i}" for i in range(6)]
for d in dirs:
    d.mkdir()
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if mode == "emfile":  # no descriptor left for the inotify instance (as at max_user_instances)
    used = {int(fd) for fd in os.listdir("/proc/self/fd")}
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(set(range(len(used) + 2)) - used), hard))
try:
    watcher = Watcher(lambda key, kind: seen.append(kind), poll_s=0.2)
finally:
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
watcher.set_watches("ws", [WatchSpec(d, False, "refs", "git") for d in dirs])
(dirs[-1] / "main").write_text("x")
deadline = time.monotonic() + 10
while not seen and time.monotonic() < deadline:
    time.sleep(0.05)
print(json.dumps({"mode": watcher.mode("ws"), "warning": watcher.warnings.get("ws"),
                  "seen": seen}))
watcher.stop()
"""


def _probe(argv: list[str]) -> dict[str, object]:
    import json

    out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_inotify_instance_limit_falls_back_to_polling_with_a_warning(tmp_path: Path) -> None:
    result = _probe([sys.executable, "-c", _LIMIT_PROBE, "emfile", str(tmp_path)])
    assert result["mode"] == "polling"
    assert "inotify limit reached" in str(result["warning"])
    assert set(result["seen"]) == {"git"}  # type: ignore[arg-type]  # changes arrive, polled


def test_inotify_watch_limit_falls_back_to_polling_for_the_rest(tmp_path: Path) -> None:
    import shutil

    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to lower the watch limit in a user namespace")
    probe = subprocess.run(["unshare", "-Ur", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("user namespaces are not available here")
    # max_user_watches = 3 inside a private user namespace (the machine's limit is untouched)
    script = (f"echo 3 > /proc/sys/user/max_inotify_watches && exec {sys.executable} -c "
              "\"$0\" enospc \"$1\"")
    result = _probe(["unshare", "-Ur", "sh", "-c", script, _LIMIT_PROBE, str(tmp_path)])
    assert result["mode"] == "mixed"
    assert "inotify limit reached" in str(result["warning"])
    assert set(result["seen"]) == {"git"}  # type: ignore[arg-type]


def test_watcher_ignores_reads_and_objects_and_sees_ref_writes(tmp_path: Path) -> None:
    from gitquarry.service.watcher import Watcher, git_watch_specs

    from .conftest import git, make_repo

    repo = make_repo(tmp_path / "r", commits=1)
    seen: list[str] = []
    watcher = Watcher(lambda key, kind: seen.append(kind))
    try:
        watcher.set_watches("k", git_watch_specs(repo / ".git"))
        assert watcher.mode("k") == "native"
        git(repo, "for-each-ref")
        git(repo, "log", "--oneline")
        (repo / "other.txt").write_text("x")
        git(repo, "add", "other.txt")  # .git/index and objects/: not watched
        time.sleep(0.5)
        assert seen == []
        git(repo, "commit", "-q", "-m", "second")
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert seen and set(seen) == {"git"}
    finally:
        watcher.stop()


def test_debouncer_coalesces_and_bounds_the_delay() -> None:
    from gitquarry.service.watcher import Debouncer

    fired: list[tuple[str, float]] = []
    d = Debouncer(lambda key: fired.append((key, time.monotonic())), delay_s=0.15,
                  max_delay_s=0.6)
    try:
        start = time.monotonic()
        for _ in range(1000):
            d.touch("a")
        time.sleep(0.4)
        assert [k for k, _ in fired] == ["a"]
        fired.clear()
        start = time.monotonic()
        while time.monotonic() - start < 1.0:  # a continuous stream
            d.touch("b")
            time.sleep(0.02)
        assert fired and fired[0][0] == "b" and fired[0][1] - start < 0.9
    finally:
        d.stop()


def test_every_daemon_key_is_read(
    service_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like tests/surfaces' schema walk: run a daemon (in this process) through watching,
    indexing, a failure with retry and a foreground index, and fail for any ``[daemon]`` key
    no code outside range validation reads."""
    import dataclasses
    import shutil

    from gitquarry.cli.index_run import run_index
    from gitquarry.config import DaemonConfig, load_config
    from gitquarry.service.daemon import Daemon
    from gitquarry.workspace import Workspace

    from .conftest import Api, commit, make_repo

    keys = {f.name for f in dataclasses.fields(DaemonConfig)}
    reads: set[str] = set()
    original = DaemonConfig.__getattribute__

    def tracked(self: object, name: str) -> object:
        if name in keys:
            caller = sys._getframe(1).f_code
            if caller.co_name != "_validate" and not caller.co_filename.endswith(
                "dataclasses.py"
            ):
                reads.add(name)
        return original(self, name)  # type: ignore[arg-type]

    monkeypatch.setattr(DaemonConfig, "__getattribute__", tracked)
    daemon = Daemon()
    ready = threading.Event()
    thread = threading.Thread(target=daemon.run, kwargs={"on_ready": ready.set}, daemon=True)
    thread.start()
    assert ready.wait(30)
    api = Api()
    try:
        repo = make_repo(tmp_path / "r", commits=2)
        job = api.call("watch", path=str(repo))["job"]
        assert api.wait_done(job["id"])["status"] == "succeeded"
        commit(repo, "more")
        api.wait_for(lambda: len(api.jobs()) >= 2, what="a watched commit's job")
        # the job indexing the new commit may still write <repo>/.gitquarry while it goes
        api.wait_for(lambda: shutil.rmtree(repo, ignore_errors=True) or not repo.exists(),
                     what="the repository removed")
        api.wait_for(lambda: api.jobs(status="failed"), what="a failed job")
        # no job brought the removed workspace back (ensure_state_dir made its index
        # directory's parents, the workspace included; every later job then succeeded)
        assert not repo.exists()
        other = make_repo(tmp_path / "other", commits=1)
        assert run_index(Workspace(root=other, config=load_config(other)), embed=False,
                         quiet=True, as_json=True) == 0
    finally:
        daemon.stop()
        thread.join(30)
    assert reads == keys, f"[daemon] keys no code reads: {sorted(keys - reads)}"


def test_docs_cache_writer_takes_the_same_lease_naming_the_job(tmp_path: Path) -> None:
    from gitquarry.repo_docs.indexer import writer_lock
    from gitquarry.store.lease import current_holder

    token = current_holder.set("daemon job-000042")
    try:
        with writer_lock(tmp_path):
            holder = read_holder(tmp_path / "repo_docs.lock")
            assert holder is not None and holder.holder == "daemon job-000042"
            with pytest.raises(WriterBusyError, match="daemon job-000042"), \
                    writer_lock(tmp_path):
                pass
    finally:
        current_holder.reset(token)
    assert read_holder(tmp_path / "repo_docs.lock") is None


def test_daemon_log_rotates_at_the_configured_size_and_stays_private(tmp_path: Path) -> None:
    """``[daemon] log_max_bytes`` / ``log_backups``: every file stays under the size, exactly
    ``log_backups`` old files are kept (the oldest lines dropped), and every file, the ones
    opened by a rotation too, is private (0600) like the first."""
    import logging
    import stat

    from gitquarry.config import DaemonConfig
    from gitquarry.service.daemon import Daemon

    config = DaemonConfig(log_max_bytes=4096, log_backups=2)
    daemon = Daemon(config)
    root = logging.getLogger("gitquarry")
    saved = (root.level, root.propagate)
    old_umask = os.umask(0o022)  # the usual umask: new files 0644 unless made private
    handler = daemon._setup_logging(tmp_path)
    try:
        log = logging.getLogger("gitquarry.service.jobs")
        for n in range(400):  # ~40 KB of job lines: many rotations
            log.info("job job-%06d succeeded in %.2f s (workspace <workspace ws-%d>)", n,
                     n / 7, n % 5)
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(saved[0])
        root.propagate = saved[1]
        os.umask(old_umask)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["daemon.log", "daemon.log.1", "daemon.log.2"], names
    for name in names:
        path = tmp_path / name
        assert 0 < path.stat().st_size <= 4096, (name, path.stat().st_size)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, (name, oct(path.stat().st_mode))
    # the newest lines are in daemon.log, older ones in .1 then .2; the oldest were dropped
    assert "job-000399" in (tmp_path / "daemon.log").read_text()
    kept = "".join((tmp_path / n).read_text() for n in names)
    assert "job-000000 " not in kept
    numbers = [int(line.split("job-")[1][:6]) for n in reversed(names)
               for line in (tmp_path / n).read_text().splitlines()]
    assert numbers == list(range(numbers[0], 400))  # contiguous, in order, nothing lost
