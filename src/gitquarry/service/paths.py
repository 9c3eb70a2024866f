"""Where the daemon keeps its files: the state directory and the socket directory.

- State directory: ``$XDG_STATE_HOME/gitquarry/`` (platformdirs' user state dir), mode 0700.
  Holds ``daemon.db`` (jobs, tombstones, watched workspaces: mode 0600), ``checkpoints.db``
  (vector-only provider checkpoints), ``daemon.log`` (rotated).
- Socket directory: ``$XDG_RUNTIME_DIR/gitquarry/`` when ``XDG_RUNTIME_DIR`` is set, else the
  state directory; mode 0700. Holds ``daemon.sock`` (mode 0600) and ``daemon.lock`` (the
  one-daemon-per-user lock, whose content names the running daemon).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gitquarry.errors import DaemonUnavailableError

SOCKET_NAME = "daemon.sock"
LOCK_NAME = "daemon.lock"
STATE_DB_NAME = "daemon.db"
CHECKPOINT_DB_NAME = "checkpoints.db"
LOG_NAME = "daemon.log"
#: sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), including the NUL.
MAX_SOCKET_PATH_BYTES = 103


def state_dir() -> Path:
    """The per-user state directory (not created)."""
    from platformdirs import user_state_dir

    return Path(user_state_dir("gitquarry"))


def socket_dir() -> Path:
    """The directory for the socket and the daemon lock (not created)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute():
        return Path(runtime) / "gitquarry"
    return state_dir()


def socket_path() -> Path:
    return socket_dir() / SOCKET_NAME


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if needed and make it mode 0700, owned by this user.

    :raises DaemonUnavailableError: it exists but is not a directory, or belongs to another
        user, or cannot be created.
    """
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = path.lstat()
    except OSError as exc:
        raise DaemonUnavailableError(
            f"cannot create its private directory: {exc.strerror or exc}"
        ) from exc
    if not stat.S_ISDIR(info.st_mode):
        raise DaemonUnavailableError("its private directory is not a directory")
    if info.st_uid != os.geteuid():
        raise DaemonUnavailableError("its private directory belongs to another user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def check_socket_path(path: Path) -> None:
    """:raises DaemonUnavailableError: the path is too long for a Unix socket address."""
    if len(os.fsencode(str(path))) > MAX_SOCKET_PATH_BYTES:
        raise DaemonUnavailableError(
            "the socket path is longer than a Unix socket address allows; set "
            "XDG_RUNTIME_DIR (or XDG_STATE_HOME) to a shorter directory"
        )


def private_file(path: Path) -> Path:
    """Create ``path`` empty if missing, mode 0600; tighten an existing file to 0600."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    os.close(fd)
    if stat.S_IMODE(path.stat().st_mode) != 0o600:
        os.chmod(path, 0o600)
    return path
