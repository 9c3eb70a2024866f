"""A workspace: a directory whose repositories are indexed together, and its index location.

The index lives in ``<workspace>/<[indexing] index_dir>`` (default ``.gitquarry/``) as
``index.db``. Searches run from a subdirectory (or given ``--project <subdir>``) find the
workspace by walking up, as git does, to the nearest directory whose configured index
directory holds ``index.db``. ``index_dir`` comes from the user's own configuration (a
repository-owned ``.gitquarry.toml`` cannot move the index); an absolute ``index_dir`` holds one
workspace's index, whose root is recorded next to it in ``WORKSPACE``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitquarry.config import Config, load_config
from gitquarry.errors import (
    IndexAccessError,
    IndexLocationConflictError,
    IndexReadOnlyError,
    InvalidArgumentError,
    NoIndexError,
)
from gitquarry.store import Store, open_store, safe_paths

DB_NAME = "index.db"
#: file next to ``index.db`` recording the workspace root (absolute path, UTF-8, one line).
ROOT_MARKER = "WORKSPACE"


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

    @property
    def index_dir_is_absolute(self) -> bool:
        return Path(os.path.expanduser(self.config.indexing.index_dir)).is_absolute()

    def has_index(self) -> bool:
        return self.db_path.is_file()

    def index_writable(self) -> bool:
        """Whether this process may write the index: its directory (for the WAL, the lock
        and new files) and, when it exists, ``index.db``. A read-only mount counts as not
        writable."""
        directory = self.index_dir
        if directory.exists() and not os.access(directory, os.W_OK):
            return False
        return not self.db_path.exists() or os.access(self.db_path, os.W_OK)

    def recorded_root(self) -> Path | None:
        """The workspace root recorded in ``<index_dir>/WORKSPACE``, or None (also when it is
        a link or not a regular file: never followed)."""
        raw = safe_paths.read_small(self.index_dir / ROOT_MARKER, 16_384)
        try:
            text = raw.decode("utf-8").strip() if raw is not None else ""
        except UnicodeDecodeError:
            return None
        return Path(text) if text else None

    def guard_index_dir(self) -> None:
        """Refuse an index directory the checkout placed: a link (itself or any component
        below the workspace root), not a directory, or holding anything git tracks.

        :raises IndexPathUnsafeError: see ``store.safe_paths``.
        """
        if safe_paths.check_state_dir(self.index_dir, self.root):
            safe_paths.refuse_tracked(self.index_dir, self.root)

    def owns_index(self) -> bool:
        """Whether the index at ``index_dir`` belongs to this workspace: always for a
        relative ``index_dir``; for an absolute one, when the recorded root is this root
        (or nothing is recorded)."""
        if not self.index_dir_is_absolute:
            return True
        recorded = self.recorded_root()
        return recorded is None or recorded == self.root

    def _check_owner(self, *, record: bool) -> None:
        """For an absolute ``index_dir``: refuse another workspace's index and, with
        ``record``, write this root into ``WORKSPACE`` (a recorded root that no longer exists
        was moved here, and is replaced).

        :raises IndexLocationConflictError: the directory holds the index of another
            workspace that still exists.
        """
        if not self.index_dir_is_absolute:
            return
        recorded = self.recorded_root()
        if recorded is not None and recorded != self.root and recorded.is_dir():
            raise IndexLocationConflictError(self.index_dir, recorded, self.root)
        if record and recorded != self.root:
            with contextlib.suppress(OSError, IndexAccessError):
                safe_paths.ensure_state_dir(self.index_dir, self.root)
                safe_paths.write_small(self.index_dir / ROOT_MARKER, f"{self.root}\n".encode())

    def open_store(self, *, create: bool = False, writer: bool | None = None,
                   upgrade: bool | None = None) -> Store:
        """Open the index. ``create=False`` (a read) raises ``NoIndexError`` when none exists
        yet, also when ``index.db`` is a zero-byte or schema-less file (nothing is written
        then: only ``create`` initialises one).

        An existing index this process cannot write is opened read-only
        (``store.read_only``): searches work, writes fail.

        The directory and its files must not have come with the checkout
        (``guard_index_dir``); the index must be one this installation created
        (``store.trust``): a writer (``writer``, default ``create``: a command that builds
        the index) sets a foreign index aside and adopts a legacy one (an older gitquarry's),
        said in ``store.notices``; anyone else is refused.

        An index an older gitquarry wrote is upgraded (its schema migrated) only with
        ``upgrade`` (default ``create``: a command that builds the index, under the writer
        lease); a read raises ``IndexSchemaOutdatedError`` instead, having written nothing.

        :raises NoIndexError, IndexCorruptError, SchemaTooNewError, IndexBusyError
        :raises IndexPathUnsafeError: a link, non-regular file or tracked path.
        :raises IndexUntrustedError: (without ``create``) not created by this installation.
        :raises IndexSchemaOutdatedError: (without ``upgrade``) an older schema.
        """
        self.guard_index_dir()
        existed = safe_paths.check_sqlite_files(self.db_path)
        if not create and not existed:
            raise NoIndexError(self.root)
        self._check_owner(record=create)
        try:
            if existed and not self.index_writable():
                return open_store(self.db_path, read_only=True, initialise=create)
            if create:
                safe_paths.ensure_state_dir(self.index_dir, self.root)
            store = open_store(self.db_path, writer=create if writer is None else writer,
                               initialise=create, upgrade=create if upgrade is None else upgrade)
        except NoIndexError:  # a zero-byte or schema-less file: not indexed yet, left as is
            raise NoIndexError(self.root) from None
        if not existed:
            from gitquarry.errors import GitquarryError
            from gitquarry.gitio.exclude import ensure_info_exclude

            # Keep the new index out of `git status`; best effort (no git, no working tree).
            with contextlib.suppress(GitquarryError):
                ensure_info_exclude(self.index_dir)
        return store

    @contextlib.contextmanager
    def write_lock(
        self, *, wait: bool = False, wait_s: float | None = None, holder: str | None = None,
        on_wait: Callable[[Any], None] | None = None,
    ) -> Iterator[None]:
        """Hold the workspace's writer lease (``store.lease``: an ``flock`` on
        ``index.lock`` naming its holder), shared by CLI runs and daemon jobs.

        One writer per workspace at a time; searches never take it. ``wait_s`` bounds the
        wait (default: none, or 24 h with ``wait``); ``on_wait`` is called once with the
        current holder when the lease is busy.
        :raises WriterBusyError: (an ``IndexBusyError``) still held after the wait.
        :raises IndexReadOnlyError: the index directory cannot be written.
        :raises IndexPathUnsafeError: the directory or ``index.lock`` came with the checkout.
        """
        from gitquarry.store.lease import writer_lease

        self.guard_index_dir()
        if not self.index_writable():
            raise IndexReadOnlyError(self.index_dir, "this directory cannot be written")
        safe_paths.ensure_state_dir(self.index_dir, self.root)

        limit = wait_s if wait_s is not None else (86_400.0 if wait else 0.0)
        with writer_lease(
            self.index_dir / "index.lock", db_path=self.db_path, holder=holder,
            wait_s=limit, on_wait=on_wait,
        ):
            yield


def find_workspace_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` whose configured index directory holds
    ``index.db`` (belonging to that directory, for an absolute ``index_dir``), or None.

    The index directory of each candidate is the user's ``[indexing] index_dir``, or the one
    the candidate's own ``.gitquarry.toml`` sets when the user trusts that workspace.
    """
    from gitquarry.config import WORKSPACE_CONFIG_NAME
    from gitquarry.errors import ConfigError

    base = load_config(None)
    current = start.resolve()
    for candidate in (current, *current.parents):
        config = base
        if (candidate / WORKSPACE_CONFIG_NAME).is_file():
            with contextlib.suppress(ConfigError):  # reported when that workspace is used
                config = load_config(candidate)
        workspace = Workspace(root=candidate, config=config)
        if workspace.has_index() and workspace.owns_index():
            return candidate
    return None


def resolve_workspace(
    project: Path | None, *, for_search: bool = False, label: str = "--project"
) -> Workspace:
    """The workspace for a command.

    For searches (``for_search``), the nearest directory at or above ``project`` (default:
    the current directory) that has an index, as git finds a repository, falling back to
    that directory itself. Otherwise ``project`` (default: the current directory) is the
    workspace. ``label`` names the argument in errors.
    :raises InvalidArgumentError: ``project`` is not a directory.
    :raises ConfigError: the configuration is invalid.
    """
    if project is not None:
        start = project.expanduser()
        if not start.is_dir():
            raise InvalidArgumentError(label, f"{project} is not a directory")
        start = start.resolve()
    else:
        start = Path.cwd().resolve()
    root = (find_workspace_root(start) if for_search else None) or start
    return Workspace(root=root, config=load_config(root))
