"""``git log -S``: which of some commits add or remove a string."""

from __future__ import annotations

from pathlib import Path

from gitquarry.gitio.runner import run_git

#: the diff options the index was built with (gitio.log), so both sides agree
_DIFF = ("--no-ext-diff", "--no-textconv", "-M", "--diff-algorithm=myers",
         "--ignore-submodules=none")


def pickaxe_commits(git_dir: Path, hashes: list[str], needle: str) -> set[str]:
    """The commits of ``hashes`` whose diff against their parent changes the number of
    occurrences of ``needle`` in some file (``git log -S<needle>``, case-sensitive, merges
    never match, as ``git log -S`` shows them). One ``git log --no-walk --stdin`` for all.

    :raises GitError: git failed (a listed commit is missing, ...).
    """
    if not hashes or not needle:
        return set()
    proc = run_git(
        git_dir,
        ["log", "--no-walk=unsorted", "--stdin", "--format=%H", f"-S{needle}", *_DIFF],
        input_bytes=("\n".join(hashes) + "\n").encode("ascii"),
    )
    return set(proc.stdout.decode("ascii", "replace").split())
