"""A workspace: a directory whose repositories are indexed together, and its index location.

The index lives in ``<workspace>/<[indexing] index_dir>`` (default ``.gitquarry/``) as
``index.db``. Commands run from a subdirectory find the workspace by walking up to the nearest
directory holding ``.gitquarry/index.db``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gitquarry.config import Config, load_config
from gitquarry.errors import (
    IndexAccessError,
    IndexBusyError,
    InvalidArgumentError,
    NoIndexError,
)
from gitquarry.store import Store, open_store

DB_NAME = "index.db"


@dataclass
class Workspace:
    """``root`` is absolute and resolved; ``index_dir`` holds ``index.db`` and the write lock."""

    root: Path
    config: Config

    @property
    def index_dir(self) -> Path:
        configured = Path(os.path.expanduser(self.config.indexing.index_dir))
        return configured if configured.is_absolute() else self.root / configured

    @property
    def db_path(self) -> Path:
        return self.index_dir / DB_NAME

    def has_index(self) -> bool:
        return self.db_path.is_file()

    def open_store(self, *, create: bool = False) -> Store:
        """Open the index. ``create=False`` raises ``NoIndexError`` when none exists yet.

        :raises NoIndexError, IndexCorruptError, SchemaTooNewError, IndexBusyError
        """
        if self.db_path.exists() and not self.db_path.is_file():
            raise IndexAccessError(self.db_path, "it is not a regular file")
        existed = self.has_index()
        if not create and not existed:
            raise NoIndexError(self.root)
        store = open_store(self.db_path)
        if not existed:
            from gitquarry.errors import GitquarryError
            from gitquarry.gitio.exclude import ensure_info_exclude

            # Keep the new index out of `git status`; best effort (no git, no working tree).
            with contextlib.suppress(GitquarryError):
                ensure_info_exclude(self.index_dir)
        return store

    @contextlib.contextmanager
    def write_lock(self, *, wait: bool = False) -> Iterator[None]:
        """Hold the workspace's indexing lock (an ``flock`` on ``index.lock``).

        One indexing run per workspace at a time; searches never take it.
        :raises IndexBusyError: another process holds it and ``wait`` is False.
        """
        lock_path = self.index_dir / "index.lock"
        try:
            self.index_dir.mkdir(parents=True, exist_ok=True)
            handle = open(lock_path, "a+")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise IndexAccessError(self.index_dir, exc.strerror or str(exc)) from exc
        with handle:
            flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
            try:
                fcntl.flock(handle.fileno(), flags)
            except BlockingIOError as exc:
                raise IndexBusyError(self.db_path) from exc
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def find_workspace_root(start: Path, index_dir: str = ".gitquarry") -> Path | None:
    """The nearest directory at or above ``start`` holding ``<index_dir>/index.db``, or None."""
    current = start.resolve()
    for candidate in (current, *current.parents):
        if (candidate / index_dir / DB_NAME).is_file():
            return candidate
    return None


def resolve_workspace(
    project: Path | None, *, for_search: bool = False, label: str = "--project"
) -> Workspace:
    """The workspace for a command.

    ``project`` given: that directory. Otherwise, for searches, the nearest ancestor of the
    current directory that has an index, falling back to the current directory. ``label``
    names the argument in errors.
    :raises InvalidArgumentError: ``project`` is not a directory.
    :raises ConfigError: the configuration is invalid.
    """
    if project is not None:
        root = project.expanduser()
        if not root.is_dir():
            raise InvalidArgumentError(label, f"{project} is not a directory")
        root = root.resolve()
    else:
        cwd = Path.cwd().resolve()
        root = (find_workspace_root(cwd) if for_search else None) or cwd
    return Workspace(root=root, config=load_config(root))
