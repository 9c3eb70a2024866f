"""kill -9 of a real daemon during repository-docs retention (GC), and of a docs build.

The daemon is a real ``python -m gitquarry daemon run`` process; ``fault_hooks/`` on its
``PYTHONPATH`` pauses it at a named point (see ``fault_hooks/sitecustomize.py``) and the
test kills it there with SIGKILL. Afterwards every revision set in the cache is either
whole (its row, files, chunks, chunk locators and, when ready, vectors) or gone; the newest
ready set is kept; a hybrid search answers from it; and a restarted daemon finishes the
retention exactly as an uninterrupted pass over the same cache would.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import FAST_CONFIG, Api, DaemonProcess, git

# issue 24: real daemon processes or a second uid (seconds each); CI runs the slow set
pytestmark = pytest.mark.slow

HOOKS = Path(__file__).parent / "fault_hooks"
DOCS = {
    "README.md": "# Widget\n\nWidget renders dashboards for the ops team.\n",
    "docs/deploy.md": "# Deployment\n\n## Nginx\n\nThe reverse proxy forwards to gunicorn "
                      "with blue green releases.\n",
}
DAY = 86_400


def _config(env: dict[str, str]) -> None:
    Path(env["GITQUARRY_CONFIG"]).write_text(
        FAST_CONFIG.replace('provider = "none"', 'provider = "fake"'), encoding="utf-8")


def _page(repo: Path, i: int) -> str:
    (repo / "docs" / "page.md").write_text(f"# Page\n\nRevision {i} of the text.\n",
                                           encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"page revision {i}")
    return git(repo, "rev-parse", "HEAD")


def _docs_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in DOCS.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "docs")
    return path


def _hook_env(env: dict[str, str], **extra: str) -> dict[str, str]:
    out = dict(env)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(HOOKS), env.get("PYTHONPATH")) if p)
    out["GQ_TEST_FAKE_EMBEDDER"] = "1"
    out.update(extra)
    return out


def _snapshot(db: Path, dest: Path) -> Path:
    """A consistent copy of a (possibly WAL-mode) SQLite file, read-only on the source."""
    dest.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    dst = sqlite3.connect(str(dest / db.name))
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return dest


def _ro(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def assert_sets_whole_or_gone(db: Path) -> dict[str, str]:
    """Every set is whole or gone; returns ``{set_id: state}`` of the sets present.

    Whole: its eligible files and chunk rows match its counts, each chunk row has its
    locator and file, and a ``ready`` set with a namespace has a vector for every chunk.
    Gone: no row of any table names it."""
    conn = _ro(db)
    try:
        sets = {str(r[0]): r for r in conn.execute(
            "SELECT set_id, state, eligible_files, eligible_chunks, namespace_key "
            "FROM revision_sets")}
        for table in ("set_files", "set_chunks"):
            stray = {str(r[0]) for r in conn.execute(f"SELECT DISTINCT set_id FROM {table}")}
            assert stray <= set(sets), f"{table} rows of deleted sets: {stray - set(sets)}"
        for set_id, (_id, state, files, chunks, namespace) in sets.items():
            if state == "building":
                continue  # its builder was killed: membership may be anything (not served)
            n_files = conn.execute("SELECT count(*) FROM set_files WHERE set_id = ? AND "
                                   "exclusion IS NULL", (set_id,)).fetchone()[0]
            n_chunks = conn.execute("SELECT count(*) FROM set_chunks WHERE set_id = ?",
                                    (set_id,)).fetchone()[0]
            assert (n_files, n_chunks) == (files, chunks), (set_id, state)
            lost = conn.execute(
                "SELECT count(*) FROM set_chunks sc WHERE sc.set_id = ? AND (NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.chunk_id = sc.chunk_id) OR NOT EXISTS "
                "(SELECT 1 FROM set_files f WHERE f.set_id = sc.set_id AND f.path = sc.path))",
                (set_id,)).fetchone()[0]
            assert lost == 0, f"{set_id} lost {lost} chunk locators"
            if state == "ready" and chunks:
                unvectored = conn.execute(
                    "SELECT count(*) FROM set_chunks sc WHERE sc.set_id = ? AND NOT EXISTS "
                    "(SELECT 1 FROM vectors v JOIN namespaces n ON n.id = v.namespace_id "
                    "WHERE v.chunk_id = sc.chunk_id AND n.key = ?)",
                    (set_id, namespace)).fetchone()[0]
                assert unvectored == 0, f"ready set {set_id} lost {unvectored} vectors"
        return {k: str(v[1]) for k, v in sets.items()}
    finally:
        conn.close()


def _search(expected_set: str) -> dict[str, Any]:
    from gitquarry.config import load_config
    from gitquarry.embedding.fake import fake_provider_registered
    from gitquarry.repo_docs.api import RepoDocsService
    from gitquarry.repo_docs.registry import Selector

    with fake_provider_registered(), RepoDocsService(load_config(None)) as service:
        data = service.search(Selector("acme/widget", None, None, None),
                              "blue green releases", mode="hybrid")
    assert data["hits"], data
    assert data["effective_mode"] == "hybrid", data
    assert data["revision_set_id"] == expected_set, data
    assert data["hits"][0]["citation"]["path"] == "docs/deploy.md"
    return data


def _docs_jobs(api: Api) -> list[dict[str, Any]]:
    return [j for j in api.jobs() if j["type"] == "repo_docs_index"]


def _wait_marker(marker: Path, daemon: DaemonProcess, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if daemon.proc.poll() is not None:
            raise AssertionError(f"daemon exited {daemon.proc.returncode}: "
                                 f"{daemon.log.read_text()}")
        if time.monotonic() > deadline:
            from gitquarry.service.ipc import Client

            jobs = Client(timeout_s=10).call("jobs.list", limit=20)["jobs"]
            raise AssertionError(f"the daemon never reached the fault point: {jobs} "
                                 + daemon.log.read_text())
        time.sleep(0.05)


@pytest.mark.parametrize("pause", ["gc_orphans:1", "gc_orphans:3", "gc_checkpoints:1"])
def test_kill_9_during_docs_gc_leaves_sets_whole_or_gone_newest_kept_search_answers(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str],
    pause: str,
) -> None:
    """``gc_orphans:1``: killed inside the count/age transaction (nothing of it commits);
    ``gc_orphans:3``: inside the second byte-ceiling eviction (the first one committed);
    ``gc_checkpoints:1``: after the database part, before checkpoint files are pruned."""
    from gitquarry.config import load_config
    from gitquarry.embedding.fake import fake_provider_registered
    from gitquarry.repo_docs.indexer import cache_dir_for, index_revision_set, write_checkpoint
    from gitquarry.repo_docs.registry import Registry
    from gitquarry.service.docs_jobs import collect_garbage

    _config(service_env)
    repo = _docs_repo(tmp_path / "widget")
    binding = Registry().register("acme/widget", repo)
    config = load_config(None)
    now = time.time()
    set_ids: list[str] = []
    with fake_provider_registered():
        for i in range(10):
            _page(repo, i)
            set_ids.append(index_revision_set(binding, config).revision_set_id)
    cache_dir = cache_dir_for(binding, config)
    db = cache_dir / "repo_docs.db"
    conn = sqlite3.connect(str(db))
    for n, set_id in enumerate(set_ids):  # one day apart, the newest yesterday
        at = int(now) - (10 - n) * DAY
        conn.execute("UPDATE revision_sets SET created_at = ?, updated_at = ?, "
                     "completed_at = ? WHERE set_id = ?", (at, at, at, set_id))
    conn.commit()
    vector_size, total = conn.execute(
        "SELECT max(length(vector)), sum(length(vector)) FROM vectors").fetchone()
    conn.close()
    # checkpoint files retention prunes: one of a set the count rule deletes, one too old
    import numpy as np

    row = [("ab" * 32, "cd" * 32, np.ones(4, dtype=np.float32))]
    write_checkpoint(cache_dir, set_ids[0], "ns", row)
    write_checkpoint(cache_dir, set_ids[9], "ns", row)
    old = now - 8 * DAY
    os.utime(cache_dir / "checkpoints" / f"{set_ids[9]}.vec", (old, old))
    checkpoints = sorted((cache_dir / "checkpoints").glob("*.vec"))
    assert len(checkpoints) == 2

    # the daemon builds the set of a new HEAD, then retention: 11 ready sets, 8 allowed by
    # count, and a byte ceiling 5 vectors under today's total evicts 3 more
    head = _page(repo, 10)
    ceiling = str(int(total) - 5 * int(vector_size))
    marker = tmp_path / "paused"
    daemon.start(env=_hook_env(service_env, GQ_TEST_PAUSE=pause,
                               GQ_TEST_PAUSE_FILE=str(marker),
                               GITQUARRY_REPO_DOC_VECTOR_BYTES=ceiling))
    _wait_marker(marker, daemon)
    daemon.kill9()

    present = assert_sets_whole_or_gone(db)
    newest = next(s for s, st in present.items() if st == "ready" and
                  _ro(db).execute("SELECT commit_oid FROM revision_sets WHERE set_id = ?",
                                  (s,)).fetchone()[0] == head)
    assert newest not in set_ids
    if pause == "gc_orphans:1":
        assert set(present) == {*set_ids, newest}  # the killed transaction left no trace
    elif pause == "gc_orphans:3":
        assert set(present) == {*set_ids[4:], newest}  # count (3) and one eviction
    else:
        assert len(present) == 5 and newest in present
        assert sorted((cache_dir / "checkpoints").glob("*.vec")) == checkpoints
    _search(newest)
    # what an uninterrupted pass would leave, from a copy of the cache as the kill left it
    reference_dir = _snapshot(db, tmp_path / "reference")
    reference = collect_garbage(reference_dir, keep_set=newest, ceiling=int(ceiling))
    assert reference.skipped is None
    expected = set(assert_sets_whole_or_gone(reference_dir / "repo_docs.db"))
    assert newest in expected and len(expected) == 5

    # a restarted daemon resumes the interrupted job and finishes the retention
    marker.unlink()
    daemon.start(env=_hook_env(service_env, GITQUARRY_REPO_DOC_VECTOR_BYTES=ceiling))
    jobs = api.wait_for(lambda: [j for j in _docs_jobs(api) if j["terminal"]], timeout=90,
                        what="the interrupted docs job, finished")
    assert len(_docs_jobs(api)) == 1
    job = api.job(jobs[0]["id"])
    assert job["status"] == "succeeded" and job["runs"] == 2, job
    assert job["result"]["revision_set_id"] == newest and job["result"]["gc"]["skipped"] is None
    assert set(assert_sets_whole_or_gone(db)) == expected
    assert not list((cache_dir / "checkpoints").glob("*.vec"))
    _search(newest)
    api.assert_no_absolute_paths(tmp_path)


def test_a_set_whose_builder_was_killed_is_collected_not_kept_forever(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    """A docs build killed with SIGKILL leaves its set ``building``; nobody resumes it once
    HEAD moved on. Retention holds the writer lease, so no build of that cache is running:
    such a set is a dead one, collected after the non-ready age (7 days) like a failed set
    instead of being protected (and counted against the byte ceiling) forever."""
    from gitquarry.config import load_config
    from gitquarry.repo_docs.indexer import cache_dir_for
    from gitquarry.repo_docs.registry import Registry

    _config(service_env)
    repo = _docs_repo(tmp_path / "widget")
    binding = Registry().register("acme/widget", repo)
    _page(repo, 0)
    marker = tmp_path / "paused"
    env = _hook_env(service_env, GQ_TEST_PAUSE="docs_membership:1",
                    GQ_TEST_PAUSE_FILE=str(marker))
    builder = subprocess.Popen(
        [sys.executable, "-m", "gitquarry", "repo-docs", "index", "--foreground", "--json"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not marker.exists():
            assert builder.poll() is None, builder.stderr.read() if builder.stderr else ""
            assert time.monotonic() < deadline, "the build never reached its membership"
            time.sleep(0.05)
    finally:
        builder.kill()
        builder.wait(10)
        if builder.stderr is not None:
            builder.stderr.close()
    db = cache_dir_for(binding, load_config(None)) / "repo_docs.db"
    conn = sqlite3.connect(str(db))
    (dead,) = [str(r[0]) for r in conn.execute("SELECT set_id FROM revision_sets")]
    assert conn.execute("SELECT state FROM revision_sets").fetchone()[0] == "building"
    week = int(time.time()) - 8 * DAY  # it was killed more than a week ago
    conn.execute("UPDATE revision_sets SET created_at = ?, updated_at = ? WHERE set_id = ?",
                 (week, week, dead))
    conn.commit()
    conn.close()

    head = _page(repo, 1)
    daemon.start(env=_hook_env(service_env))
    job = api.wait_for(lambda: [j for j in _docs_jobs(api) if j["terminal"]], timeout=90,
                       what="the docs job of the new HEAD")[0]
    job = api.job(job["id"])
    assert job["status"] == "succeeded", job
    assert job["result"]["effective_revision"] == head
    assert job["result"]["gc"]["reasons"] == {"non_ready": 1}, job["result"]["gc"]
    present = assert_sets_whole_or_gone(db)
    assert present == {job["result"]["revision_set_id"]: "ready"}
    _search(job["result"]["revision_set_id"])
    shutil.rmtree(tmp_path / "reference", ignore_errors=True)
