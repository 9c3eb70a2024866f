"""Embedding as a daemon job: a provider plugin (registered through the real
``gitquarry.embedders`` entry-point group) that is slow and logs every text it embeds; the
daemon is killed with SIGKILL mid-embedding and restarted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from .conftest import FAST_CONFIG, Api, DaemonProcess, bulk_repo

PLUGIN = '''
import time
from pathlib import Path
import os

from gitquarry.embedding.fake import HashingEmbedder
from gitquarry.embedding.registry import EmbedderProvider


class SlowLogged(HashingEmbedder):
    provider = "slowfake"

    def _embed_batch(self, texts):
        time.sleep(float(os.environ.get("GQ_SLOW_S", "0.2")))
        out = super()._embed_batch(texts)
        with open(os.environ["GQ_EMBED_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{len(texts)}\\n")
        return out


def provider():
    return EmbedderProvider(name="slowfake", factory=lambda config: SlowLogged(),
                            data_boundary="local_process", description="test")
'''


def _plugin(root: Path) -> Path:
    root.mkdir()
    (root / "gq_slow_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = root / "gq_slow_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gq-slow-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[gitquarry.embedders]\nslowfake = gq_slow_plugin:provider\n")
    return root


def _vectors(repo: Path) -> list[int]:
    conn = sqlite3.connect(f"file:{repo / '.gitquarry' / 'index.db'}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT commit_id FROM commit_vectors")]
    finally:
        conn.close()


@pytest.mark.slow  # issue 24: >= 10 s under load (~1.5 s idle); CI runs it
def test_kill_9_mid_embedding_resumes_without_duplicates_or_lost_vectors(
    daemon: DaemonProcess, api: Api, tmp_path: Path, service_env: dict[str, str]
) -> None:
    plugin = _plugin(tmp_path / "plugin")
    log = tmp_path / "embedded.log"
    env = dict(service_env, PYTHONPATH=str(plugin), GQ_EMBED_LOG=str(log), GQ_SLOW_S="0.2")
    Path(env["GITQUARRY_CONFIG"]).write_text(
        FAST_CONFIG.replace('provider = "none"', 'provider = "slowfake"\nbatch_size = 10'),
        encoding="utf-8")
    repo = bulk_repo(tmp_path / "repo", 300, lines=3)
    daemon.start(env=env)
    api.wait_done(api.call("watch", path=str(repo))["job"]["id"])

    def embedding_midway() -> str | None:
        for job in api.jobs(status="running"):
            if job["type"] == "history_embed" and 30 <= (job["progress"].get("done") or 0) < 250:
                return str(job["id"])
        return None

    job_id = api.wait_for(embedding_midway, timeout=60, what="embedding under way")
    daemon.kill9()
    before = _vectors(repo)
    assert 0 < len(before) < 300

    daemon.start(env=env)
    job = api.wait_done(job_id, timeout=120)
    assert job["status"] == "succeeded" and job["runs"] == 2 and job["attempts"] == 0
    after = _vectors(repo)
    assert len(after) == len(set(after)) == 300  # every commit once, none twice
    assert set(before) <= set(after)
    computed = sum(int(n) for n in log.read_text().split())
    # only the batch in flight at the kill may have been computed twice
    assert 300 <= computed <= 300 + 10, computed
    assert job["result"]["embedded"] + job["result"]["reused"] == 300 - len(before)
