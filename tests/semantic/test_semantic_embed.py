"""The embedding pipeline with the fake embedder: batches, progress, resume after an
interruption, no re-embedding, namespace switches, and ``gitquarry index --no-embed``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import from_blob
from gitquarry.embedding.fake import HashingEmbedder
from gitquarry.embedding.registry import (
    EmbedderProvider,
    register_provider,
)
from gitquarry.errors import EmbeddingError
from gitquarry.history.index.document import text_format

from .conftest import GitRepo, Harness, RecordingProgress, write_user_config

N_COMMITS = 10


def build_repo(
    make_repo: Callable[[str], GitRepo], n: int = N_COMMITS
) -> tuple[GitRepo, list[str]]:
    repo = make_repo("app")
    hashes = [
        repo.commit(f"Change module {n} handling", {f"src/mod_{n}.py": f"VALUE = {n}\n"})
        for n in range(n)
    ]
    return repo, hashes


class FlakyEmbedder(HashingEmbedder):
    """The fake embedder, failing on its ``fail_on``-th batch (1-based)."""

    def __init__(self, dimensions: int, fail_on: int | None) -> None:
        super().__init__(dimensions)
        self.fail_on = fail_on

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        if self.fail_on is not None and self.calls + 1 == self.fail_on:
            self.calls += 1
            raise EmbeddingError("simulated provider failure mid-run")
        return super()._embed_batch(texts)


class CountingProvider:
    """Replaces provider "fake" with one that records every embedder it builds."""

    def __init__(self) -> None:
        self.made: list[FlakyEmbedder] = []
        self.fail_on: int | None = None

    def factory(self, config: EmbeddingConfig) -> FlakyEmbedder:
        dims = int(config.model) if config.model.isdigit() else 64
        embedder = FlakyEmbedder(dims, self.fail_on)
        self.made.append(embedder)
        return embedder

    @property
    def texts_embedded(self) -> int:
        return sum(e.texts_embedded for e in self.made)


@pytest.fixture
def counting(fake_provider: EmbedderProvider) -> Iterator[CountingProvider]:
    counter = CountingProvider()
    register_provider(
        EmbedderProvider(name="fake", factory=counter.factory, data_boundary="local_process"),
        replace=True,
    )
    yield counter  # fake_provider_registered unregisters "fake" afterwards


def vectors(harness: Harness) -> dict[tuple[int, int], tuple[str, bytes]]:
    return {
        (r[0], r[1]): (r[2], r[3])
        for r in harness.rows(
            "SELECT namespace_id, commit_id, text_sha256, vector FROM commit_vectors"
        )
    }


def test_embeds_in_batches_with_progress(
    harness: Harness, counting: CountingProvider, make_repo: Callable[[str], GitRepo]
) -> None:
    build_repo(make_repo)
    harness.batch_size = 4
    progress = RecordingProgress()
    _, extras = harness.index(progress=progress)
    emb = extras.embeddings
    assert emb is not None
    assert emb["embedded"] == N_COMMITS and emb["reused"] == 0
    assert emb["with_vectors"] == emb["total_commits"] == N_COMMITS
    assert emb["namespace"] == f"fake|hashing-bow-64|64|{text_format()}"
    assert [e.calls for e in counting.made] == [3]  # 4 + 4 + 2
    phases = [p for kind, p in progress.events if kind == "phase"]
    assert phases[-1] == ("embedding, newest first (hashing-bow-64)", N_COMMITS)
    after = progress.events[progress.events.index(("phase", phases[-1])) + 1 :]
    assert [units for kind, units in after if kind == "advance"] == [4, 4, 2]
    assert any("Embeddings: 10 computed" in line for line in extras.summary_lines())
    # stored vectors are unit float32 of the namespace's dimensions
    stored = vectors(harness)
    assert len(stored) == N_COMMITS
    for _sha, blob in stored.values():
        vec = from_blob(blob, 64)
        assert vec.dtype == np.float32
        assert np.linalg.norm(vec) == pytest.approx(1.0, abs=1e-5)


def test_interrupted_run_resumes_without_duplicates(
    harness: Harness, counting: CountingProvider, make_repo: Callable[[str], GitRepo]
) -> None:
    build_repo(make_repo)
    harness.batch_size = 3
    counting.fail_on = 3  # batches 1 and 2 succeed, the third raises
    # The provider failure is reported, not raised: keyword indexing already landed.
    _, failed = harness.index()
    assert failed.embeddings is None
    assert len(failed.errors) == 1 and "simulated" in failed.errors[0]
    assert harness.scalar("SELECT count(*) FROM commit_vectors") == 6  # finished batches kept
    assert harness.scalar("SELECT count(*) FROM git_commits") == N_COMMITS  # keyword-searchable
    kept = vectors(harness)
    lexical = harness.query("module handling", mode="lexical", top_n=20)
    assert len(lexical.results) == N_COMMITS
    hybrid = harness.query("module handling", mode="hybrid", top_n=20)
    assert [w.code for w in hybrid.warnings] == ["partial_embeddings"]
    assert hybrid.embedded_fraction == 0.6

    counting.fail_on = None
    _, extras = harness.index()
    assert extras.embeddings is not None
    assert extras.embeddings["embedded"] == N_COMMITS - 6  # only what was missing
    assert counting.made[-1].texts_embedded == N_COMMITS - 6
    assert extras.embeddings["with_vectors"] == N_COMMITS
    stored = vectors(harness)
    assert len(stored) == N_COMMITS
    assert harness.scalar(
        "SELECT count(*) FROM (SELECT DISTINCT namespace_id, commit_id FROM commit_vectors)"
    ) == N_COMMITS
    assert all(stored[key] == value for key, value in kept.items())  # earlier batches untouched
    assert harness.scalar("SELECT count(*) FROM embedding_namespaces") == 1
    full = harness.query("module handling", mode="hybrid", top_n=20)
    assert full.warnings == [] and full.embedded_fraction == 1.0


def test_second_run_embeds_nothing(
    harness: Harness, counting: CountingProvider, make_repo: Callable[[str], GitRepo]
) -> None:
    repo, _ = build_repo(make_repo)
    harness.index()
    first = vectors(harness)
    _, extras = harness.index()
    assert extras.embeddings is not None
    assert extras.embeddings["embedded"] == 0 and extras.embeddings["reused"] == 0
    assert counting.made[-1].calls == 0
    assert vectors(harness) == first
    # one new commit: exactly one text is embedded
    repo.commit("Add retry to network client", {"src/net.py": "RETRIES = 3\n"})
    _, extras = harness.index()
    assert extras.embeddings is not None
    assert extras.embeddings["embedded"] == 1
    assert counting.made[-1].texts_embedded == 1
    assert {k: v for k, v in vectors(harness).items() if k in first} == first


def test_commit_with_identical_text_reuses_the_vector(
    harness: Harness, counting: CountingProvider, make_repo: Callable[[str], GitRepo]
) -> None:
    """A cherry-pick with the same identities, date, message and diff has the same document
    text as the original: its vector is copied, not recomputed."""
    repo, _ = build_repo(make_repo, 3)
    repo.git("checkout", "-q", "-b", "feature")
    picked = repo.commit("Add audit log", {"src/audit.py": "AUDIT = True\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("Tune cache size", {"src/cache.py": "SIZE = 64\n"})
    harness.index()
    repo.git("cherry-pick", picked)  # another parent; same identities, message and diff
    copy = repo.git("rev-parse", "HEAD")
    assert copy != picked
    _, extras = harness.index()
    assert extras.embeddings is not None
    assert extras.embeddings == {**extras.embeddings, "embedded": 0, "reused": 1}
    assert counting.made[-1].calls == 0
    blobs = dict(
        harness.rows(
            "SELECT c.hash, v.vector FROM commit_vectors v JOIN git_commits c ON c.id = v.commit_id"
        )
    )
    assert blobs[copy] == blobs[picked]


def test_namespace_switch_reembeds_and_never_mixes_spaces(
    harness: Harness, counting: CountingProvider, make_repo: Callable[[str], GitRepo]
) -> None:
    build_repo(make_repo)
    harness.index()  # fake, 64 dims
    old = vectors(harness)
    (old_ns,) = {ns for ns, _ in old}

    # switch model, index without vectors: searches must not use the 64-d vectors
    harness.model = "32"
    harness.index(embed=False)
    response = harness.query("module handling", mode="hybrid")
    assert response.effective_mode == "lexical"
    assert [w.code for w in response.warnings] == ["no_embeddings"]
    assert "hashing-bow-32" in response.warnings[0].message

    _, extras = harness.index()
    assert extras.embeddings is not None
    assert extras.embeddings["embedded"] == N_COMMITS  # the new space is computed in full
    assert extras.embeddings["namespace"] == f"fake|hashing-bow-32|32|{text_format()}"
    namespaces = harness.rows("SELECT id, key, dimensions FROM embedding_namespaces ORDER BY id")
    assert [(key, dims) for _, key, dims in namespaces] == [
        (f"fake|hashing-bow-64|64|{text_format()}", 64),
        (f"fake|hashing-bow-32|32|{text_format()}", 32),
    ]
    new_ns = namespaces[1][0]
    now = vectors(harness)
    assert {k: v for k, v in now.items() if k[0] == old_ns} == old  # untouched
    assert all(len(blob) == 4 * 32 for (ns, _), (_, blob) in now.items() if ns == new_ns)

    # the 32-d search scores with 32-d vectors: similarities match a fresh computation
    hybrid = harness.query("module handling", mode="semantic", top_n=N_COMMITS)
    assert hybrid.effective_mode == "semantic" and hybrid.warnings == []
    probe = HashingEmbedder(32)
    qvec = probe.embed(["module handling"])[0]
    by_hash = {
        h: from_blob(blob, 32)
        for h, blob in harness.rows(
            "SELECT c.hash, v.vector FROM commit_vectors v "
            "JOIN git_commits c ON c.id = v.commit_id WHERE v.namespace_id = ?",
            new_ns,
        )
    }
    for r in hybrid.results:
        assert r.similarity == pytest.approx(float(by_hash[r.hash] @ qvec), abs=1e-5)

    # switching back reuses the old namespace: nothing is embedded again
    harness.model = ""
    _, extras = harness.index()
    assert extras.embeddings is not None and extras.embeddings["embedded"] == 0
    assert counting.made[-1].calls == 0
    assert harness.query("module handling", mode="hybrid").effective_mode == "hybrid"


def test_cli_index_no_embed_leaves_vectors_absent(
    fake_provider: EmbedderProvider,
    workspace_dir: Path,
    make_repo: Callable[[str], GitRepo],
    cli: Callable[..., tuple[int, str, str]],
) -> None:
    build_repo(make_repo, 4)
    write_user_config('[embedding]\nprovider = "fake"\nbatch_size = 3\n')
    code, out, err = cli("index", str(workspace_dir), "--no-embed", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["embeddings"] is None
    harness = Harness(workspace_dir)
    assert harness.scalar("SELECT count(*) FROM commit_vectors") == 0
    assert harness.scalar("SELECT count(*) FROM git_commits") == 4

    code, out, err = cli("history", "module", "--project", str(workspace_dir), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["effective_mode"] == "lexical" and data["requested_mode"] == "hybrid"
    assert [w["code"] for w in data["warning_details"]] == ["no_embeddings"]

    code, out, err = cli("index", str(workspace_dir), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["embeddings"]["embedded"] == 4 and data["embeddings"]["with_vectors"] == 4
    code, out, err = cli("index", str(workspace_dir))
    assert code == 0, err
    # nothing new: the run says so and computes no vector
    assert "up to date" in out and "Embeddings:" not in out
    code, out, err = cli("index", str(workspace_dir), "--json")
    data = json.loads(out)
    assert data["embeddings"]["embedded"] == 0 and data["embeddings"]["with_vectors"] == 4
    code, out, err = cli("history", "module", "--project", str(workspace_dir), "--json")
    assert json.loads(out)["effective_mode"] == "hybrid"


def test_same_model_name_with_other_dimensions_never_mixes_spaces(
    harness: Harness, fake_provider: EmbedderProvider, make_repo: Callable[[str], GitRepo]
) -> None:
    """An HTTP provider can change dimensions under one model id (a served model swapped, a
    `dimensions` setting). The namespace key differs by dimensions: a query vector must never
    be compared with vectors of another length, and the right space is used once it exists."""

    def factory(config: EmbeddingConfig) -> HashingEmbedder:
        embedder = HashingEmbedder(int(config.model))
        embedder.model = "served-model"
        return embedder

    register_provider(
        EmbedderProvider(name="fake", factory=factory, data_boundary="local_process"),
        replace=True,
    )
    build_repo(make_repo, 4)
    harness.model = "64"
    harness.index()
    harness.model = "32"
    harness.index(embed=False)
    response = harness.query("module handling", mode="hybrid")
    assert response.effective_mode == "lexical"
    assert response.embedded_fraction == 0.0
    assert [w.code for w in response.warnings] == ["no_embeddings"]
    assert "served-model (32 dimensions)" in response.warnings[0].message
    assert response.results  # still answered by keywords

    harness.index()  # computes the 32-d space
    for dims in ("32", "64"):  # both spaces now exist; each query uses its own
        harness.model = dims
        semantic = harness.query("module handling", mode="semantic", top_n=4)
        assert semantic.effective_mode == "semantic", dims
        assert semantic.warnings == [] and semantic.embedded_fraction == 1.0
        qvec = HashingEmbedder(int(dims)).embed(["module handling"])[0]
        stored = {
            h: from_blob(blob, int(dims))
            for h, blob in harness.rows(
                "SELECT c.hash, v.vector FROM commit_vectors v "
                "JOIN git_commits c ON c.id = v.commit_id "
                "JOIN embedding_namespaces n ON n.id = v.namespace_id WHERE n.dimensions = ?",
                int(dims),
            )
        }
        for r in semantic.results:
            assert r.similarity == pytest.approx(float(stored[r.hash] @ qvec), abs=1e-5)


def test_newest_commits_are_embedded_first(
    harness: Harness, counting: CountingProvider, make_repo: Callable[[str], GitRepo]
) -> None:
    """An interrupted first run leaves the newest commits with vectors."""
    _, hashes = build_repo(make_repo)
    harness.batch_size = 4
    counting.fail_on = 2  # the first batch lands, the second raises
    harness.index()
    embedded = {
        h for (h,) in harness.rows(
            "SELECT c.hash FROM commit_vectors v JOIN git_commits c ON c.id = v.commit_id"
        )
    }
    assert embedded == set(hashes[-4:])


def test_document_format_change_reembeds_says_so_and_drops_old_vectors(
    harness: Harness, counting: CountingProvider, make_repo: Callable[[str], GitRepo],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gitquarry.history.index import document

    build_repo(make_repo)
    monkeypatch.setattr(document, "DEFAULT_FORMAT", document.DocumentFormat("v1", 256))
    harness.index()
    old_key = f"fake|hashing-bow-64|64|{text_format()}"
    assert old_key.endswith("commit-v1-t256")
    monkeypatch.setattr(document, "DEFAULT_FORMAT", document.DocumentFormat("v2", 128))
    # searching before the re-embedding never uses the old format's vectors
    before = harness.query("module handling", mode="hybrid")
    assert [w.code for w in before.warnings] == ["no_embeddings"]

    _, extras = harness.index()
    emb = extras.embeddings
    assert emb is not None and emb["embedded"] == N_COMMITS
    assert emb["replaces"] == [old_key] and emb["removed"] == [old_key]
    lines = extras.summary_lines()
    assert any("format changed" in line and "newest" in line for line in lines)
    assert any("removed the replaced vectors" in line for line in lines)
    keys = dict(harness.rows(
        "SELECT n.key, count(v.commit_id) FROM embedding_namespaces n "
        "LEFT JOIN commit_vectors v ON v.namespace_id = n.id GROUP BY n.id"
    ))
    assert keys == {old_key: 0, f"fake|hashing-bow-64|64|{text_format()}": N_COMMITS}
    after = harness.query("module handling", mode="hybrid")
    assert after.warnings == [] and after.embedded_fraction == 1.0
