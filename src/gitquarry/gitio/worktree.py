"""Tracked changes in a working tree (``git status --porcelain=v2 -z``), untracked excluded.

Used by worktree overlays: which tracked paths differ from HEAD (staged or not), with git's
modes, so symlinks and submodules can be told apart from regular files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitquarry.gitio.runner import run_git


@dataclass(frozen=True)
class TrackedChange:
    """One tracked path that differs from HEAD.

    ``state`` is ``modified``, ``added`` (staged new file), ``deleted`` or ``renamed``
    (``old_path`` set); ``worktree_mode`` git's mode of the working-tree file (``100644``,
    ``120000`` symlink, ``160000`` submodule, ``000000`` when absent); ``path`` is
    repository-relative.
    """

    path: str
    old_path: str | None
    state: str
    worktree_mode: str


def _state(xy: str, worktree_mode: str) -> str:
    if worktree_mode == "000000" or "D" in xy:
        return "deleted"
    if xy[0] == "A":
        return "added"
    return "modified"


def tracked_changes(worktree: Path) -> list[TrackedChange]:
    """Tracked changes of the working tree at ``worktree`` against its HEAD, sorted by path.

    :raises GitError: git failed (not a working tree, for instance).
    """
    proc = run_git(
        None,
        ["status", "--porcelain=v2", "-z", "--untracked-files=no", "--ignore-submodules=none",
         "--find-renames"],
        cwd=worktree,
    )
    records = proc.stdout.split(b"\x00")
    changes: list[TrackedChange] = []
    i = 0
    while i < len(records):
        record = records[i].decode("utf-8", "surrogateescape")
        i += 1
        if not record:
            continue
        kind = record[0]
        if kind == "1":
            fields = record.split(" ", 8)
            xy, mode_w, path = fields[1], fields[5], fields[8]
            changes.append(TrackedChange(path, None, _state(xy, mode_w), mode_w))
        elif kind == "2":
            fields = record.split(" ", 9)
            xy, mode_w, path = fields[1], fields[5], fields[9]
            old = records[i].decode("utf-8", "surrogateescape") if i < len(records) else ""
            i += 1
            state = "deleted" if mode_w == "000000" else "renamed"
            changes.append(TrackedChange(path, old, state, mode_w))
        elif kind == "u":
            fields = record.split(" ", 10)
            mode_w, path = fields[6], fields[10]
            changes.append(TrackedChange(path, None, _state(fields[1], mode_w), mode_w))
    changes.sort(key=lambda c: c.path)
    return changes


def worktree_top(path: Path) -> Path | None:
    """The top of the working tree containing ``path``, or None for a bare repository."""
    proc = run_git(None, ["rev-parse", "--show-toplevel"], cwd=path, check=False)
    text = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return Path(text) if proc.returncode == 0 and text else None


def own_git_dir(path: Path) -> Path | None:
    """The git dir of the working tree (or bare repository) at ``path``: for a linked
    worktree its own ``.git/worktrees/<name>`` (its HEAD, shared objects and refs)."""
    proc = run_git(None, ["rev-parse", "--absolute-git-dir"], cwd=path, check=False)
    text = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return Path(text) if proc.returncode == 0 and text else None
