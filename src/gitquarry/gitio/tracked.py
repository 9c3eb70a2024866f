"""What git tracks under a directory (the check that refuses an index a checkout placed)."""

from __future__ import annotations

from pathlib import Path

from gitquarry.errors import GitNotFoundError
from gitquarry.gitio.runner import run_git


def tracked_under(root: Path, directory: Path) -> list[str]:
    """Paths (relative to their repository's top, ``/``-separated, at most 10) that git
    tracks at or under ``directory``, asked from ``root`` (an existing directory that
    ``directory`` lies in); [] when ``root`` is not in a working tree, ``directory`` is
    outside it, or git is not installed. One ``git ls-files`` run.
    """
    probe = root
    while not probe.is_dir() and probe != probe.parent:
        probe = probe.parent
    try:
        proc = run_git(None, ["ls-files", "-z", "--full-name", "--", f":(literal){directory}"],
                       cwd=probe, check=False)
    except GitNotFoundError:  # no git, no checkout to have placed it (the token still counts)
        return []
    if proc.returncode != 0:
        return []
    names = [n for n in proc.stdout.split(b"\0") if n]
    return [n.decode("utf-8", "replace") for n in names[:10]]
