"""Ancestry questions search asks about a few result commits: which commits a merge brought
in, and which refs contain a commit. Each is one small git process (exact: git's own walk,
with its commit-graph when the repository has one), asked only for the handful of commits a
response shows."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gitquarry.errors import GitError
from gitquarry.gitio.refs import ref_from_bytes
from gitquarry.gitio.runner import run_git

#: git processes run at once for ``refs_containing``
PARALLEL = 4


def merged_commits(
    git_dir: Path, merge_parents: Sequence[str], *, limit: int
) -> list[str] | None:
    """The commits a merge brought in: reachable from its other parents but not from its
    first parent (``git rev-list --max-count=limit+1 P2 … ^P1``), newest first. None when
    there are more than ``limit`` (the caller then treats the merge as bringing "many"), or
    when git cannot answer (a parent is missing from this repository).
    """
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
    return None if len(hashes) > limit else hashes


def _containing(git_dir: Path, commit: str) -> list[str] | None:
    try:
        proc = run_git(
            git_dir, ["for-each-ref", "--format=%(refname)", f"--contains={commit}"],
        )
    except GitError:
        return None
    return [ref_from_bytes(line) for line in proc.stdout.split(b"\n") if line]


def refs_containing(
    git_dir: Path, commits: Sequence[str], *, among: set[str] | None = None
) -> dict[str, list[str] | None]:
    """For each commit, the refs whose history contains it (``git for-each-ref --contains``),
    sorted; only refs in ``among`` when given (e.g. the refs the index read). None for a
    commit git cannot answer about. One git process per commit, ``PARALLEL`` at a time.
    """
    unique = list(dict.fromkeys(commits))
    if not unique:
        return {}
    with ThreadPoolExecutor(max_workers=min(PARALLEL, len(unique))) as pool:
        found = list(pool.map(lambda c: _containing(git_dir, c), unique))
    out: dict[str, list[str] | None] = {}
    for commit, refs in zip(unique, found, strict=True):
        if refs is not None and among is not None:
            refs = [r for r in refs if r in among]
        out[commit] = sorted(refs) if refs is not None else None
    return out
