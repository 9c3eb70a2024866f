"""Every new commit gets its vector from the daemon: a real daemon process, the real
bundled embedding model (``minilm-onnx``), a real repository.

Regression (issue 10, new-user trial): the ``history_embed`` job's identity was a digest of
the embedding settings only, so after the first successful embed job every later automatic
one was dropped as "already done": new commits became keyword-searchable but never got a
vector, not after reconcile cycles nor after a restart.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import FAST_CONFIG, Api, DaemonProcess, commit, make_repo

pytestmark = pytest.mark.slow

#: the bound within which a new commit must have its vector (debounce 0.2 s, a history
#: index, then an embed job that loads the model: a few seconds here, generous for load)
VECTOR_BOUND_S = 60.0


def _config(path: Path, *, embed: bool = True) -> None:
    text = FAST_CONFIG.replace('provider = "none"', 'provider = "minilm-onnx"')
    if not embed:
        text = text.replace("[daemon]\n", "[daemon]\nembed = false\n")
    path.write_text(text, encoding="utf-8")


def _vector_state(repo: Path) -> tuple[set[str], set[str]]:
    """(hashes of indexed commits, hashes of those with a vector); empty before an index."""
    db = repo / ".gitquarry" / "index.db"
    if not db.exists():
        return set(), set()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        indexed = {r[0] for r in conn.execute("SELECT hash FROM git_commits")}
        with_vector = {r[0] for r in conn.execute(
            "SELECT c.hash FROM git_commits c WHERE EXISTS "
            "(SELECT 1 FROM commit_vectors v WHERE v.commit_id = c.id)")}
        return indexed, with_vector
    except sqlite3.OperationalError:  # the schema is still being created
        return set(), set()
    finally:
        conn.close()


def _wait_vector(api: Api, repo: Path, sha: str, what: str) -> float:
    """Seconds until ``sha`` is indexed and has a vector (and every indexed commit does)."""
    started = time.monotonic()

    def embedded() -> bool:
        indexed, with_vector = _vector_state(repo)
        return sha in with_vector and indexed == with_vector

    api.wait_for(embedded, timeout=VECTOR_BOUND_S, what=what)
    return time.monotonic() - started


def _embed_jobs(api: Api) -> list[dict[str, Any]]:
    return [j for j in api.jobs() if j["type"] == "history_embed"]


def _search(repo: Path, env: dict[str, str], query: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "gitquarry", "history", "--mode", "semantic", "--json", query],
        cwd=repo, env=env, capture_output=True, check=False, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return dict(json.loads(proc.stdout))


def test_new_commits_get_vectors_after_the_first_embed_and_across_a_restart(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    _config(Path(service_env["GITQUARRY_CONFIG"]))
    repo = make_repo(tmp_path / "repo", 3)
    daemon.start()
    api.wait_done(api.call("watch", path=str(repo))["job"]["id"])
    _wait_vector(api, repo, subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, text=True,
                                           capture_output=True, check=True).stdout.strip(),
                 "the first embedding")

    # the bug: every automatic embed job after the first success was dropped
    first = commit(repo, "teach the parser to read octal escapes", name="octal.txt")
    _wait_vector(api, repo, first, "the vector of a commit made after the first embed job")
    # an event storm (three commits in a row) still ends with every commit embedded
    storm = [commit(repo, f"storm commit {i} about caching", name=f"storm{i}.txt")
             for i in range(3)]
    _wait_vector(api, repo, storm[-1], "the vectors of a burst of commits")
    assert set(storm) <= _vector_state(repo)[1]
    jobs = _embed_jobs(api)
    assert all(j["status"] in ("succeeded", "queued", "running") for j in jobs), jobs
    # a reconcile cycle (1.5 s here) with nothing new submits no embed job
    settled = len(_embed_jobs(api))
    time.sleep(4.0)
    assert len(_embed_jobs(api)) == settled

    # across a restart: a commit made while no daemon runs
    daemon.stop()
    offline = commit(repo, "document the retry policy of the uploader", name="retry.txt")
    daemon.start()
    _wait_vector(api, repo, offline, "the vector of a commit made while the daemon was down")

    # semantic search (vectors only) finds the commit the bug left without a vector
    answer = _search(repo, service_env, "octal escape sequences in the parser")
    assert answer["results"][0]["hash"] == first, answer["results"]
    assert answer["embedded_fraction"] == 1.0
    api.assert_no_absolute_paths(repo, tmp_path)


def test_vectors_left_pending_are_embedded_by_reconcile_after_a_restart(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    """Commits indexed while the daemon did not embed (``embed = false``): once it does,
    reconcile embeds them although no ref moved (no history job, no chained embed job);
    likewise after the index file is deleted."""
    config = Path(service_env["GITQUARRY_CONFIG"])
    _config(config, embed=False)
    repo = make_repo(tmp_path / "repo", 4)
    daemon.start()
    api.wait_done(api.call("watch", path=str(repo))["job"]["id"])
    indexed, with_vector = _vector_state(repo)
    assert len(indexed) == 4 and not with_vector
    daemon.stop()

    _config(config, embed=True)
    daemon.start()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, text=True,
                          capture_output=True, check=True).stdout.strip()
    _wait_vector(api, repo, head, "reconcile to embed the pending commits")
    # the vectors are committed (and visible) before the job that wrote them records its
    # success: the job list is read once it has, not in between (where it read `running`
    # and this failed once in a full run)
    embeds = api.wait_for(
        lambda: [j for j in _embed_jobs(api) if j["status"] == "succeeded"],
        timeout=VECTOR_BOUND_S, what="the embed job that wrote the vectors to record success")
    assert embeds[-1]["origin"] == "reconcile", embeds

    # the index file deleted under the watching daemon (no ref moves): reconcile indexes
    # and embeds again, because "done" reads the index rather than the job history
    for path in (repo / ".gitquarry").glob("index.db*"):
        path.unlink()
    _wait_vector(api, repo, head, "reconcile to rebuild a deleted index and its vectors")
    assert len(_vector_state(repo)[1]) == 4
