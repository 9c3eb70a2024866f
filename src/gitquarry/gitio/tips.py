"""Cheap questions about a repository's current refs, for freshness reports."""

from __future__ import annotations

from pathlib import Path

from gitquarry.gitio.runner import run_git


def count_new_commits(git_dir: Path, include: list[str], exclude: list[str],
                      limit: int) -> int:
    """``git rev-list --count --max-count=<limit> <include> --not <exclude>``: how many
    commits the ``include`` tips reach that the ``exclude`` tips do not, counted up to
    ``limit`` (git stops walking there). 0 for no ``include``; -1 when git fails (an old tip
    was garbage-collected, ...)."""
    if not include:
        return 0
    stdin = "\n".join([*include, *(f"^{h}" for h in exclude)]) + "\n"
    proc = run_git(git_dir, ["rev-list", "--count", f"--max-count={limit}", "--stdin"],
                   input_bytes=stdin.encode("ascii"), check=False)
    if proc.returncode != 0:
        return -1
    try:
        return int(proc.stdout.strip() or 0)
    except ValueError:
        return -1
