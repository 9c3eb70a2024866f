"""The ancestry question search asks git about a few result commits: which commits a merge
brought in. One small git process (exact: git's own walk, with its commit-graph when the
repository has one), asked only for the handful of merges a response shows. (Which refs
contain a commit is answered from the index: ``history.refs_contain``.)"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal

from gitquarry.errors import GitError
from gitquarry.gitio.runner import run_git

#: :func:`merged_or_many`'s answer for a merge that brought in more than ``limit`` commits
MANY: Final = "many"


def merged_commits(
    git_dir: Path, merge_parents: Sequence[str], *, limit: int
) -> list[str] | None:
    """The commits a merge brought in: reachable from its other parents but not from its
    first parent (``git rev-list --max-count=limit+1 P2 … ^P1``), newest first. None when
    there are more than ``limit`` (the caller then treats the merge as bringing "many"), or
    when git cannot answer (a parent is missing from this repository).
    """
    found = merged_or_many(git_dir, merge_parents, limit=limit)
    return found if isinstance(found, list) else None


def merged_or_many(
    git_dir: Path, merge_parents: Sequence[str], *, limit: int
) -> list[str] | Literal["many"] | None:
    """:func:`merged_commits` telling its two Nones apart: :data:`MANY` when the merge
    brought in more than ``limit`` commits (fixed by the hashes, so a caller may keep it),
    None when git cannot answer (a parent missing: ask again later)."""
    if len(merge_parents) < 2:
        return []
    first, others = merge_parents[0], merge_parents[1:]
    stdin = "\n".join([*others, f"^{first}"]) + "\n"
    try:
        proc = run_git(
            git_dir, ["rev-list", f"--max-count={limit + 1}", "--stdin"],
            input_bytes=stdin.encode("ascii"),
        )
    except GitError:
        return None
    hashes = proc.stdout.decode("ascii").split()
    return MANY if len(hashes) > limit else hashes
