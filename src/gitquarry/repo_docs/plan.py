"""The plan of a revision: which files form the corpus, and why every other selected file
does not.

A :class:`RevisionView` is one commit's tree, optionally with a worktree overlay on top. The
planner reads the policy from the view, then walks every path: the policy selects it or not
(``not_selected`` paths are only counted), and a selected path is *eligible* unless one of
the fixed rules excludes it, each with a reason code:

``reserved_path`` (``.git/**``, ``.gitquarry/**``, ``.gitcode/mcp/**``), ``symlink``,
``submodule``, ``too_large`` (over the bounded-read limit: never read), ``git_object_unavailable``
(missing from the local object store: never fetched), ``lfs_pointer``, ``binary`` (a NUL
byte), ``invalid_utf8``, ``unsupported_type`` (an extension that is not a document format —
``.svg``, ``.js``, ``.yml`` — unless an explicit include pattern names that extension, as
``architecture/**/*.yaml`` does) and ``policy_excluded`` (an ``exclude`` pattern).
Untracked files are never in a tree, so never eligible.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gitquarry.errors import RepoDocsPolicyInvalidError
from gitquarry.gitio.catfile import BlobReader
from gitquarry.gitio.tree import MODE_GITLINK, MODE_SYMLINK, TreeEntry
from gitquarry.repo_docs.overlay import Overlay, OverlayEntry, read_overlay_file
from gitquarry.repo_docs.policy import (
    BUILTIN_POLICY,
    MAX_POLICY_BYTES,
    POLICY_FILES,
    DocsPolicy,
    parse_policy_file,
)

RESERVED_PREFIXES = (".git/", ".gitquarry/", ".gitcode/mcp/")
_LFS_MAGIC = b"version https://git-lfs.github.com/spec/v1\n"
MARKDOWN_EXT = {".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdx"}
RST_EXT = {".rst", ".rest"}
TEXT_EXT = {".txt", ".text", ".adoc", ".asciidoc", ".asc", ".org", ".rdoc", ".textile", ""}
DEFAULT_MAX_BLOB_BYTES = 1024 * 1024


def content_class(path: str) -> str | None:
    """``markdown``, ``restructuredtext`` or ``text`` from the file name; None for any other
    extension (``.png``, ``.svg``, ``.yml``...)."""
    name = posixpath.basename(path)
    ext = posixpath.splitext(name)[1].lower()
    if ext in MARKDOWN_EXT:
        return "markdown"
    if ext in RST_EXT:
        return "restructuredtext"
    if ext in TEXT_EXT:
        return "text"
    return None


@dataclass(frozen=True)
class DocFile:
    """An eligible file. ``authority`` is ``git`` (``blob_oid`` read from the object store)
    or ``worktree_overlay`` (the verified working-tree bytes; ``blob_oid`` is what git would
    name them)."""

    path: str
    blob_oid: str
    size: int
    content_class: str
    authority: str = "git"


@dataclass(frozen=True)
class Exclusion:
    path: str
    reason: str
    size: int
    blob_oid: str = ""


@dataclass
class RevisionView:
    """A commit's tree, optionally overlaid with tracked worktree changes."""

    commit: str
    entries: dict[str, TreeEntry]
    overlay: Overlay | None = None

    def paths(self) -> list[str]:
        paths = set(self.entries)
        if self.overlay is not None:
            for entry in self.overlay.entries:
                if entry.old_path:
                    paths.discard(entry.old_path)
                if entry.state == "deleted":
                    paths.discard(entry.path)
                else:
                    paths.add(entry.path)
        return sorted(paths)

    def overlay_entry(self, path: str) -> OverlayEntry | None:
        if self.overlay is None:
            return None
        entry = self.overlay.by_path().get(path)
        return entry if entry is not None and entry.state != "deleted" else None


