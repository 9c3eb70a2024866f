"""SQLite storage: one connection factory, one transaction helper, named migrations."""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
    from gitquarry.store.connection import Store, open_store
    from gitquarry.store.migrations import Migrations

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "Store": "gitquarry.store.connection",
    "open_store": "gitquarry.store.connection",
    "Migrations": "gitquarry.store.migrations",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Migrations", "Store", "open_store"]
