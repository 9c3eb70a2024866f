"""Worktree overlays and the registration registry (opaque ids, CAS rebind, selectors)."""

from __future__ import annotations

import json
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gitquarry.errors import (
    InvalidArgumentError,
    RepoDocsRegistrationError,
    RepoDocsStaleGenerationError,
    WorktreeOverlayStaleError,
)
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.indexer import IndexProgress
from gitquarry.repo_docs.registry import Registry, Selector, canonical_repo_id

from .conftest import DOCS, Repo


def hit_paths(r: dict) -> list[str]:
    return [h["citation"]["path"] for h in r["hits"]]


def test_overlay_modified_deleted_renamed_untracked_symlink(
    service: RepoDocsService, registered: Selector, docs_repo: Repo
) -> None:
    committed = service.search(registered, "gunicorn", mode="fulltext")
    assert committed["authority"] == "git" and committed["overlay_digest"] is None
    repo = docs_repo.path
    (repo / "README.md").write_text("# Widget\n\nNow with zeppelin support.\n")  # modified
    docs_repo.git("rm", "-q", "docs/guide.rst")  # deleted (staged)
    docs_repo.git("mv", "docs/deploy.md", "docs/shipping.md")  # renamed (staged)
    (repo / "docs/untracked.md").write_text("# Secret\n\nzeppelin untracked\n")
    (repo / "docs/link.md").symlink_to("../README.md")  # untracked symlink
    r = service.search(registered, "zeppelin", mode="fulltext", include_worktree=True)
    assert r["authority"] == "worktree_overlay" and r["overlay_digest"]
    assert hit_paths(r) == ["README.md"]
    assert r["hits"][0]["citation"]["authority"] == "worktree_overlay"
    plan = service.plan(registered, include_worktree=True)
    assert sorted(f["path"] for f in plan["files"]) == ["README.md", "docs/shipping.md"]
    assert hit_paths(service.search(registered, "pipx", mode="fulltext",
                                    include_worktree=True)) == []
    assert hit_paths(service.search(registered, "gunicorn", mode="fulltext",
                                    include_worktree=True)) == ["docs/shipping.md"]
    # the committed answer is unchanged without the flag
    assert hit_paths(service.search(registered, "zeppelin", mode="fulltext")) == []
    # an untracked file never changes the digest; a tracked edit does
    digest = r["overlay_digest"]
    (repo / "docs/another.md").write_text("untracked\n")
    again = service.search(registered, "zeppelin", mode="fulltext", include_worktree=True)
    assert again["overlay_digest"] == digest
    (repo / "README.md").write_text("# Widget\n\nzeppelin v2\n")
    assert service.search(registered, "zeppelin", mode="fulltext",
                          include_worktree=True)["overlay_digest"] != digest


def test_overlay_index_is_a_separate_set_and_hybrid_works(
    service: RepoDocsService, registered: Selector, docs_repo: Repo
) -> None:
    committed = service.index(registered)
    (docs_repo.path / "README.md").write_text("# Widget\n\nairship dashboards\n")
    overlay = service.index(registered, include_worktree=True)
    assert overlay.revision_set_id != committed.revision_set_id
    assert overlay.authority == "worktree_overlay" and overlay.state == "ready"
    assert overlay.embedded == 1 and overlay.reused == overlay.eligible_chunks - 1
    r = service.search(registered, "airship", include_worktree=True)
    assert r["effective_mode"] == "hybrid" and hit_paths(r)[0] == "README.md"
    assert service.index(registered).up_to_date  # the committed set is untouched


def test_symlink_replacing_a_tracked_doc_is_excluded(service: RepoDocsService,
                                                     registered: Selector,
                                                     docs_repo: Repo) -> None:
    (docs_repo.path / "README.md").unlink()
    (docs_repo.path / "README.md").symlink_to("/etc/passwd")
    plan = service.plan(registered, include_worktree=True)
    assert "README.md" not in [f["path"] for f in plan["files"]]
    assert plan["exclusions_by_reason"].get("symlink") == 1


def test_superseded_when_the_worktree_changes_while_indexing(
    service: RepoDocsService, registered: Selector, docs_repo: Repo
) -> None:
    (docs_repo.path / "README.md").write_text("# Widget\n\nfirst edit\n")
    service.config = service.config.replaced(embedding={"batch_size": 1})

    def edit_during(event: IndexProgress) -> None:
        if event.phase == "embed" and event.done == 1:
            (docs_repo.path / "README.md").write_text("# Widget\n\nsecond edit\n")

    result = service.index(registered, include_worktree=True, progress=edit_during)
    assert result.state == "superseded"
    assert [w["code"] for w in result.warnings] == ["superseded"]


def test_stale_overlay_is_refused_at_query_time(service: RepoDocsService,
                                                registered: Selector, docs_repo: Repo) -> None:
    from gitquarry.gitio.catfile import BlobReader
    from gitquarry.repo_docs.overlay import read_overlay_file
    from gitquarry.repo_docs.revision import git_dir_of, resolve_revision

    (docs_repo.path / "README.md").write_text("# Widget\n\nedited\n")
    binding = service.registry.resolve(registered)
    with BlobReader(git_dir_of(binding)[0]) as reader:
        resolved = resolve_revision(binding, reader, include_worktree=True)
    (docs_repo.path / "README.md").write_text("# Widget\n\nedited again\n")
    assert resolved.overlay is not None
    with pytest.raises(WorktreeOverlayStaleError) as info:
        read_overlay_file(resolved.overlay, resolved.overlay.by_path()["README.md"], 10**6)
    assert info.value.code == "worktree_overlay_stale"