@dataclass
class Plan:
    """The outcome of planning one view under one policy."""

    commit: str
    policy: DocsPolicy
    files: list[DocFile] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)
    not_selected: int = 0

    @property
    def eligible_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def exclusion_counts(self) -> dict[str, int]:
        return dict(sorted(Counter(e.reason for e in self.exclusions).items()))

    def to_dict(self, *, list_files: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "effective_revision": self.commit,
            **self.policy.to_dict(),
            "eligible_files": len(self.files),
            "eligible_bytes": self.eligible_bytes,
            "not_selected_files": self.not_selected,
            "exclusions_by_reason": self.exclusion_counts(),
        }
        if list_files:
            data["files"] = [{"path": f.path, "blob_oid": f.blob_oid, "size": f.size,
                              "content_class": f.content_class, "authority": f.authority}
                             for f in self.files]
            data["exclusions"] = [{"path": e.path, "reason": e.reason, "size": e.size}
                                  for e in self.exclusions]
        return data


def _policy_bytes(view: RevisionView, reader: BlobReader, name: str) -> tuple[bytes, str] | None:
    entry = view.overlay_entry(name)
    if entry is not None and view.overlay is not None:
        if entry.kind != "file":
            raise RepoDocsPolicyInvalidError(name, "the policy file is not a regular file")
        data = read_overlay_file(view.overlay, entry, MAX_POLICY_BYTES)
        if data is None:
            raise RepoDocsPolicyInvalidError(name, f"the file is {entry.size:,} bytes; the "
                                             f"limit is {MAX_POLICY_BYTES:,}")
        return data, "worktree_config"
    if name not in view.paths():
        return None
    tree_entry = view.entries[name]
    if tree_entry.mode in (MODE_SYMLINK, MODE_GITLINK) or tree_entry.kind != "blob":
        raise RepoDocsPolicyInvalidError(name, "the policy file is not a regular file")
    # capped by the size in cat-file's header: an oversized blob is never held in memory
    result = reader.read(tree_entry.oid, max_bytes=MAX_POLICY_BYTES)
    if result.status == "too_large":
        raise RepoDocsPolicyInvalidError(name, f"the file is {result.size:,} bytes; the "
                                         f"limit is {MAX_POLICY_BYTES:,}")
    if result.status != "ok":
        raise RepoDocsPolicyInvalidError(name, f"the policy file cannot be read ({result.status})")
    source = "worktree_config" if _dirty(view, name) else "committed_config"
    return result.data, source


def _dirty(view: RevisionView, name: str) -> bool:
    if view.overlay is None:
        return False
    return any(e.path == name or e.old_path == name for e in view.overlay.entries)


def read_policy(view: RevisionView, reader: BlobReader) -> DocsPolicy:
    """The effective policy of ``view`` (see ``gitquarry.repo_docs.policy``).

    :raises RepoDocsPolicyInvalidError: the governing policy file is invalid.
    """
    for name in POLICY_FILES:
        found = _policy_bytes(view, reader, name)
        if found is None:
            continue
        data, source = found
        policy = parse_policy_file(data, name, source=source)
        if policy is not None:
            return policy
    dirty = any(_dirty(view, name) for name in POLICY_FILES)
    return BUILTIN_POLICY if not dirty else DocsPolicy(source="worktree_config")


def _content_reason(data: bytes) -> str | None:
    if data.startswith(_LFS_MAGIC):
        return "lfs_pointer"
    if b"\x00" in data:
        return "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8"
    return None


#: ``known(blob_oid)``: a cached classification (content class, or an exclusion reason
#: prefixed with ``!``) for a blob already checked, so it need not be read again.
KnownBlob = Callable[[str], str | None]


