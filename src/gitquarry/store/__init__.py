"""SQLite storage: one connection factory, one transaction helper, named migrations, and the
cross-process writer lease beside each database (``store.lease``)."""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.store.connection import Store, open_store
    from gitquarry.store.lease import writer_lease
    from gitquarry.store.migrations import Migrations

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "Store": "gitquarry.store.connection",
    "open_store": "gitquarry.store.connection",
    "Migrations": "gitquarry.store.migrations",
    "writer_lease": "gitquarry.store.lease",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Migrations", "Store", "open_store", "writer_lease"]
