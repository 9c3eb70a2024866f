"""The per-user state directory: ``$XDG_STATE_HOME/gitquarry`` (platformdirs' user state
dir). The daemon keeps its job database, lock and log there (``service.paths``), storage its
index ownership records (``store.trust``). Lives with storage so nothing below the daemon
imports the daemon's package to find it."""

from __future__ import annotations

from pathlib import Path


def state_dir() -> Path:
    """The per-user state directory (not created)."""
    from platformdirs import user_state_dir

    return Path(user_state_dir("gitquarry"))
