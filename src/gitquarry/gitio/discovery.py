"""Find the Git repositories under a workspace directory.

A repository is identified by its git *common dir*: a linked worktree and its main checkout,
reached twice, are one repository. Recognised: a working tree with a ``.git`` directory or
``.git`` file (linked worktrees, submodules), a bare repository, and the workspace path itself
when it lies inside a repository. Excluded directories (gitignore-style globs relative to the
workspace) and, by default, hidden directories are not descended into.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from wcmatch import glob as wcglob

from gitquarry.errors import GitError, NotARepositoryError
from gitquarry.gitio.runner import run_git

log = logging.getLogger(__name__)

_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE


@dataclass(frozen=True)
class Repository:
    """A repository. ``common_dir`` (absolute, resolved) is its identity and ``git_dir`` what
    git commands use (the common dir: refs and objects live there, whichever worktree we
    came in through); ``path`` is the main working tree, or the bare directory."""

    common_dir: Path
    git_dir: Path
    path: Path
    is_bare: bool
    object_format: str  # "sha1" or "sha256"


def _looks_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def inspect_repository(path: Path) -> Repository:
    """Describe the repository at ``path`` (a working tree, a ``.git`` dir or a bare repo).

    :raises NotARepositoryError: ``path`` is not in a repository.
    """
    try:
        proc = run_git(
            None,
            [
                "rev-parse",
                "--path-format=absolute",
                "--git-dir",
                "--git-common-dir",
                "--is-bare-repository",
                "--show-object-format",
                "--show-toplevel",
            ],
            cwd=path,
            check=False,
        )
    except FileNotFoundError as exc:
        raise NotARepositoryError(path) from exc
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    # --show-toplevel fails (exit 128) in a bare repo but the other lines are printed.
    if len(lines) < 4:
        raise NotARepositoryError(path)
    git_dir = Path(lines[0]).resolve()
    common_dir = Path(lines[1]).resolve()
    is_bare = lines[2].strip() == "true"
    object_format = lines[3].strip() or "sha1"
    if is_bare:
        top = common_dir
    elif len(lines) >= 5 and lines[4]:
        top = Path(lines[4]).resolve()
    else:
        raise NotARepositoryError(path)
    # Prefer the main working tree as the display path when we came in through a linked one.
    if not is_bare and git_dir != common_dir and common_dir.name == ".git":
        top = common_dir.parent
    return Repository(
        common_dir=common_dir,
        git_dir=common_dir,  # refs and objects live in the common dir
        path=top,
        is_bare=is_bare,
        object_format=object_format,
    )


def _excluded(rel: str, patterns: list[str]) -> bool:
    if not patterns or not rel:
        return False
    return wcglob.globmatch(rel, patterns, flags=_GLOB_FLAGS) or wcglob.globmatch(
        rel + "/", patterns, flags=_GLOB_FLAGS
    )


def discover_repositories(
    root: Path,
    *,
    exclude: list[str] | None = None,
    exclude_hidden_dirs: bool = True,
) -> list[Repository]:
    """Every repository under ``root``, once each, sorted by path.

    :raises NotARepositoryError: never; a directory that only looks like a repository is
        skipped with a logged warning.
    """
    root = root.resolve()
    patterns = list(exclude or [])
    found: dict[Path, Repository] = {}

    def add(candidate: Path) -> None:
        try:
            repo = inspect_repository(candidate)
        except (NotARepositoryError, GitError) as exc:
            log.warning("skipping %s: %s", candidate, exc)
            return
        current = found.get(repo.common_dir)
        # Keep the main working tree when a linked worktree was seen first.
        if current is None or (current.path != repo.path and repo.git_dir == repo.common_dir):
            found[repo.common_dir] = repo

    # The workspace may itself sit inside a repository (e.g. `gitquarry index src/`), or be a
    # bare repository, whose contents are git internals: nothing more to find below it.
    if not (root / ".git").exists():
        try:
            add_repo = inspect_repository(root)
        except NotARepositoryError:
            add_repo = None
        if add_repo is not None:
            found[add_repo.common_dir] = add_repo
            if add_repo.is_bare and add_repo.common_dir == root:
                return [add_repo]

    for dirpath, dirnames, filenames in os.walk(root, topdown=True, followlinks=False):
        current = Path(dirpath)
        rel = current.relative_to(root).as_posix()
        rel = "" if rel == "." else rel
        if _excluded(rel, patterns):
            dirnames.clear()
            continue
        if rel and _looks_bare(current) and ".git" not in dirnames and ".git" not in filenames:
            add(current)
            dirnames.clear()  # a bare repository's contents are git internals
            continue
        if ".git" in dirnames or ".git" in filenames:
            add(current)
        kept = []
        for name in sorted(dirnames):
            if name == ".git":
                continue
            if exclude_hidden_dirs and name.startswith("."):
                continue
            kept.append(name)
        dirnames[:] = kept
    return sorted(found.values(), key=lambda r: str(r.path))
