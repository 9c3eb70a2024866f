"""Capped, regular-file-only reads of files a checkout can place (issue 19 §5).

Every file gitquarry reads from a working tree — graph YAML and docs, ``.mailmap``, worktree
overlay files, the workspace's ``.gitquarry.toml`` — goes through :func:`open_regular` or
:func:`read_capped`:

- the path is checked with ``stat`` (``lstat`` when links are not followed) and refused unless
  it is a regular file, so a FIFO, socket or device is never opened;
- it is opened ``O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC`` (plus ``O_NOFOLLOW`` when links
  are not followed): a FIFO swapped in after the check cannot block the open, and the opened
  descriptor is checked again with ``fstat`` (``S_ISREG``) before a byte is read;
- at most ``max_bytes + 1`` bytes are read, so a 20 MB (or endless) file costs at most the cap:
  the result says whether there was more (``over``) and the file's size when opened.

What to do with a refused or over-cap file (skip it, cut it, fail) is the caller's choice;
every caller warns naming the file. Standard library only.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from gitquarry.errors import FileRefusedError

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class CappedBytes:
    """What :func:`read_capped` read. ``data``: the file's first ``min(size, max_bytes)``
    bytes; ``over``: the file held more than ``max_bytes`` bytes (``data`` is cut);
    ``size``: its size in bytes when opened (``fstat``)."""

    data: bytes
    size: int
    over: bool


def describe_mode(mode: int) -> str:
    """What a non-regular ``st_mode`` is, for a message ("is a FIFO")."""
    kinds = ((stat.S_ISLNK, "is a symbolic link"), (stat.S_ISFIFO, "is a FIFO"),
             (stat.S_ISSOCK, "is a socket"), (stat.S_ISCHR, "is a character device"),
             (stat.S_ISBLK, "is a block device"), (stat.S_ISDIR, "is a directory"))
    for test, words in kinds:
        if test(mode):
            return f"{words}, not a regular file"
    return "is not a regular file"


def open_regular(path: Path | str, *, follow_symlinks: bool = False) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading if it is a regular file → (descriptor, its ``fstat``).
    The caller closes the descriptor. ``follow_symlinks`` False (the default): a symbolic
    link as the last component is refused (``O_NOFOLLOW``).

    :raises FileRefusedError: missing, not a regular file, a link (not followed), or it
        cannot be opened (the reason says which).
    """
    where = Path(path)
    try:
        before = os.stat(path, follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise FileRefusedError(where, _os_reason(exc)) from exc
    if not stat.S_ISREG(before.st_mode):
        raise FileRefusedError(where, describe_mode(before.st_mode))
    try:
        fd = os.open(path, _FLAGS | (0 if follow_symlinks else _NOFOLLOW))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):  # swapped for a link/socket
            try:
                now = os.lstat(path)
                raise FileRefusedError(where, describe_mode(now.st_mode)) from exc
            except OSError:
                pass
        raise FileRefusedError(where, _os_reason(exc)) from exc
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise FileRefusedError(where, _os_reason(exc)) from exc
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise FileRefusedError(where, describe_mode(info.st_mode))
    return fd, info


def read_capped(path: Path | str, max_bytes: int, *,
                follow_symlinks: bool = False) -> CappedBytes:
    """At most ``max_bytes`` bytes of the regular file ``path`` (``max_bytes + 1`` are read
    to tell whether there is more). See :func:`open_regular` for what is refused.

    :raises FileRefusedError: see :func:`open_regular`; a read error.
    :raises ValueError: ``max_bytes`` is negative.
    """
    if max_bytes < 0:
        raise ValueError("max_bytes must be >= 0")
    fd, info = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise FileRefusedError(Path(path), _os_reason(exc)) from exc
    finally:
        os.close(fd)
    over = len(data) > max_bytes
    return CappedBytes(data[:max_bytes] if over else data, info.st_size, over)


def cut_at_char_boundary(data: bytes) -> bytes:
    """``data`` (bytes cut at an arbitrary offset) without a trailing incomplete UTF-8
    sequence, so a cut text decodes without a spurious replacement character."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back
            continue
        need = 2 if 0xC0 <= byte < 0xE0 else 3 if 0xE0 <= byte < 0xF0 else \
            4 if 0xF0 <= byte < 0xF8 else 1
        return data[:-back] if need > back else data
    return data


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "does not exist"
    if exc.errno == errno.ELOOP:
        return "is a symbolic link (not followed) or a link loop"
    return f"cannot be read ({exc.strerror or exc})"
