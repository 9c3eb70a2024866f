"""The gitquarry daemon: watched workspaces, durable jobs, the writer lease, local IPC.

See docs/daemon.md. Entry points: ``Daemon`` (the process), ``start_daemon``/``connect``/
``stop_daemon`` (clients), ``writer_lease`` (shared with foreground indexing).
"""

from gitquarry.service.client import connect, start_daemon, stop_daemon
from gitquarry.service.lease import writer_lease

__all__ = ["connect", "start_daemon", "stop_daemon", "writer_lease"]
