"""Issue 10: a repository-docs search holding a revision set's snapshot survives GC evicting
that set (``service.docs_jobs.collect_garbage`` between the snapshot load and the ranking),
and later searches of that revision still answer, from Git, saying the set is gone."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.indexer import cache_dir_for
from gitquarry.repo_docs.registry import Registry, Selector
from gitquarry.service.docs_jobs import GcReport, collect_garbage

from .conftest import Repo


def _lines(repo: Repo, commit: str, path: str, start: int, end: int) -> str:
    text = repo.git("show", f"{commit}:{path}")
    return "\n".join(text.split("\n")[start - 1:end])


def _codes(response: dict[str, Any]) -> set[str]:
    return {w["code"] for w in response["warning_details"]}


def test_search_holding_a_set_survives_gc_evicting_it(
    service: RepoDocsService, registered: Selector, docs_repo: Repo,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = docs_repo.git("rev-parse", "HEAD")
    old_set = service.index(registered).revision_set_id
    docs_repo.commit({"docs/deploy.md": "# Deployment\n\nNow on Kubernetes only.\n"})
    new_set = service.index(registered).revision_set_id
    assert old_set != new_set
    binding = Registry().resolve(registered)
    cache_dir = cache_dir_for(binding, service.config)
    # both sets finished in the same second (their stored times are whole seconds): the one
    # built last is the newest, whatever their ids
    db = sqlite3.connect(cache_dir / "repo_docs.db")
    with db:
        db.execute("UPDATE revision_sets SET completed_at = 1800000000, updated_at = 1800000000")
    db.close()
    reports: list[GcReport] = []
    original = RepoDocsService._semantic

    def semantic_then_gc(self: RepoDocsService, *args: Any, **kwargs: Any) -> Any:
        side = original(self, *args, **kwargs)  # the set's snapshot is loaded now
        if not reports:  # 31 days on, the old set is too old and not the newest: evicted
            reports.append(collect_garbage(cache_dir, now=1_800_000_000 + 31 * 86_400))
        return side

    monkeypatch.setattr(RepoDocsService, "_semantic", semantic_then_gc)
    during = service.search(registered, "gunicorn workers", revision=old, mode="hybrid")

    report = reports[0]
    assert report.skipped is None and report.reasons == {"age": 1}, report
    assert report.deleted_chunks > 0 and report.deleted_vectors > 0
    # the search that held the snapshot answered in full from it
    assert during["effective_mode"] == "hybrid" and during["revision_set_id"] == old_set
    assert not _codes(during) & {"revision_set_missing", "revision_set_unusable"}
    top = during["hits"][0]
    cite = top["citation"]
    assert cite["path"] == "docs/deploy.md" and cite["commit_oid"] == old
    assert "gunicorn" in _lines(docs_repo, old, cite["path"], cite["line_start"],
                                cite["line_end"])

    # the same long-lived service (an MCP server) and a fresh one: the old revision still
    # answers, by full text from Git, with the same citation, and says the set is gone
    fresh = RepoDocsService(service.config, Registry())
    try:
        for svc in (service, fresh):
            after = svc.search(registered, "gunicorn workers", revision=old, mode="hybrid")
            assert after["effective_mode"] == "fulltext"
            assert "revision_set_missing" in _codes(after)
            assert after["hits"][0]["citation"] == cite
        # the newest set was kept and still serves hybrid search
        head = fresh.search(registered, "kubernetes", mode="hybrid")
        assert head["effective_mode"] == "hybrid" and head["revision_set_id"] == new_set
    finally:
        fresh.close()