def plan_view(
    view: RevisionView,
    policy: DocsPolicy,
    reader: BlobReader,
    *,
    max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
    known: KnownBlob | None = None,
    plan: Plan | None = None,
) -> Iterator[tuple[DocFile, bytes | None]]:
    """Walk ``view`` under ``policy``, yielding each eligible file with its bytes (None when
    ``known`` vouched for the blob and it was not read). Exclusions and the not-selected
    count accumulate on ``plan`` (pass one to keep them). Bytes are read once per file,
    through ``reader``, and never for a file over ``max_blob_bytes``.
    """
    plan = plan if plan is not None else Plan(view.commit, policy)
    for path in view.paths():
        reason = policy.selects(path)
        if reason is not None:
            if reason == "policy_excluded":
                plan.exclusions.append(Exclusion(path, reason, -1))
            else:
                plan.not_selected += 1
            continue
        overlay_entry = view.overlay_entry(path)
        if path.startswith(RESERVED_PREFIXES) or path in (".git", ".gitquarry"):
            plan.exclusions.append(Exclusion(path, "reserved_path", -1))
            continue
        cls = content_class(path)
        if cls is None and policy.explicitly_included(path):
            cls = "text"
        if overlay_entry is not None and view.overlay is not None:
            yield from _overlay_file(view.overlay, overlay_entry, cls, plan, max_blob_bytes)
            continue
        entry = view.entries[path]
        if entry.mode == MODE_SYMLINK:
            plan.exclusions.append(Exclusion(path, "symlink", entry.size, entry.oid))
            continue
        if entry.mode == MODE_GITLINK or entry.kind != "blob":
            plan.exclusions.append(Exclusion(path, "submodule", -1, entry.oid))
            continue
        if cls is None:
            plan.exclusions.append(Exclusion(path, "unsupported_type", entry.size, entry.oid))
            continue
        if entry.size > max_blob_bytes:
            plan.exclusions.append(Exclusion(path, "too_large", entry.size, entry.oid))
            continue
        cached = known(entry.oid) if known is not None else None
        if cached is not None:
            if cached.startswith("!"):
                plan.exclusions.append(Exclusion(path, cached[1:], entry.size, entry.oid))
            else:
                doc = DocFile(path, entry.oid, entry.size, cls)
                plan.files.append(doc)
                yield doc, None
            continue
        result = reader.read(entry.oid, max_bytes=max_blob_bytes)
        if result.status == "missing":
            plan.exclusions.append(Exclusion(path, "git_object_unavailable", entry.size,
                                             entry.oid))
            continue
        if result.status != "ok":
            plan.exclusions.append(Exclusion(path, "too_large", entry.size, entry.oid))
            continue
        bad = _content_reason(result.data)
        if bad is not None:
            plan.exclusions.append(Exclusion(path, bad, entry.size, entry.oid))
            continue
        doc = DocFile(path, entry.oid, entry.size, cls)
        plan.files.append(doc)
        yield doc, result.data


def _overlay_file(overlay: Overlay, entry: OverlayEntry, cls: str | None, plan: Plan,
                  max_blob_bytes: int) -> Iterator[tuple[DocFile, bytes | None]]:
    if entry.kind in ("symlink", "other"):
        plan.exclusions.append(Exclusion(entry.path, "symlink" if entry.kind == "symlink"
                                         else "not_a_file", -1))
        return
    if entry.kind == "submodule":
        plan.exclusions.append(Exclusion(entry.path, "submodule", -1))
        return
    if cls is None:
        plan.exclusions.append(Exclusion(entry.path, "unsupported_type", entry.size))
        return
    data = read_overlay_file(overlay, entry, max_blob_bytes)
    if data is None:
        plan.exclusions.append(Exclusion(entry.path, "too_large", entry.size))
        return
    bad = _content_reason(data)
    if bad is not None:
        plan.exclusions.append(Exclusion(entry.path, bad, entry.size))
        return
    doc = DocFile(entry.path, entry.blob_oid, entry.size, cls, "worktree_overlay")
    plan.files.append(doc)
    yield doc, data


def build_plan(view: RevisionView, reader: BlobReader, *,
               max_blob_bytes: int = DEFAULT_MAX_BLOB_BYTES,
               policy: DocsPolicy | None = None) -> Plan:
    """Plan ``view`` completely (reading its policy unless given), discarding bytes."""
    policy = policy or read_policy(view, reader)
    plan = Plan(view.commit, policy)
    for _ in plan_view(view, policy, reader, max_blob_bytes=max_blob_bytes, plan=plan):
        pass
    return plan
