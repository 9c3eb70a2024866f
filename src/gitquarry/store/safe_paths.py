"""Guarded file operations for gitquarry's own state directories (an index directory, a
repository's ``.gitquarry/``).

A checkout places whatever its repository commits, and ``git clone`` checks out a committed
``.gitquarry`` path like any other (``.git/info/exclude`` hides only an untracked one). So no
file or directory gitquarry creates, opens for writing, locks, migrates or deletes there may
be a symbolic link, a non-regular file (FIFO, socket, device) or a path that resolves outside
its directory. Every such operation goes through this module:

* :func:`check_state_dir` / :func:`ensure_state_dir`: the directory itself, and every
  component between the workspace (or repository) root and it, is a real directory, never a
  link; created one component at a time.
* :func:`open_regular`: ``os.open`` with ``O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK`` (a FIFO
  never blocks), then ``fstat`` ``S_ISREG`` on the opened descriptor; opened for writing,
  it must have one link (a hard link passes both checks).
* :func:`check_regular`: ``lstat`` for what cannot be opened that way; SQLite opens its own
  files, so :func:`check_sqlite_files` checks the database, its ``-wal``, ``-shm`` and
  ``-journal`` before every connection.
* :func:`refuse_tracked`: nothing under the directory may be tracked by git (it came with the
  checkout, and git would put it back).

Each refusal is an ``IndexPathUnsafeError`` (code ``index_path_unsafe``) naming the path and
the remedy. Races with a local attacker who can already write the directory are out of scope:
the threat is a static tree that a checkout (or an archive) placed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from gitquarry.errors import IndexAccessError, IndexPathUnsafeError

#: SQLite's companion files of a database ``X``: ``X-wal``, ``X-shm``, ``X-journal``.
SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def _kind(mode: int) -> str:
    """What a path that should be a regular file is instead."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory, not a regular file"
    if stat.S_ISFIFO(mode):
        return "a FIFO, not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a regular file"
    return "not a regular file"


def _dir_kind(mode: int) -> str:
    """What a path that should be a directory is instead."""
    return "a symbolic link" if stat.S_ISLNK(mode) else "not a directory"


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:  # a component is a file: reported by the directory check
        return None
    except OSError as exc:
        raise IndexAccessError(path, exc.strerror or str(exc)) from exc


def _refuse_hard_link(path: Path, info: os.stat_result) -> None:
    """A regular file that gitquarry writes has exactly one link: it never makes a hard
    link, and one to another file (placed by an archive, or by anyone who can write the
    directory) passes ``O_NOFOLLOW`` and ``S_ISREG`` alike, so writing would change that
    other file (truncate a victim, or write into another workspace's index).

    :raises IndexPathUnsafeError: ``info.st_nlink`` is more than 1.
    """
    if info.st_nlink > 1:
        raise IndexPathUnsafeError(
            path, f"a hard link ({info.st_nlink} names for one file), so writing it would "
            "change another file too")


def check_regular(path: Path) -> bool:
    """Whether ``path`` exists; when it does it must be a regular file, not a link.

    :raises IndexPathUnsafeError: it is a link, a directory, a FIFO, a socket or a device.
    """
    info = _lstat(path)
    if info is None:
        return False
    if not stat.S_ISREG(info.st_mode):
        raise IndexPathUnsafeError(path, _kind(info.st_mode))
    return True


def _components(directory: Path, root: Path | None) -> list[Path]:
    """``directory`` and its ancestors below ``root`` (outermost first); just ``directory``
    when it is not under ``root`` (a user-configured absolute location)."""
    if root is not None:
        try:
            rel = directory.relative_to(root)
        except ValueError:
            rel = None
        if rel is not None:
            out: list[Path] = []
            current = root
            for part in rel.parts:
                current = current / part
                out.append(current)
            return out
    return [directory]


def check_state_dir(directory: Path, root: Path | None = None) -> bool:
    """Whether ``directory`` exists; every existing component of it below ``root`` must be a
    real directory (never a link). Without ``root`` (or outside it) only ``directory`` itself
    is checked: the user chose that location.

    :raises IndexPathUnsafeError: a component is a link or not a directory.
    """
    for part in _components(directory, root):
        info = _lstat(part)
        if info is None:
            return False
        if not stat.S_ISDIR(info.st_mode):
            raise IndexPathUnsafeError(part, _dir_kind(info.st_mode))
    return True


