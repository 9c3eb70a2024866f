"""Commits and trees: resolve a revision to one commit, list a commit's tree with sizes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gitquarry.errors import GitError, RevisionNotFoundError
from gitquarry.gitio.runner import run_git

#: the longest revision name looked up (a path's worth; far below the kernel's 128 KiB cap
#: on one argument, which made a longer one an ``OSError``)
MAX_REVISION_CHARS = 4096
_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

#: ``ls-tree`` modes.
MODE_SYMLINK = "120000"
MODE_GITLINK = "160000"


@dataclass(frozen=True)
class TreeEntry:
    """One path of a commit's tree. ``mode`` as git prints it (``100644``, ``100755``,
    ``120000`` symlink, ``160000`` submodule); ``kind`` ``blob`` or ``commit``; ``oid`` the
    object id; ``size`` bytes (-1 for a submodule); ``path`` repository-relative, POSIX."""

    mode: str
    kind: str
    oid: str
    size: int
    path: str


def resolve_commit(git_dir: Path, revision: str) -> str:
    """The full id of the commit ``revision`` names (a branch, tag, hash, ``HEAD~3``...).

    :raises RevisionNotFoundError: it names no commit (or is empty, starts with ``-``, is
        longer than :data:`MAX_REVISION_CHARS`, or rev-parse answers something other than
        one object id, as ``^HEAD`` makes it print ``^<id>``).
    """
    if not revision or revision.startswith("-") or "\x00" in revision or "\n" in revision \
            or len(revision) > MAX_REVISION_CHARS:
        raise RevisionNotFoundError(revision)
    proc = run_git(
        git_dir, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
        check=False,
    )
    oid = proc.stdout.decode("ascii", "replace").strip()
    if proc.returncode != 0 or not _FULL_OID.fullmatch(oid):
        raise RevisionNotFoundError(revision)
    return oid


def list_tree(git_dir: Path, commit: str) -> list[TreeEntry]:
    """Every blob, symlink and submodule path of ``commit``'s tree, sorted by path
    (``git ls-tree -r -z --full-tree -l``; paths exact, never C-quoted).

    :raises GitError: git failed (a missing tree object, for instance).
    """
    proc = run_git(git_dir, ["ls-tree", "-r", "-z", "--full-tree", "-l", commit])
    entries: list[TreeEntry] = []
    for record in proc.stdout.split(b"\x00"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        fields = meta.split()
        if len(fields) != 4:
            raise GitError(["git", "ls-tree"], 0, f"unexpected ls-tree line {record[:80]!r}")
        mode, kind, oid, size = (f.decode("ascii", "replace") for f in fields)
        entries.append(TreeEntry(
            mode=mode, kind=kind, oid=oid, size=int(size) if size.isdigit() else -1,
            path=raw_path.decode("utf-8", "surrogateescape"),
        ))
    entries.sort(key=lambda e: e.path)
    return entries


def head_commit(git_dir: Path) -> str | None:
    """The commit HEAD points to, or None on an unborn branch."""
    try:
        return resolve_commit(git_dir, "HEAD")
    except RevisionNotFoundError:
        return None
