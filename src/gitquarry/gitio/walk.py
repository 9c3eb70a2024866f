"""Reading history that git itself refuses to walk: tips whose history misses a commit.

``git rev-list`` stops with an error at the first missing commit, so one broken branch would
hide every ref listed with it. ``partition_tips`` finds the tips whose history git can walk
(bisecting the list, a few ``rev-list`` runs), and ``walk_readable`` reads what can still be
read behind the others, one ``git cat-file --batch`` process parsing ``parent`` lines, until
it reaches commits already known or the missing ones.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from gitquarry.errors import GitError
from gitquarry.gitio.catfile import BlobReader
from gitquarry.gitio.refs import rev_list


def partition_tips(git_dir: Path, tips: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Split ``tips`` into (walkable, broken) and list every commit reachable from the
    walkable ones (``rev-list`` order). One ``rev-list`` when all are walkable; otherwise
    about 2·log2(n) per broken tip.

    :raises GitError: never for a missing commit; only if even the walkable set fails.
    """
    try:
        return list(tips), [], rev_list(git_dir, tips, [])
    except GitError:
        pass
    healthy: list[str] = []
    broken: list[str] = []

    def split(group: list[str]) -> None:
        if len(group) == 1:
            try:
                rev_list(git_dir, group, [])
            except GitError:
                broken.append(group[0])
            else:
                healthy.append(group[0])
            return
        mid = len(group) // 2
        for half in (group[:mid], group[mid:]):
            try:
                rev_list(git_dir, half, [])
            except GitError:
                split(half)
            else:
                healthy.extend(half)

    split(list(tips))
    return healthy, broken, rev_list(git_dir, healthy, [])


@dataclass
class WalkResult:
    """``commits``: readable commits found behind the broken tips and not in ``known``, in
    discovery order (newest first along each tip); ``missing``: per tip, the commits its
    history needs that are not in the object store."""

    commits: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)


class _CommitReader:
    """Parents of commits through one ``git cat-file --batch`` process (cached)."""

    def __init__(self, git_dir: Path) -> None:
        self._reader = BlobReader(git_dir)
        self._cache: dict[str, list[str] | None] = {}

    def parents(self, oid: str) -> list[str] | None:
        """The commit's parents, or None when it is missing or not a commit."""
        if oid not in self._cache:
            got = self._reader.read(oid, kinds=("commit",))
            parents: list[str] | None = None
            if got.status == "ok":
                parents = []
                for line in got.data.split(b"\n"):
                    if not line:
                        break
                    if line.startswith(b"parent "):
                        parents.append(line[7:].decode("ascii", "replace").strip())
            self._cache[oid] = parents
        return self._cache[oid]

    def close(self) -> None:
        self._reader.close()


def walk_readable(
    git_dir: Path, tips: list[str], known: Collection[str], shallow: Collection[str] = ()
) -> WalkResult:
    """Walk back from each of ``tips`` through the commits that can be read, stopping at
    commits in ``known`` and at shallow-clone boundaries (``shallow``: their parents are not
    meant to be here). See ``WalkResult``."""
    result = WalkResult()
    seen_global: set[str] = set()
    reader = _CommitReader(git_dir)
    try:
        for tip in tips:
            missing: list[str] = []
            stack = [tip]
            visited: set[str] = set()
            while stack:
                oid = stack.pop()
                if oid in visited or oid in known:
                    continue
                visited.add(oid)
                parents = reader.parents(oid)
                if parents is None:
                    missing.append(oid)
                    continue
                if oid not in seen_global:
                    seen_global.add(oid)
                    result.commits.append(oid)
                if oid not in shallow:
                    stack.extend(reversed(parents))
            result.missing[tip] = missing
    finally:
        reader.close()
    return result