def ensure_state_dir(directory: Path, root: Path | None = None, *, mode: int = 0o777) -> Path:
    """Create ``directory`` and check it as :func:`check_state_dir` does. Returns
    ``directory``. Under ``root`` (a workspace, a repository's git directory), each
    component below ``root`` is created and ``root`` itself must exist: a root that was
    removed or moved is never created again (a daemon job that outlived its workspace would
    otherwise bring back an empty one). Anywhere else (a location the user configured),
    its parents are created as ``mkdir -p`` does.

    :raises IndexPathUnsafeError: a component is a link or not a directory.
    :raises IndexAccessError: it cannot be created, or ``root`` is gone.
    """
    parts = _components(directory, root)
    under_root = root is not None and parts[0].parent == root
    if under_root and root is not None and not root.is_dir():
        raise IndexAccessError(directory, f"{root} is gone (removed or moved); it is not "
                               "created again")
    try:
        if not under_root:
            parts[0].parent.mkdir(parents=True, exist_ok=True)
        for part in parts:
            with contextlib.suppress(FileExistsError):
                part.mkdir(mode=mode)
            info = part.lstat()
            if not stat.S_ISDIR(info.st_mode):
                raise IndexPathUnsafeError(part, _dir_kind(info.st_mode))
    except OSError as exc:
        raise IndexAccessError(directory, exc.strerror or str(exc)) from exc
    return directory


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags)`` that never follows a link and never blocks on a FIFO; the
    descriptor is checked to be a regular file. The caller closes it.

    :raises IndexPathUnsafeError: ``path`` is a link or not a regular file, or (opened for
        writing) a hard link.
    :raises IndexAccessError: it cannot be opened (permissions, missing directory).
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IndexPathUnsafeError(path, "a symbolic link") from exc
        info = _lstat(path)
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise IndexPathUnsafeError(path, _kind(info.st_mode)) from exc
        raise IndexAccessError(path, exc.strerror or str(exc)) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise IndexPathUnsafeError(path, _kind(info.st_mode))
        if flags & (os.O_WRONLY | os.O_RDWR):
            _refuse_hard_link(path, info)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_small(path: Path, limit: int = 65_536) -> bytes | None:
    """At most ``limit`` bytes of the regular file ``path``; None when it is missing,
    unreadable, a link or not a regular file (a reader of gitquarry's own small state files
    never fails on them)."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except (IndexAccessError, OSError):
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit)


def write_small(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace the contents of the regular file ``path`` (created if missing) with ``data``.

    :raises IndexPathUnsafeError, IndexAccessError: as :func:`open_regular`.
    """
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT, mode)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
    except OSError as exc:
        raise IndexAccessError(path, exc.strerror or str(exc)) from exc
    finally:
        os.close(fd)


def check_sqlite_files(db: Path) -> bool:
    """Check the SQLite database ``db`` before connecting: its directory is a real
    directory and ``db``, ``db-wal``, ``db-shm`` and ``db-journal`` are each absent or a
    regular file with one link (SQLite follows links itself). Returns whether ``db`` exists.

    :raises IndexPathUnsafeError: one of them is a link, a hard link or not a regular file.
    """
    check_state_dir(db.parent)
    exists = False
    for suffix in SQLITE_SUFFIXES:
        path = Path(f"{db}{suffix}")
        found = check_regular(path)
        if found:
            info = _lstat(path)
            if info is not None:
                _refuse_hard_link(path, info)
        exists = exists or (found and suffix == "")
    return exists


def unlink_regular(path: Path) -> None:
    """Delete the regular file ``path`` if present (never a link or anything else).

    :raises IndexPathUnsafeError: it is a link or not a regular file.
    :raises IndexAccessError: it cannot be deleted.
    """
    if not check_regular(path):
        return
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise IndexAccessError(path, exc.strerror or str(exc)) from exc


def refuse_tracked(directory: Path, root: Path) -> None:
    """Refuse a state directory that git tracks anything under: the checkout placed it.

    Asks git (``gitio.tracked.tracked_under``) from ``root``; nothing to check when
    ``directory`` is not inside ``root`` (a user-configured absolute location) or ``root`` is
    not in a working tree.

    :raises IndexPathUnsafeError: git tracks ``directory`` or a path under it.
    """
    try:
        directory.relative_to(root)
    except ValueError:
        return
    from gitquarry.gitio.tracked import tracked_under

    tracked = tracked_under(root, directory)
    if tracked:
        shown = ", ".join(tracked[:3]) + (f" and {len(tracked) - 3} more"
                                           if len(tracked) > 3 else "")
        raise IndexPathUnsafeError(
            directory, f"tracked by git ({shown})", tracked=True,
        )