def test_overlay_needs_head(service: RepoDocsService, registered: Selector,
                            docs_repo: Repo) -> None:
    docs_repo.commit({"docs/x.md": "# x\n"})
    with pytest.raises(InvalidArgumentError):
        service.search(registered, "x", revision="HEAD~1", include_worktree=True)


# --- registry -------------------------------------------------------------------------------


def test_registry_file_is_private_and_holds_the_only_path(service: RepoDocsService,
                                                          registered: Selector,
                                                          docs_repo: Repo) -> None:
    path = service.registry.path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert str(docs_repo.path.resolve()) in path.read_text()
    public = json.dumps(service.sources())
    assert str(docs_repo.path) not in public


@pytest.mark.parametrize("alias", ["ACME/Widget", "https://github.com/acme/widget.git",
                                   "git@github.com:acme/widget", "acme/widget/",
                                   "github.com/ACME/widget"])
def test_aliases_resolve_to_the_canonical_binding(alias: str) -> None:
    assert canonical_repo_id(alias) == "acme/widget"


def test_bad_names_are_refused() -> None:
    for bad in ("", "../x", "a b", "a/../b"):
        with pytest.raises(RepoDocsRegistrationError):
            canonical_repo_id(bad)


def test_stable_opaque_ids_for_every_repository_shape(make_repo: Callable[..., Repo],
                                                      tmp_path: Path) -> None:
    registry = Registry(tmp_path / "reg" / "r.json")
    main = make_repo(dict(DOCS))
    linked = tmp_path / "linked"
    main.git("worktree", "add", "-q", str(linked), "-b", "feature")
    symlinked = tmp_path / "via-symlink"
    symlinked.symlink_to(main.path)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(main.path), str(bare)], check=True)
    sha256 = make_repo({"docs/a.md": "# a\n"}, object_format="sha256")
    a = registry.register("o/main", main.path)
    b = registry.register("o/main", symlinked)
    assert b.source.source_registration_id == a.source.source_registration_id
    assert b.source.git_store_ref == a.source.git_store_ref
    c = registry.register("o/main", linked)
    assert c.source.git_store_ref == a.source.git_store_ref  # same object store
    assert c.source.worktree_ref != a.source.worktree_ref
    assert c.registration.registration_id == a.registration.registration_id
    d = registry.register("o/bare", bare)
    assert d.source.bare and d.source.worktree_ref is None
    e = registry.register("o/sha", sha256.path)
    assert e.source.object_format == "sha256"
    again = Registry(registry.path)
    assert [x.source.git_store_ref for x in again.bindings("o/main")] == \
        [a.source.git_store_ref, a.source.git_store_ref]
    for binding in (a, c, d, e):
        for value in binding.public().values():
            assert not (isinstance(value, str) and value.startswith("/"))


def test_selectors_partial_ambiguous_stale_and_rebind(make_repo: Callable[..., Repo],
                                                      tmp_path: Path,
                                                      service: RepoDocsService) -> None:
    registry = service.registry
    one = make_repo(dict(DOCS))
    two = make_repo({"docs/b.md": "# b\n\nbanana\n"})
    a = registry.register("o/r", one.path)
    with pytest.raises(RepoDocsRegistrationError) as info:
        registry.resolve(Selector("o/r", a.registration.registration_id))
    assert info.value.reason == "partial_selector"
    b = registry.register("o/r", two.path)
    with pytest.raises(RepoDocsRegistrationError) as info:
        registry.resolve(Selector("o/r"))
    assert info.value.reason == "ambiguous"
    full = Selector("o/r", b.registration.registration_id, b.source.source_registration_id, 1)
    assert registry.resolve(full).path == two.path.resolve()
    with pytest.raises(RepoDocsRegistrationError, match="source"):
        registry.rebind("o/r", a.registration.registration_id, 1, one.path)
    rebound = registry.rebind("o/r", b.registration.registration_id, 1, one.path,
                              b.source.source_registration_id)
    assert rebound.source.generation == 2
    with pytest.raises(RepoDocsStaleGenerationError):
        registry.resolve(full)  # the old selector is stale now
    with pytest.raises(RepoDocsStaleGenerationError):
        registry.rebind("o/r", b.registration.registration_id, 1, two.path,
                        b.source.source_registration_id)
    with pytest.raises(RepoDocsRegistrationError) as info:
        registry.resolve(Selector("x/y"))
    assert info.value.reason == "not_registered"
    with pytest.raises(RepoDocsRegistrationError):
        registry.register("o/r", tmp_path / "nope")


def test_nothing_registered_says_so_in_plain_words(tmp_path: Path) -> None:
    """A new user's first `repo-docs search` read "no repository is not registered"."""
    with pytest.raises(RepoDocsRegistrationError) as info:
        Registry(tmp_path / "registry.json").resolve(Selector(None))
    assert info.value.reason == "not_registered"
    assert "no repository is registered; run `gitquarry repo-docs register" in str(info.value)
    assert "is not registered" not in str(info.value)
