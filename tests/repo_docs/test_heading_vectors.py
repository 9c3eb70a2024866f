"""The second vector per docs chunk, its heading path embedded alone
(``gitquarry.repo_docs.heading_vectors``): stored once per distinct text, no text in the
cache, the hybrid ranking equal to a brute-force sum of the two cosines, partial sets and
checkpoint replays covered, and a cache built before heading vectors migrated (search says
so and keeps the chunk-only ranking until ``index`` adds them). Real git repositories, real
``repo_docs.db`` files, the fake embedder through the provider registry."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from gitquarry.config import Config, load_config
from gitquarry.embedding import create_embedder
from gitquarry.errors import ConfigError
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.cache import DocsCache
from gitquarry.repo_docs.heading_vectors import HEADING_WEIGHT
from gitquarry.repo_docs.indexer import write_checkpoint
from gitquarry.repo_docs.registry import Registry, Selector
from gitquarry.repo_docs.search import Warnings

from .conftest import Repo
from .test_sentinel_scan import SENTINELS, scan

PARA = ("The scheduler keeps a queue of jobs and runs each one when its turn comes; "
        "a job that fails is retried twice before it is reported. ") * 4


def _long_section_docs() -> dict[str, str | bytes | None]:
    # "Queue" is long enough (several paragraphs over the 1500-character bound) to be cut
    # into several chunks that share one heading path
    return {
        "docs/guide.md": ("# Guide\n\nIntro to the guide.\n\n## Queue\n\n"
                          + "\n\n".join(PARA for _ in range(8))
                          + "\n\n## Rollback\n\nRun the blue-green switch to go back.\n"),
        "docs/other.md": "# Other\n\nA page about colours and themes of the dashboard.\n",
        "README.md": "plain text without any heading at all\n",
    }


def _expected_heading_texts() -> dict[str, list[str]]:
    """Per file, the heading text of each chunk, by hand (heading path, else title, else
    path)."""
    return {
        "README.md": ["README.md"],
        "docs/other.md": ["Other"],
    }


def _cache(repo: Repo) -> DocsCache:
    return DocsCache(repo.path / ".gitquarry" / "repo_docs.db")


def _counts(repo: Repo) -> tuple[int, int]:
    with _cache(repo) as cache:
        heads = cache.conn.execute("SELECT count(*) FROM heading_vectors").fetchone()[0]
        links = cache.conn.execute("SELECT count(*) FROM chunk_headings").fetchone()[0]
    return int(heads), int(links)


def _hybrid_order(service: RepoDocsService, sel: Selector, query: str) -> list[str]:
    r = service.search(sel, query, mode="hybrid", limit=20)
    assert r["effective_mode"] == "hybrid"
    return [h["chunk_id"] for h in r["hits"]]


def test_one_heading_vector_per_distinct_text_same_text_same_vector(
        service: RepoDocsService, make_repo: Callable[..., Repo], fake_config: Config) -> None:
    repo = make_repo(_long_section_docs())
    service.register("o/h", repo.path)
    result = service.index(Selector("o/h"))
    assert result.state == "ready" and result.eligible_chunks >= 6
    heads, links = _counts(repo)
    assert links == result.eligible_chunks  # every chunk linked
    # Guide, Guide > Queue (several chunks, one vector), Guide > Rollback, Other, README.md
    assert heads == result.headings_embedded == 5
    embedder = create_embedder(fake_config.embedding, purpose="query")
    assert embedder is not None
    with _cache(repo) as cache:
        stored = {str(d): np.frombuffer(bytes(v), dtype="<f4")
                  for d, v in cache.conn.execute("SELECT text_sha256, vector FROM "
                                                 "heading_vectors")}
        per_chunk = cache.conn.execute(
            "SELECT sc.path, ch.text_sha256 FROM set_chunks sc JOIN chunk_headings ch ON "
            "ch.chunk_id = sc.chunk_id ORDER BY sc.path, sc.ordinal").fetchall()
    texts = ["Guide", "Guide > Queue", "Guide > Rollback", "Other", "README.md"]
    for text in texts:  # the vector of the text embedded on its own, keyed by its digest
        digest = hashlib.sha256(text.encode()).hexdigest()
        assert np.allclose(stored[digest], embedder.embed([text])[0], atol=1e-6), text
    queue = hashlib.sha256(b"Guide > Queue").hexdigest()
    assert sum(1 for _p, d in per_chunk if d == queue) >= 3
    by_path: dict[str, list[str]] = {}
    for path, digest in per_chunk:
        by_path.setdefault(str(path), []).append(str(digest))
    for path, expected in _expected_heading_texts().items():
        assert by_path[path] == [hashlib.sha256(t.encode()).hexdigest() for t in expected]
    again = service.index(Selector("o/h"))
    assert again.up_to_date and again.headings_embedded == 0


def test_edited_body_reuses_the_stored_heading_vectors(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    docs = _long_section_docs()
    repo = make_repo(docs)
    service.register("o/h", repo.path)
    service.index(Selector("o/h"))
    edited = str(docs["docs/guide.md"]).replace("go back", "return to the last release")
    repo.commit({"docs/guide.md": edited, "docs/new.md": "# Other\n\nSame title again.\n"})
    second = service.index(Selector("o/h"))
    assert second.state == "ready" and second.embedded >= 2  # the edited chunk, the new file
    assert second.headings_embedded == 0  # "Guide > Rollback" and "Other" were stored
    heads, _links = _counts(repo)
    assert heads == 5


def _brute_force(service: RepoDocsService, sel: Selector, repo: Repo, query: str,
                 weight: float, fake_config: Config) -> list[tuple[str, float]]:
    """Every embedded chunk scored from scratch: the chunk's stored vector and the vector of
    its heading text recomputed by the embedder (never read from the heading tables)."""
    embedder = create_embedder(fake_config.embedding, purpose="query")
    assert embedder is not None
    q = embedder.embed([query])[0].astype(np.float64)
    resolved, reader = service._resolve(sel, None, False)
    index, _n = service._lexical_index(resolved, reader, None)
    titles: dict[str, str] = {}
    for row in index.rows:
        if row.heading_path:
            titles.setdefault(row.path, row.heading_path[0])
    with _cache(repo) as cache:
        vec = {str(c): np.frombuffer(bytes(v), dtype="<f4").astype(np.float64)
               for c, v in cache.conn.execute("SELECT chunk_id, vector FROM vectors")}
    scores: dict[str, float] = {}
    for row in index.rows:
        text = " > ".join(row.heading_path) or titles.get(row.path, "") or row.path
        head = embedder.embed([text])[0].astype(np.float64)
        scores[row.chunk_id] = float(vec[row.chunk_id] @ q + weight * (head @ q))
    return sorted(scores.items(), key=lambda t: (-t[1], t[0]))


@pytest.mark.parametrize("weight", [HEADING_WEIGHT, 1.0])
def test_cosine_ranking_equals_brute_force_sum(make_repo: Callable[..., Repo],
                                               fake_config: Config, weight: float) -> None:
    from gitquarry.retrieval.vectors import cosine_top_k

    repo = make_repo(_long_section_docs())
    config = fake_config.replaced(docs={"heading_weight": weight})
    with RepoDocsService(config, Registry()) as service:
        service.register("o/h", repo.path)
        sel = Selector("o/h")
        service.index(sel)
        resolved, _reader = service._resolve(sel, None, False)
        for query in ("queue of jobs retried", "rollback blue green", "colours", "guide"):
            with service._open_cache(resolved.binding) as cache:
                warnings = Warnings()
                side = service._semantic(resolved, cache, warnings, {})
            assert side is not None and side.ranking is not None and not warnings.details
            got = cosine_top_k(side.ranking, side.embed_query(query), 100)
            reference = _brute_force(service, sel, repo, query, weight, fake_config)
            assert len(got) == len(reference)
            ref = dict(reference)
            for (i, score), (cid, ref_score) in zip(got, reference, strict=True):
                assert abs(score - ref[side.chunk_ids[i]]) < 1e-5
                if side.chunk_ids[i] != cid:  # only a tie within float32 rounding may swap
                    assert abs(ref_score - ref[side.chunk_ids[i]]) < 1e-5
            # the hit's semantic_score stays the chunk's own cosine
            r = service.search(sel, query, mode="hybrid")
            q = side.embed_query(query)
            row_of = {c: i for i, c in enumerate(side.chunk_ids)}
            for hit in r["hits"]:
                if hit["semantic_score"] is not None:
                    own = float(side.matrix[row_of[hit["chunk_id"]]] @ q)
                    assert abs(hit["semantic_score"] - own) < 1e-5


def test_heading_weight_zero_embeds_no_headings_and_ranks_by_chunks(
        make_repo: Callable[..., Repo], fake_config: Config, tmp_path: Path) -> None:
    repo = make_repo(_long_section_docs())
    config = fake_config.replaced(docs={"heading_weight": 0.0})
    with RepoDocsService(config, Registry()) as service:
        service.register("o/h", repo.path)
        sel = Selector("o/h")
        result = service.index(sel)
        assert result.state == "ready" and result.headings_embedded == 0
        assert _counts(repo) == (0, 0)
        r = service.search(sel, "queue of jobs", mode="hybrid")
        assert r["effective_mode"] == "hybrid" and r["warnings"] == []
    user = tmp_path / "config.toml"
    for bad in ("-0.1", "nan", "2.5"):
        user.write_text(f"[docs]\nheading_weight = {bad}\n")
        with pytest.raises(ConfigError, match="heading_weight"):
            load_config(None, user_file=user)
    user.write_text("[docs]\nheading_weight = 0.5\n")
    assert load_config(None, user_file=user).docs.heading_weight == 0.5


def test_partial_set_has_a_heading_vector_for_every_embedded_chunk(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    from gitquarry.errors import IndexCancelledError

    repo = make_repo(_long_section_docs())
    service.register("o/h", repo.path)
    sel = Selector("o/h")
    service.config = service.config.replaced(embedding={"batch_size": 2})
    calls = {"n": 0}

    def cancel_after_one() -> bool:
        calls["n"] += 1
        return calls["n"] > 1

    with pytest.raises(IndexCancelledError):
        service.index(sel, should_cancel=cancel_after_one)
    coverage = service.status(sel)["head_set"]["coverage"]
    assert coverage["state"] == "partial" and 0 < coverage["embedded_chunks"] < \
        coverage["eligible_chunks"]
    _heads, links = _counts(repo)
    assert links == coverage["embedded_chunks"]
    r = service.search(sel, "queue of jobs", mode="hybrid")
    codes = [d["code"] for d in r["warning_details"]]
    assert r["effective_mode"] == "hybrid" and codes == ["partial_revision_set"]
    resumed = service.index(sel)
    assert resumed.state == "ready"
    assert _counts(repo)[1] == resumed.eligible_chunks


def test_vectors_replayed_from_a_checkpoint_get_their_heading_vectors(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    repo = make_repo(_long_section_docs())
    service.register("o/h", repo.path)
    sel = Selector("o/h")
    first = service.index(sel)
    cache_dir = repo.path / ".gitquarry"
    with DocsCache(cache_dir / "repo_docs.db", writer=True) as cache:
        rows = [(str(c), str(s), np.frombuffer(bytes(v), dtype="<f4").copy())
                for c, s, v in cache.conn.execute(
                    "SELECT chunk_id, embed_input_sha256, vector FROM vectors")]
        with cache.store.atomic() as conn:
            for table in ("vectors", "chunk_headings", "heading_vectors"):
                conn.execute(f"DELETE FROM {table}")
        cache.finish_set(first.revision_set_id, "partial")
    write_checkpoint(cache_dir, first.revision_set_id, first.namespace_id, rows)
    service.close()  # drop the matrices held by this service
    again = service.index(sel)
    assert again.state == "ready" and again.replayed == len(rows) and again.embedded == 0
    assert again.headings_embedded == 5
    assert _counts(repo) == (5, first.eligible_chunks)


def _make_pre_heading_cache(repo: Repo) -> None:
    """Turn the cache into what gitquarry wrote before heading vectors: their tables and
    their migration record gone, schema version 2 (the tables created by the two older
    steps are untouched)."""
    db = repo.path / ".gitquarry" / "repo_docs.db"
    conn = sqlite3.connect(db)
    try:
        conn.execute("DROP TABLE heading_vectors")
        conn.execute("DROP TABLE chunk_headings")
        conn.execute("DELETE FROM _migrations WHERE name = 's4-docs-vec_0003_heading_vectors'")
        conn.execute("PRAGMA user_version = 2")
        conn.commit()
    finally:
        conn.close()


def test_cache_built_before_heading_vectors_is_migrated_then_filled(
        make_repo: Callable[..., Repo], fake_config: Config) -> None:
    repo = make_repo(_long_section_docs())
    queries = ["queue of jobs retried", "rollback blue green", "colours and themes"]
    with RepoDocsService(fake_config, Registry()) as service:
        service.register("o/h", repo.path)
        sel = Selector("o/h")
        built = service.index(sel)
        fresh = {q: _hybrid_order(service, sel, q) for q in queries}
    chunk_only_config = fake_config.replaced(docs={"heading_weight": 0.0})
    with RepoDocsService(chunk_only_config, Registry()) as service:
        chunk_only = {q: _hybrid_order(service, Selector("o/h"), q) for q in queries}
    _make_pre_heading_cache(repo)
    with RepoDocsService(fake_config, Registry()) as service:
        sel = Selector("o/h")
        for q in queries:  # opened: migrated; ranked by the chunk vectors, and it says so
            r = service.search(sel, q, mode="hybrid", limit=20)
            assert r["effective_mode"] == "hybrid"
            assert [d["code"] for d in r["warning_details"]] == ["heading_vectors_missing"]
            assert [h["chunk_id"] for h in r["hits"]] == chunk_only[q]
        assert _counts(repo) == (0, 0)
        result = service.index(sel)  # the same set: only the heading vectors are added
        assert result.state == "ready" and result.revision_set_id == built.revision_set_id
        assert result.embedded == 0 and result.headings_embedded == 5
        assert not result.up_to_date
        assert [w["code"] for w in result.warnings] == ["heading_vectors_added"]
        for q in queries:  # the same long-lived service sees them at once
            r = service.search(sel, q, mode="hybrid", limit=20)
            assert r["warnings"] == []
            assert [h["chunk_id"] for h in r["hits"]] == fresh[q]
        assert service.index(sel).up_to_date


def test_heading_texts_never_reach_the_cache(make_repo: Callable[..., Repo],
                                             fake_config: Config) -> None:
    files: dict[str, str | bytes | None] = {
        "docs/a.md": (f"# {SENTINELS[0]} handbook\n\n## {SENTINELS[1]} steps\n\n"
                      "Run the steps in order.\n"),
        "docs/b.rst": f"{SENTINELS[2]}\n{'=' * len(SENTINELS[2])}\n\nA page.\n",
    }
    repo = make_repo(files)
    (repo.path / "docs/b.rst").write_text(f"{SENTINELS[3]}\n{'=' * len(SENTINELS[3])}\n\n"
                                          "Edited in the working tree.\n")
    with RepoDocsService(fake_config, Registry()) as service:
        service.register("o/s", repo.path)
        sel = Selector("o/s")
        # a.md is one chunk (its short first section merges into the next): "<s0> handbook";
        # b.rst: "<s2>"
        assert service.index(sel).headings_embedded == 2
        assert service.index(sel, include_worktree=True).state == "ready"
        for word in SENTINELS[:3]:
            r = service.search(sel, word, mode="hybrid")
            assert r["effective_mode"] == "hybrid" and r["hits"]
    assert _counts(repo)[0] == 3  # and the overlay's "<s3>"
    assert scan(Path(repo.path / ".gitquarry")) == []


def test_gc_drops_heading_vectors_no_remaining_set_uses(
        service: RepoDocsService, make_repo: Callable[..., Repo]) -> None:
    from gitquarry.service.docs_jobs import collect_garbage

    docs = _long_section_docs()
    repo = make_repo(docs)
    service.register("o/h", repo.path)
    sel = Selector("o/h")
    service.index(sel)
    repo.commit({"docs/guide.md": str(docs["docs/guide.md"]).replace("## Rollback",
                                                                    "## Undo")})
    assert service.index(sel).headings_embedded == 1  # "Guide > Undo"
    cache_dir = repo.path / ".gitquarry"
    db = sqlite3.connect(cache_dir / "repo_docs.db")
    with db:  # both finished long ago: the older one is past the age limit, not the newest
        db.execute("UPDATE revision_sets SET completed_at = 1800000000, updated_at = 1800000000")
    db.close()
    report = collect_garbage(cache_dir, now=1_800_000_000 + 31 * 86_400)
    assert report.reasons == {"age": 1}, report
    rollback = hashlib.sha256(b"Guide > Rollback").hexdigest()
    undo = hashlib.sha256(b"Guide > Undo").hexdigest()
    with _cache(repo) as cache:
        digests = {str(r[0]) for r in cache.conn.execute(
            "SELECT text_sha256 FROM heading_vectors")}
        dangling = cache.conn.execute(
            "SELECT count(*) FROM chunk_headings WHERE chunk_id NOT IN "
            "(SELECT chunk_id FROM set_chunks)").fetchone()[0]
    assert undo in digests and rollback not in digests and len(digests) == 5
    assert dangling == 0
    fresh = RepoDocsService(service.config, Registry())
    try:
        r = fresh.search(sel, "undo the release", mode="hybrid")
        assert r["effective_mode"] == "hybrid" and r["warnings"] == []
    finally:
        fresh.close()
