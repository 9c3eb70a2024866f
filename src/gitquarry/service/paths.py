"""Where the daemon keeps its files: the state directory and the socket directory.

- State directory: ``$XDG_STATE_HOME/gitquarry/`` (platformdirs' user state dir), mode 0700.
  Holds ``daemon.db`` (jobs, tombstones, watched workspaces: mode 0600), ``checkpoints.db``
  (vector-only provider checkpoints), ``daemon.log`` (rotated) and ``daemon.lock``: the
  one-daemon-per-user lock (an ``flock`` held for the daemon's life) whose content names the
  running daemon (pid, version, start time) and the absolute path of the socket it serves.
  The single-instance rule follows what the daemon owns (this directory and its job
  database), so clients whose ``XDG_RUNTIME_DIR`` differs or is missing find the one daemon
  through the path recorded here instead of starting a second.
- Socket directory: ``$XDG_RUNTIME_DIR/gitquarry/`` when ``XDG_RUNTIME_DIR`` is set (absolute)
  and usable, else the state directory; mode 0700. Holds ``daemon.sock`` (mode 0600).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path
from typing import Any

from gitquarry.errors import DaemonUnavailableError

SOCKET_NAME = "daemon.sock"
LOCK_NAME = "daemon.lock"
STATE_DB_NAME = "daemon.db"
CHECKPOINT_DB_NAME = "checkpoints.db"
LOG_NAME = "daemon.log"
#: sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), including the NUL.
MAX_SOCKET_PATH_BYTES = 103


def state_dir() -> Path:
    """The per-user state directory (not created; ``store.user_state``)."""
    from gitquarry.store.user_state import state_dir as user_state

    return user_state()


def socket_dir() -> Path:
    """The socket directory this process's environment names (not created); the daemon
    falls back to the state directory when it cannot be used (``choose_socket_dir``), and
    clients use the path the running daemon recorded (``running_socket``)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute():
        return Path(runtime) / "gitquarry"
    return state_dir()


def socket_path() -> Path:
    """Where this process's environment would put the socket (``running_socket`` first)."""
    return socket_dir() / SOCKET_NAME


def lock_path() -> Path:
    """The one-daemon-per-user lock file (in the state directory; not created)."""
    return state_dir() / LOCK_NAME


def read_lock_info(path: Path) -> dict[str, Any]:
    """The JSON record in a lock file (``{}`` when absent, empty or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def lock_held(path: Path) -> bool:
    """True while some process holds the daemon lock at ``path`` (never blocks)."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False


def running_daemon() -> dict[str, Any] | None:
    """The running daemon's lock record (pid, version, since, socket), or None when no
    daemon holds this user's lock."""
    path = lock_path()
    if not lock_held(path):
        return None
    return read_lock_info(path)


def running_socket() -> Path | None:
    """The socket the running daemon recorded, or None (no daemon, or not recorded yet)."""
    info = running_daemon() or {}
    sock = info.get("socket")
    return Path(sock) if isinstance(sock, str) and Path(sock).is_absolute() else None


def client_socket_path() -> Path:
    """The socket a client talks to: the running daemon's recorded one, else where this
    environment's daemon would listen."""
    return running_socket() or socket_path()


def choose_socket_dir(state: Path) -> Path:
    """The directory a starting daemon binds its socket in: ``socket_dir()`` when it can be
    created private and its socket path fits a Unix address, else ``state``.

    :raises DaemonUnavailableError: the state directory's socket path is too long too.
    """
    preferred = socket_dir()
    if preferred != state:
        try:
            ensure_private_dir(preferred)
            check_socket_path(preferred / SOCKET_NAME)
            if os.access(preferred, os.W_OK | os.X_OK):
                return preferred
        except DaemonUnavailableError:
            pass
    check_socket_path(state / SOCKET_NAME)
    return state


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
