"""Find the Git repositories under a workspace directory.

A repository is identified by its git *common dir*: a linked worktree and its main checkout,
reached twice, are one repository. Recognised: a working tree with a ``.git`` directory or
``.git`` file (linked worktrees, submodules), a bare repository, and the workspace path itself
when it lies inside a repository. Excluded directories (gitignore rules relative to the
workspace, ``gitquarry.globs``: a pattern without a slash matches at any depth) and, by
default, hidden directories are not descended into. A bare repository is named to git
explicitly, so ``safe.bareRepository=explicit`` does not hide it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from gitquarry.errors import (
    BareRepositoryRefusedError,
    GitquarryError,
    NotARepositoryError,
    RepositoryNotTrustedError,
    RepositoryUnreadableError,
    git_message,
)
from gitquarry.gitio.runner import display_path, run_git
from gitquarry.globs import directory_matcher

log = logging.getLogger(__name__)

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
    #: the git dir of the working tree we came in through (resolved; for a linked worktree
    #: its ``.git/worktrees/<name>``), when the discovering ``rev-parse`` printed it: what
    #: ``git rev-parse --absolute-git-dir`` there prints, without a second process. None
    #: for a bare repository (not compared: the identity is ``common_dir``)
    own_git_dir: Path | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SkippedRepository:
    """A directory that holds a repository git refuses (or fails) to open. ``code`` is the
    error's stable code (``repository_not_trusted``, ``bare_repository_refused``,
    ``repository_unreadable``, ``not_a_repository``; ``repository_symlink``: a symbolic link
    to a repository, never followed) and ``message`` says why and what to do."""

    path: Path
    code: str
    message: str


@dataclass
class Discovery:
    """``repositories`` found under a workspace (sorted by path) and the ones ``skipped``."""

    repositories: list[Repository]
    skipped: list[SkippedRepository]


def _refusal(path: Path, stderr: str) -> GitquarryError:
    """The typed error for git's refusal to open ``path`` (``stderr`` as git printed it,
    in the C locale the runner sets)."""
    shown = display_path(path)
    if "dubious ownership" in stderr:
        remedy = next(
            (ln.strip() for ln in stderr.splitlines() if "safe.directory" in ln
             and ln.strip().startswith("git config")),
            f"git config --global --add safe.directory {shown}",
        )
        return RepositoryNotTrustedError(shown, remedy)
    if "cannot use bare repository" in stderr:
        return BareRepositoryRefusedError(shown)
    if "not a git repository" in stderr.lower() or not stderr.strip():
        return NotARepositoryError(path)
    return RepositoryUnreadableError(shown, git_message(stderr))


#: ``SkippedRepository.code`` of a repository reached through a symbolic link
SYMLINK_CODE = "repository_symlink"


def _links_to_repository(link: Path) -> bool:
    """Whether the directory ``link`` (a symbolic link) points to looks like a repository:
    a ``.git`` in it, or a bare repository's layout (stat calls only; nothing is read)."""
    try:
        return (link / ".git").exists() or _looks_bare(link)
    except OSError:
        return False


def _symlink_message(link: Path) -> str:
    """Why the repository at ``link`` was skipped (the path escaped: ``display_path``, and
    the surfaces escape control characters)."""
    return (f"{display_path(link)} is a symbolic link to a repository: skipped (links under "
            "the workspace are never followed, as their targets are untrusted); index the "
            "repository where it lives, or move it under the workspace")


def _looks_bare(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def _inspect_bare(path: Path) -> Repository | None:
    """``path`` as a bare repository named explicitly (``git --git-dir=PATH``), which
    ``safe.bareRepository=explicit`` allows; None when git does not read it as a bare
    repository there (the caller then asks git to discover it as usual)."""
    try:
        proc = run_git(
            None,
            [f"--git-dir={path}", "rev-parse", "--path-format=absolute", "--git-dir",
             "--git-common-dir", "--is-bare-repository", "--show-object-format"],
            cwd=path, check=False,
        )
    except FileNotFoundError:
        return None
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode != 0 or len(lines) < 4 or lines[2].strip() != "true":
        return None
    common_dir = Path(lines[1]).resolve()
    return Repository(common_dir=common_dir, git_dir=common_dir, path=common_dir, is_bare=True,
                      object_format=lines[3].strip() or "sha1")


def inspect_repository(path: Path) -> Repository:
    """Describe the repository at ``path`` (a working tree, a ``.git`` dir or a bare repo).

    A directory that looks like a bare repository (``HEAD``, ``objects/``, ``refs/``, not a
    ``.git`` directory) is named to git explicitly (``--git-dir``): gitquarry names every
    repository it reads, so ``safe.bareRepository=explicit`` (hardened setups, agent
    harnesses) does not hide it.

    :raises NotARepositoryError: ``path`` is not in a repository.
    :raises RepositoryNotTrustedError: git refuses it (owned by another user).
    :raises BareRepositoryRefusedError: git refuses an implicit bare repository.
    :raises RepositoryUnreadableError: git cannot open it (configuration, format).
    """
    if path.name != ".git" and _looks_bare(path):
        bare = _inspect_bare(path)
        if bare is not None:
            return bare
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
        raise _refusal(path, proc.stderr.decode("utf-8", "replace"))
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
        own_git_dir=None if is_bare else git_dir,
    )


