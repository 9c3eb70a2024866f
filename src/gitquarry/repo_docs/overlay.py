"""Worktree overlays: a committed tree plus the working tree's tracked changes, verified.

Only tracked changes count (modified, added to the index, deleted, renamed; staged or not);
untracked files never do. The overlay lists each changed path the docs policy selects (by its
new or old path) with its state, the sha256 and size of the working-tree bytes, and the blob
id git would give them. Its digest is sha256 of the canonical JSON of the sorted
``[path, old_path, state, sha256, size]`` list: any edit to a selected tracked file changes
it. Working-tree files are opened without following symlinks and must stay inside the
working tree; a symlink or submodule in the working tree is listed but never read.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitquarry.errors import WorktreeOverlayStaleError
from gitquarry.gitio.worktree import tracked_changes
from gitquarry.repo_docs.policy import canonical_json, sha256_hex

_PIECE = 64 * 1024


@dataclass(frozen=True)
class OverlayEntry:
    """One changed, policy-selected tracked path. ``state``: modified, added, deleted,
    renamed; ``kind``: ``file``, ``symlink``, ``submodule``, ``missing`` or ``other``;
    ``sha256``/``size`` of the working-tree bytes ("" / -1 when not a readable file);
    ``blob_oid`` the id ``git hash-object`` would give them ("" when not read)."""

    path: str
    old_path: str | None
    state: str
    kind: str
    sha256: str
    size: int
    blob_oid: str

    def public(self) -> dict[str, object]:
        return {"path": self.path, "old_path": self.old_path, "state": self.state,
                "kind": self.kind, "sha256": self.sha256, "size": self.size}


@dataclass(frozen=True)
class Overlay:
    """The verified tracked changes of one working tree (``root`` stays private)."""

    root: Path
    entries: tuple[OverlayEntry, ...]
    digest: str

    def by_path(self) -> dict[str, OverlayEntry]:
        return {e.path: e for e in self.entries}


def _object_hasher(object_format: str) -> Callable[[], hashlib._Hash]:
    return hashlib.sha256 if object_format == "sha256" else hashlib.sha1


def _inside(root: Path, rel: str) -> Path | None:
    target = root / rel
    try:
        parent = target.parent.resolve(strict=True)
    except OSError:
        return None
    if parent != root and root not in parent.parents:
        return None
    return parent / target.name


def _fingerprint(root: Path, rel: str, object_format: str) -> tuple[str, str, int, str]:
    """(kind, sha256, size, blob oid) of the working-tree file ``rel``, streamed."""
    path = _inside(root, rel)
    if path is None:
        return "missing", "", -1, ""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        try:
            st = os.lstat(path)
        except OSError:
            return "missing", "", -1, ""
        return ("symlink" if stat.S_ISLNK(st.st_mode) else "other"), "", -1, ""
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            return "other", "", -1, ""
        size = st.st_size
        content = hashlib.sha256()
        obj = _object_hasher(object_format)()
        obj.update(b"blob %d\x00" % size)
        read = 0
        while piece := handle.read(_PIECE):
            content.update(piece)
            obj.update(piece)
            read += len(piece)
        if read != size:  # changed while we read it
            return "file", content.hexdigest() + "-torn", read, ""
    return "file", content.hexdigest(), size, obj.hexdigest()


def compute_overlay(root: Path, object_format: str,
                    selects: Callable[[str], bool]) -> Overlay:
    """The overlay of the working tree at ``root`` (absolute) for paths ``selects`` accepts.

    :raises GitError: git status failed.
    """
    root = root.resolve()
    entries: list[OverlayEntry] = []
    for change in tracked_changes(root):
        if not (selects(change.path) or (change.old_path and selects(change.old_path))):
            continue
        if change.state == "deleted":
            entries.append(OverlayEntry(change.path, change.old_path, "deleted", "missing", "",
                                        -1, ""))
            continue
        if change.worktree_mode == "120000":
            kind, digest, size, oid = "symlink", "", -1, ""
        elif change.worktree_mode == "160000":
            kind, digest, size, oid = "submodule", "", -1, ""
        else:
            kind, digest, size, oid = _fingerprint(root, change.path, object_format)
        entries.append(OverlayEntry(change.path, change.old_path, change.state, kind, digest,
                                    size, oid))
    entries.sort(key=lambda e: e.path)
    listing = [[e.path, e.old_path, e.state, e.sha256, e.size] for e in entries]
    return Overlay(root, tuple(entries), sha256_hex(canonical_json(listing)))


def read_overlay_file(overlay: Overlay, entry: OverlayEntry, max_bytes: int) -> bytes | None:
    """The working-tree bytes of ``entry``, verified against its recorded sha256; None when
    larger than ``max_bytes`` (never read then).

    :raises WorktreeOverlayStaleError: the file changed since the overlay was computed.
    """
    if entry.kind != "file" or entry.size < 0:
        raise WorktreeOverlayStaleError(entry.path)
    if entry.size > max_bytes:
        return None
    path = _inside(overlay.root, entry.path)
    if path is None:
        raise WorktreeOverlayStaleError(entry.path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise WorktreeOverlayStaleError(entry.path) from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise WorktreeOverlayStaleError(entry.path)
        data = handle.read(max_bytes + 1)
    if len(data) != entry.size or sha256_hex(data) != entry.sha256:
        raise WorktreeOverlayStaleError(entry.path)
    return data
