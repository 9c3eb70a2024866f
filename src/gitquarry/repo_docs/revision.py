"""Resolve what a command asked for into one commit, one policy and, optionally, one overlay;
and the identity of the revision set built from them.

A revision set's id is a hashing contract: sha256 of the canonical JSON of ``repo_id``,
``git_store_ref`` (opaque: a hash of the git common dir and object format, never a path),
``commit``, ``policy_hash``, ``chunk_policy`` (id and parameters), ``namespace`` (the
embedding namespace key, ``none`` without a provider) and, for an overlay set,
``overlay_digest``. Moving HEAD never changes an existing set: a new commit is a new id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitquarry.errors import InvalidArgumentError, RevisionNotFoundError
from gitquarry.gitio.catfile import BlobReader
from gitquarry.gitio.discovery import inspect_repository
from gitquarry.gitio.tree import TreeEntry, list_tree, resolve_commit
from gitquarry.gitio.worktree import own_git_dir
from gitquarry.repo_docs.chunker import ChunkPolicy
from gitquarry.repo_docs.overlay import Overlay, compute_overlay
from gitquarry.repo_docs.plan import RevisionView, read_policy
from gitquarry.repo_docs.policy import POLICY_FILES, DocsPolicy, canonical_json, sha256_hex
from gitquarry.repo_docs.registry import Binding

#: namespace of sets built without an embedding provider (locators only)
NO_NAMESPACE = "none"


@dataclass
class ResolvedRevision:
    """One resolved request. ``requested`` is the revision as given; ``commit`` the full
    commit id; ``overlay`` present only with ``--include-worktree``."""

    binding: Binding
    git_dir: Path
    object_format: str
    requested: str
    commit: str
    view: RevisionView
    policy: DocsPolicy
    overlay: Overlay | None

    @property
    def authority(self) -> str:
        return "worktree_overlay" if self.overlay is not None else "git"

    @property
    def overlay_digest(self) -> str | None:
        return self.overlay.digest if self.overlay is not None else None

    def identity(self, chunk_policy: ChunkPolicy, namespace: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "repo_id": self.binding.repo_id,
            "git_store_ref": self.binding.source.git_store_ref,
            "commit": self.commit,
            "policy_hash": self.policy.policy_hash,
            "chunk_policy": chunk_policy.key,
            "namespace": namespace,
        }
        if self.overlay is not None:
            data["overlay_digest"] = self.overlay.digest
        return data

    def set_id(self, chunk_policy: ChunkPolicy, namespace: str) -> str:
        return sha256_hex(canonical_json(self.identity(chunk_policy, namespace)))

    def lexical_key(self, chunk_policy: ChunkPolicy) -> tuple[str, ...]:
        """What an in-memory full-text index depends on (no namespace)."""
        return (self.binding.source.git_store_ref, self.commit, self.policy.policy_hash,
                chunk_policy.key, self.overlay_digest or "")


def git_dir_of(binding: Binding) -> tuple[Path, str]:
    """(git dir, object format) of the binding's authority: a working tree's own git dir
    (so ``HEAD`` is that worktree's HEAD, also for a linked worktree), or the bare directory.

    :raises NotARepositoryError: the registered path is no longer a repository.
    """
    repo = inspect_repository(binding.path)
    own = repo.own_git_dir or own_git_dir(binding.path)  # one rev-parse for a work tree
    return (own or repo.git_dir), repo.object_format


def restrict_overlay(overlay: Overlay, policy: DocsPolicy) -> Overlay:
    """``overlay`` with only the entries ``policy`` selects (or the policy files), re-digested."""
    def keep(path: str | None) -> bool:
        return path is not None and (path in POLICY_FILES or policy.selects(path) is None)

    entries = tuple(e for e in overlay.entries if keep(e.path) or keep(e.old_path))
    listing = [[e.path, e.old_path, e.state, e.sha256, e.size] for e in entries]
    return Overlay(overlay.root, entries, sha256_hex(canonical_json(listing)))


#: ``(git dir, commit) -> (tree entries, policy)``: immutable, so a long-lived caller may
#: keep them (``RepoDocsService`` does); the policy of a dirty worktree is never kept.
TreeCache = dict[tuple[Path, str], tuple[dict[str, TreeEntry], DocsPolicy]]


def resolve_revision(binding: Binding, reader: BlobReader, *, revision: str | None = None,
                     include_worktree: bool = False, git_dir: Path | None = None,
                     object_format: str | None = None,
                     trees: TreeCache | None = None) -> ResolvedRevision:
    """Resolve ``revision`` (default HEAD) of ``binding``'s repository, read its policy and,
    with ``include_worktree``, overlay the tracked working-tree changes.

    :raises RevisionNotFoundError: the revision names no commit.
    :raises InvalidArgumentError: ``include_worktree`` on a bare repository, or with a
        revision other than the working tree's HEAD.
    :raises RepoDocsPolicyInvalidError: the governing policy file is invalid.
    """
    if git_dir is None or object_format is None:
        git_dir, object_format = git_dir_of(binding)
    requested = revision or "HEAD"
    found = reader.commit_of(requested)  # rev-parse: never a revision to cat-file
    if found is None:
        raise RevisionNotFoundError(requested)
    commit = found
    cached = trees.get((git_dir, commit)) if trees is not None else None
    entries = cached[0] if cached is not None else \
        {e.path: e for e in list_tree(git_dir, commit)}
    overlay: Overlay | None = None
    if include_worktree:
        if binding.source.bare:
            raise InvalidArgumentError("--include-worktree", "a bare repository has no "
                                       "working tree")
        head = reader.commit_of("HEAD") or resolve_commit(git_dir, "HEAD")
        if commit != head:
            raise InvalidArgumentError(
                "--include-worktree", "overlays apply to the working tree's HEAD; drop "
                "--revision or pass --revision HEAD",
            )
        overlay = compute_overlay(binding.path, object_format, lambda _p: True)
    view = RevisionView(commit, entries, overlay)
    if cached is not None and overlay is None:
        policy = cached[1]
    else:
        policy = read_policy(view, reader)
        if trees is not None and overlay is None:
            if len(trees) > 64:
                trees.clear()
            trees[(git_dir, commit)] = (entries, policy)
    if overlay is not None:
        overlay = restrict_overlay(overlay, policy)
        view = RevisionView(commit, entries, overlay)
    return ResolvedRevision(binding, git_dir, object_format, requested, commit, view, policy,
                            overlay)
