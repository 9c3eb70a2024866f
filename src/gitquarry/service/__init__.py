"""The gitquarry daemon: watched workspaces, durable jobs, local IPC.

See docs/daemon.md. Entry points: ``Daemon`` (the process), ``start_daemon``/``connect``/
``stop_daemon`` (clients). The writer lease the daemon shares with foreground indexing is
``gitquarry.store.lease``.
"""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.service.client import connect, start_daemon, stop_daemon

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "connect": "gitquarry.service.client",
    "start_daemon": "gitquarry.service.client",
    "stop_daemon": "gitquarry.service.client",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["connect", "start_daemon", "stop_daemon"]
