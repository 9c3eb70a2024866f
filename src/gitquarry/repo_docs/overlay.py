"""Worktree overlays: a committed tree plus the working tree's tracked changes, verified.

Only tracked changes count (modified, added to the index, deleted, renamed; staged or not);
untracked files never do. The overlay lists each changed path the docs policy selects (by its
new or old path) with its state, the sha256 and size of the working-tree bytes, and the blob
id git would give them. Its digest is sha256 of the canonical JSON of the sorted
``[path, old_path, state, sha256, size]`` list: any edit to a selected tracked file changes
it. Working-tree files are opened without following symlinks and must stay inside the
working tree; a symlink or submodule in the working tree is listed but never read, and so is
anything but a regular file (a FIFO or device is never opened: ``parsing.bounded_read``). A
changed file over ``MAX_OVERLAY_FILE_BYTES`` is listed with its size only.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitquarry.errors import FileRefusedError, WorktreeOverlayStaleError
from gitquarry.gitio.worktree import tracked_changes
from gitquarry.parsing.bounded_read import open_regular, read_capped
from gitquarry.repo_docs.policy import canonical_json, sha256_hex

_PIECE = 64 * 1024
#: the largest changed working-tree file an overlay hashes (bytes): the most ``[docs]
#: max_blob_bytes`` may be, so every file a plan could read is hashed, and no more
MAX_OVERLAY_FILE_BYTES = 64 * 1024 * 1024


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


def _fingerprint(root: Path, rel: str, object_format: str,
                 max_bytes: int) -> tuple[str, str, int, str]:
    """(kind, sha256, size, blob oid) of the working-tree file ``rel``, streamed. Only a
    regular file is opened (``open_regular``: no link, a FIFO never blocks); one over
    ``max_bytes`` is listed with its size but not read (sha256 and blob oid empty: it is too
    large for any docs plan to read, so its bytes are never needed)."""
    path = _inside(root, rel)
    if path is None:
        return "missing", "", -1, ""
    try:
        fd, st = open_regular(path)
    except FileRefusedError:
        try:
            st = os.lstat(path)
        except OSError:
            return "missing", "", -1, ""
        return ("symlink" if stat.S_ISLNK(st.st_mode) else "other"), "", -1, ""
    with os.fdopen(fd, "rb") as handle:
        size = st.st_size
        if size > max_bytes:
            return "file", "", size, ""
        content = hashlib.sha256()
        obj = _object_hasher(object_format)()
        obj.update(b"blob %d\x00" % size)
        read = 0
        while read <= max_bytes and (piece := handle.read(min(_PIECE, max_bytes + 1 - read))):
            content.update(piece)
            obj.update(piece)
            read += len(piece)
        if read != size:  # changed while we read it
            return "file", content.hexdigest() + "-torn", read, ""
    return "file", content.hexdigest(), size, obj.hexdigest()


def compute_overlay(root: Path, object_format: str, selects: Callable[[str], bool], *,
                    max_file_bytes: int = MAX_OVERLAY_FILE_BYTES) -> Overlay:
    """The overlay of the working tree at ``root`` (absolute) for paths ``selects`` accepts.
    A changed file over ``max_file_bytes`` is listed by size only (never read).

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
            kind, digest, size, oid = _fingerprint(root, change.path, object_format,
                                                   max_file_bytes)
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
    try:  # no link, regular files only (a FIFO swapped in never blocks), max_bytes + 1 read
        got = read_capped(path, max_bytes)
    except FileRefusedError as exc:
        raise WorktreeOverlayStaleError(entry.path) from exc
    data = got.data
    if got.over or len(data) != entry.size or sha256_hex(data) != entry.sha256:
        raise WorktreeOverlayStaleError(entry.path)
    return data
