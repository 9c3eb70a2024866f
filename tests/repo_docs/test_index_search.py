"""Revision sets, reuse, citations, missing objects, boundaries, modes: on real repositories."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitquarry.config import Config
from gitquarry.errors import RepoDocsBoundaryBlockedError, RevisionNotFoundError
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.cache import DocsCache
from gitquarry.repo_docs.registry import Registry, Selector

from .conftest import DOCS, Repo

SEL = Selector("acme/widget")


def paths(response: dict[str, Any]) -> list[str]:
    return [h["citation"]["path"] for h in response["hits"]]


def test_fulltext_needs_no_index_and_cites_exact_lines(service: RepoDocsService,
                                                       registered: Selector,
                                                       docs_repo: Repo) -> None:
    r = service.search(registered, "worker_connections", mode="fulltext")
    assert r["effective_mode"] == "fulltext" and r["coverage"]["state"] == "none"
    hit = r["hits"][0]
    cite = hit["citation"]
    assert cite["path"] == "docs/deploy.md" and cite["authority"] == "git"
    lines = DOCS["docs/deploy.md"].split("\n")[cite["line_start"] - 1 : cite["line_end"]]
    assert any("worker_connections" in line for line in lines)
    assert "<b>worker_connections</b>" in hit["snippet"]
    assert cite["commit_oid"] == docs_repo.git("rev-parse", "HEAD")
    assert cite["blob_oid"] == docs_repo.git("rev-parse", "HEAD:docs/deploy.md")
    assert r["corpus_kind"] == "repository_docs" and r["repo_id"] == "acme/widget"


def test_response_shape_and_no_absolute_paths(service: RepoDocsService, registered: Selector,
                                              docs_repo: Repo, tmp_path: Path) -> None:
    service.index(registered)
    for mode in ("hybrid", "fulltext"):
        r = service.search(registered, "reverse proxy", mode=mode)
        for key in ("repo_id", "corpus_kind", "query", "requested_revision",
                    "effective_revision", "requested_mode", "effective_mode", "authority",
                    "overlay_digest", "revision_set_id", "policy_hash", "policy_source",
                    "namespace_id", "coverage", "hits", "warnings", "warning_details"):
            assert key in r, key
        assert set(r["coverage"]) == {"state", "eligible_files", "eligible_chunks",
                                      "embedded_chunks", "reused_chunks", "failed_chunks",
                                      "missing_objects"}
        assert set(r["hits"][0]) >= {"rank", "chunk_id", "heading_path", "snippet", "score",
                                     "lexical_score", "semantic_score", "citation"}
        assert r["effective_mode"] == mode
    outputs = [service.status(registered), service.plan(registered),
               service.policy(registered), service.sources(),
               service.index(registered).to_dict()]
    text = json.dumps([*outputs, r])
    assert str(tmp_path) not in text and str(docs_repo.path) not in text
    assert '"/' not in text.replace('"/b>', "")


def test_index_builds_ready_set_and_reindex_is_up_to_date(service: RepoDocsService,
                                                          registered: Selector) -> None:
    first = service.index(registered)
    assert first.state == "ready" and first.eligible_files == 3
    assert first.embedded == first.eligible_chunks > 0
    again = service.index(registered)
    assert again.up_to_date and again.revision_set_id == first.revision_set_id


def test_rename_and_unchanged_files_reuse_all_vectors(service: RepoDocsService,
                                                      registered: Selector,
                                                      docs_repo: Repo) -> None:
    first = service.index(registered)
    (docs_repo.path / "docs/ops").mkdir()
    docs_repo.git("mv", "docs/deploy.md", "docs/ops/deploy.md")
    docs_repo.git("commit", "-q", "-m", "move")
    second = service.index(registered)
    assert second.revision_set_id != first.revision_set_id
    assert second.embedded == 0 and second.reused == second.eligible_chunks
    assert second.blobs_read == 0  # membership from known blobs: nothing re-read
    docs_repo.commit({"src/app.py": "print('still not docs')\n"})
    third = service.index(registered)
    assert third.embedded == 0 and third.reused == third.eligible_chunks
    r = service.search(registered, "gunicorn", mode="hybrid")
    assert paths(r)[0] == "docs/ops/deploy.md"


def test_historical_citations_survive_head_moves_and_edits(service: RepoDocsService,
                                                           registered: Selector,
                                                           docs_repo: Repo) -> None:
    old_head = docs_repo.git("rev-parse", "HEAD")
    docs_repo.git("tag", "v1.0")
    service.index(registered)
    docs_repo.commit({"docs/deploy.md": "# Deployment\n\nNow on Kubernetes only.\n"})
    service.index(registered)
    old = service.search(registered, "gunicorn", revision="v1.0", mode="hybrid")
    assert old["effective_revision"] == old_head and old["effective_mode"] == "hybrid"
    assert paths(old)[0] == "docs/deploy.md"
    assert "gunicorn" in old["hits"][0]["snippet"]
    new = service.search(registered, "gunicorn", mode="fulltext")
    assert "docs/deploy.md" not in paths(new)
    assert service.search(registered, "gunicorn", revision="HEAD~1",
                          mode="fulltext")["hits"]
    with pytest.raises(RevisionNotFoundError):
        service.search(registered, "x", revision="no-such-tag")


def test_missing_blob_is_recorded_and_counted(service: RepoDocsService,
                                             make_repo: Callable[..., Repo]) -> None:
    repo = make_repo({"docs/a.md": "# A\n\nalpha text\n", "docs/b.md": "# B\n\nbeta text\n"})
    oid = repo.git("rev-parse", "HEAD:docs/b.md")
    obj = repo.path / ".git" / "objects" / oid[:2] / oid[2:]
    os.chmod(obj, 0o644)
    obj.unlink()
    service.register("o/r", repo.path)
    result = service.index(Selector("o/r"))
    assert result.missing_objects == 1
    assert result.exclusions_by_reason == {"git_object_unavailable": 1}
    plan = service.plan(Selector("o/r"))
    assert plan["exclusions"] == [{"path": "docs/b.md", "reason": "git_object_unavailable",
                                   "size": -1}]  # ls-tree cannot size a missing blob
    assert paths(service.search(Selector("o/r"), "alpha", mode="fulltext")) == ["docs/a.md"]


def test_hit_with_vanished_blob_is_dropped_with_typed_warning(
    service: RepoDocsService, make_repo: Callable[..., Repo]
) -> None:
    repo = make_repo({"docs/a.md": "# A\n\nalpha text\n", "docs/b.md": "# B\n\nalpha beta\n"})
    service.register("o/r", repo.path)
    service.index(Selector("o/r"))
    oid = repo.git("rev-parse", "HEAD:docs/b.md")
    obj = repo.path / ".git" / "objects" / oid[:2] / oid[2:]
    os.chmod(obj, 0o644)
    obj.unlink()
    fresh = RepoDocsService(service.config, service.registry)
    try:
        r = fresh.search(Selector("o/r"), "alpha", mode="fulltext")
    finally:
        fresh.close()
    assert paths(r) == ["docs/a.md"]


def test_excluded_kinds_are_counted(service: RepoDocsService,
                                    make_repo: Callable[..., Repo]) -> None:
    repo = make_repo({
        "docs/ok.md": "# ok\n",
        "docs/bin.md": b"# b\x00inary\n",
        "docs/latin1.md": "caf\xe9".encode("latin-1"),
        "docs/big.md": "# big\n" + "x" * 5000,
        "docs/lfs.md": "version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 9\n",
        "docs/logo.png": b"\x89PNG\r\n",
        "docs/gen/api.md": "# generated\n",
        ".gitquarry.yaml": "repository_docs:\n  schema: 1\n  exclude: [docs/gen/**]\n",
    })
    (repo.path / "docs/link.md").symlink_to("ok.md")
    repo.commit({})
    service.config = service.config.replaced(docs={"max_blob_bytes": 4096})
    service.register("o/r", repo.path)
    plan = service.plan(Selector("o/r"))
    assert [f["path"] for f in plan["files"]] == ["docs/ok.md"]
    assert plan["exclusions_by_reason"] == {
        "binary": 1, "invalid_utf8": 1, "lfs_pointer": 1, "policy_excluded": 1,
        "symlink": 1, "too_large": 1, "unsupported_type": 1,
    }
    result = service.index(Selector("o/r"))
    assert result.exclusions_by_reason == plan["exclusions_by_reason"]
    assert service.status(Selector("o/r"))["head_set"]["exclusions_by_reason"] == \
        plan["exclusions_by_reason"]


def test_fulltext_without_any_provider(make_repo: Callable[..., Repo]) -> None:
    config = Config().replaced(embedding={"provider": "none"})
    repo = make_repo(dict(DOCS))
    with RepoDocsService(config, Registry()) as service:
        service.register("o/r", repo.path)
        r = service.search(Selector("o/r"), "gunicorn")  # hybrid requested
        assert r["effective_mode"] == "fulltext" and paths(r)[0] == "docs/deploy.md"
        assert [d["code"] for d in r["warning_details"]] == ["embedding_provider_unavailable"]
        result = service.index(Selector("o/r"))
        assert result.state == "ready" and result.namespace_id == "none"


@pytest.mark.parametrize(("boundary", "extra"), [("remote", {}), ("unknown", {}), ("", {}),
                                                  ("remote", {"allow_remote": True})])
def test_boundary_rejected_before_any_work(make_repo: Callable[..., Repo], boundary: str,
                                           extra: dict[str, Any]) -> None:
    config = Config().replaced(embedding={
        "provider": "openai", "url": "http://127.0.0.1:9/v1", "model": "m",
        "data_boundary": boundary, **extra})
    repo = make_repo(dict(DOCS))
    with RepoDocsService(config, Registry()) as service:
        service.register("o/r", repo.path)
        with pytest.raises(RepoDocsBoundaryBlockedError) as info:
            service.index(Selector("o/r"))
        assert info.value.code == "repository_docs_provider_boundary_blocked"
    assert not (repo.path / ".gitquarry").exists()  # nothing was created


def test_hybrid_degrades_with_typed_warnings(service: RepoDocsService, registered: Selector,
                                             fake_config: Config) -> None:
    r = service.search(registered, "gunicorn")
    assert r["effective_mode"] == "fulltext"
    assert [d["code"] for d in r["warning_details"]] == ["revision_set_missing"]
    assert r["warnings"] == [d["message"] for d in r["warning_details"]]
    service.index(registered)
    r = service.search(registered, "gunicorn")
    assert r["effective_mode"] == "hybrid" and r["warnings"] == []
    assert r["namespace_id"] == "fake|hashing-bow-64|64|repo-docs-v1"


def test_cancelled_index_is_partial_and_resumes(service: RepoDocsService,
                                                registered: Selector) -> None:
    from gitquarry.errors import IndexCancelledError

    service.config = service.config.replaced(embedding={"batch_size": 1})
    calls = {"n": 0}

    def cancel_after_one() -> bool:
        calls["n"] += 1
        return calls["n"] > 1

    with pytest.raises(IndexCancelledError):
        service.index(registered, should_cancel=cancel_after_one)
    status = service.status(registered)["head_set"]
    assert status["coverage"]["state"] == "partial"
    assert 0 < status["coverage"]["embedded_chunks"] < status["coverage"]["eligible_chunks"]
    r = service.search(registered, "gunicorn")
    assert r["effective_mode"] == "hybrid"
    assert "partial_revision_set" in [d["code"] for d in r["warning_details"]]
    resumed = service.index(registered)
    assert resumed.state == "ready" and resumed.reused == status["coverage"]["embedded_chunks"]


def test_cache_holds_no_document_text(service: RepoDocsService, registered: Selector,
                                      docs_repo: Repo) -> None:
    service.index(registered)
    db = docs_repo.path / ".gitquarry" / "repo_docs.db"
    with DocsCache(db) as cache:
        tables = [r[0] for r in cache.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert not any("fts" in t for t in tables)
    raw = b"".join(p.read_bytes() for p in db.parent.iterdir() if p.is_file())
    assert b"gunicorn" not in raw and b"worker_connections" not in raw
    assert ".gitquarry/" in (docs_repo.path / ".git/info/exclude").read_text()


def test_camel_case_query_words_work_in_both_passes(service: RepoDocsService,
                                                    make_repo: Callable[..., Repo]) -> None:
    repo = make_repo({"docs/e.md": "# Errors\n\nRaise BadParameter from a callback.\n",
                      "docs/f.md": "# Other\n\nNothing here.\n"})
    service.register("o/r", repo.path)
    r = service.search(Selector("o/r"), "raise BadParameter", mode="fulltext")
    assert [h["citation"]["path"] for h in r["hits"]] == ["docs/e.md"]
    r = service.search(Selector("o/r"), "raise Bad parameter value nothing", mode="fulltext")
    assert set(paths(r)) == {"docs/e.md", "docs/f.md"}


def test_unindexed_revision_reuses_stored_chunks_and_ranks_the_same(
    service: RepoDocsService, registered: Selector, docs_repo: Repo
) -> None:
    docs_repo.git("tag", "old")
    docs_repo.commit({"docs/new.md": "# New\n\nworker pools for gunicorn.\n"})
    before = service.search(registered, "gunicorn workers", mode="fulltext", revision="old")
    service.index(registered)  # HEAD: stores the chunks of every blob the old tag shares
    fresh = RepoDocsService(service.config, service.registry)
    try:
        after = fresh.search(registered, "gunicorn workers", mode="fulltext", revision="old")
    finally:
        fresh.close()
    strip = [(h["chunk_id"], h["citation"], h["score"]) for h in before["hits"]]
    assert strip == [(h["chunk_id"], h["citation"], h["score"]) for h in after["hits"]]
    assert after["coverage"]["state"] == "none"  # no set covers the old tag


def test_heading_paths_come_from_stored_line_numbers(service: RepoDocsService,
                                                     registered: Selector,
                                                     docs_repo: Repo) -> None:
    service.index(registered)
    with DocsCache(docs_repo.path / ".gitquarry" / "repo_docs.db") as cache:
        stored = [r[0] for r in cache.conn.execute("SELECT heading_lines FROM chunks")]
    assert stored and all(s == "" or all(x.isdigit() for x in s.split(",")) for s in stored)
    fresh = RepoDocsService(service.config, service.registry)
    try:
        r = fresh.search(registered, "worker_connections", mode="fulltext")
    finally:
        fresh.close()
    assert r["hits"][0]["heading_path"] == "Deployment > Nginx > Configuration" or \
        r["hits"][0]["heading_path"].startswith("Deployment")