def discover_repositories(
    root: Path,
    *,
    exclude: list[str] | None = None,
    exclude_hidden_dirs: bool = True,
) -> list[Repository]:
    """Every repository under ``root``, once each, sorted by path (``discover`` also says
    which were skipped and why)."""
    return discover(root, exclude=exclude, exclude_hidden_dirs=exclude_hidden_dirs).repositories


def discover(
    root: Path,
    *,
    exclude: list[str] | None = None,
    exclude_hidden_dirs: bool = True,
) -> Discovery:
    """Every repository under ``root``, once each, sorted by path, and every directory that
    holds one git refuses or fails to open (``Discovery.skipped``, never silently dropped),
    and every symbolic link (not excluded, not hidden when hidden directories are) to a
    directory that looks like a repository: skipped, never followed (code
    ``repository_symlink``).
    """
    root = root.resolve()
    # gitignore rules, one engine with files_glob (``gitquarry.globs``): ``archive`` (no
    # slash) excludes an ``archive`` directory at any depth. The configuration loader checks
    # the patterns first (``[indexing] exclude``: ConfigError).
    excluded = directory_matcher(list(exclude or []))
    found: dict[Path, Repository] = {}
    skipped: dict[Path, SkippedRepository] = {}

    def skip(candidate: Path, exc: GitquarryError) -> None:
        log.info("skipping %s: %s", display_path(candidate), exc)
        skipped[candidate] = SkippedRepository(candidate, exc.code, str(exc))

    def add(candidate: Path) -> None:
        try:
            repo = inspect_repository(candidate)
        except (GitquarryError, OSError) as exc:
            if isinstance(exc, OSError):
                exc = RepositoryUnreadableError(display_path(candidate), str(exc))
            skip(candidate, exc)
            return
        current = found.get(repo.common_dir)
        # Keep the main working tree when a linked worktree was seen first.
        if current is None or (current.path != repo.path and repo.git_dir == repo.common_dir):
            found[repo.common_dir] = repo

    # The workspace may itself sit inside a repository (e.g. `gitquarry index src/`), or be a
    # bare repository, whose contents are git internals: nothing more to find below it.
    if not (root / ".git").exists():
        try:
            add_repo: Repository | None = inspect_repository(root)
        except NotARepositoryError:
            add_repo = None
        except (GitquarryError, OSError) as exc:
            add_repo = None
            if isinstance(exc, OSError):
                exc = RepositoryUnreadableError(display_path(root), str(exc))
            skip(root, exc)
        if add_repo is not None:
            found[add_repo.common_dir] = add_repo
            if add_repo.is_bare and add_repo.common_dir == root:
                return Discovery([add_repo], [])

    for dirpath, dirnames, filenames in os.walk(root, topdown=True, followlinks=False):
        current = Path(dirpath)
        rel = current.relative_to(root).as_posix()
        rel = "" if rel == "." else rel
        if excluded(rel):
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
            if os.path.islink(current / name):  # never followed: said when it is a repository
                link = current / name
                if not excluded(f"{rel}/{name}" if rel else name) and _links_to_repository(link):
                    skipped[link] = SkippedRepository(link, SYMLINK_CODE, _symlink_message(link))
                continue
            kept.append(name)
        dirnames[:] = kept
    return Discovery(
        sorted(found.values(), key=lambda r: os.fsencode(r.path)),
        sorted(skipped.values(), key=lambda s: os.fsencode(s.path)),
    )
