"""Issue 19 §5 for the repository-docs corpus: working-tree overlays open only regular files
(a tracked doc replaced by a FIFO never blocks ``--include-worktree``), hash at most
``max_file_bytes`` of a changed file, and a policy file over ``MAX_POLICY_BYTES`` is refused
naming its size, whether it comes from Git (capped by cat-file's header) or the worktree."""

from __future__ import annotations

import os

import pytest

from gitquarry.errors import RepoDocsPolicyInvalidError
from gitquarry.repo_docs.api import RepoDocsService
from gitquarry.repo_docs.overlay import compute_overlay, read_overlay_file
from gitquarry.repo_docs.policy import MAX_POLICY_BYTES
from gitquarry.repo_docs.registry import Selector

from .conftest import Repo


def test_a_tracked_doc_replaced_by_a_fifo_never_blocks_the_overlay(
        service: RepoDocsService, registered: Selector, docs_repo: Repo,
        deadline: None) -> None:
    path = docs_repo.path / "docs" / "deploy.md"
    path.unlink()
    os.mkfifo(path)
    (docs_repo.path / "README.md").write_text("# Widget\n\nlocal gunicorn edit\n")
    found = service.search(registered, "gunicorn", mode="fulltext", include_worktree=True)
    assert found["authority"] == "worktree_overlay"
    cited = {h["citation"]["path"] for h in found["hits"]}
    assert cited == {"README.md"}  # the FIFO is listed, never read
    overlay = compute_overlay(docs_repo.path, "sha1", lambda _p: True)
    entry = overlay.by_path()["docs/deploy.md"]
    assert (entry.kind, entry.size, entry.sha256) == ("other", -1, "")


def test_a_changed_file_over_the_cap_is_listed_by_size_never_read(docs_repo: Repo) -> None:
    big = b"# Big\n\n" + b"words " * 50_000
    (docs_repo.path / "docs" / "deploy.md").write_bytes(big)
    overlay = compute_overlay(docs_repo.path, "sha1", lambda _p: True, max_file_bytes=1024)
    entry = overlay.by_path()["docs/deploy.md"]
    assert (entry.kind, entry.size, entry.sha256, entry.blob_oid) == ("file", len(big), "", "")
    assert read_overlay_file(overlay, entry, 1024) is None
    # under the cap the same file is hashed as git would
    full = compute_overlay(docs_repo.path, "sha1", lambda _p: True)
    hashed = full.by_path()["docs/deploy.md"]
    assert hashed.blob_oid == docs_repo.git("hash-object", "docs/deploy.md")
    assert read_overlay_file(full, hashed, len(big)) == big


POLICY_HEAD = "repository_docs:\n  schema: 1\n"


def test_an_oversized_policy_file_is_refused_naming_its_size(
        service: RepoDocsService, registered: Selector, docs_repo: Repo) -> None:
    padding = "# " + "x" * 78 + "\n"
    policy = POLICY_HEAD + padding * (MAX_POLICY_BYTES // len(padding) + 10)
    docs_repo.commit({".gitquarry.yaml": policy}, "huge policy")
    size = len(policy.encode())
    with pytest.raises(RepoDocsPolicyInvalidError, match=f"{size:,} bytes; the limit is"):
        service.search(registered, "gunicorn", mode="fulltext")
    # the same in the working tree (an overlay), with the committed one fixed
    docs_repo.commit({".gitquarry.yaml": POLICY_HEAD}, "small policy")
    assert service.search(registered, "gunicorn", mode="fulltext")["hits"]
    (docs_repo.path / ".gitquarry.yaml").write_text(policy)
    with pytest.raises(RepoDocsPolicyInvalidError, match=f"{size:,} bytes; the limit is"):
        service.search(registered, "gunicorn", mode="fulltext", include_worktree=True)
