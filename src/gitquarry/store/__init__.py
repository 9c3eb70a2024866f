"""SQLite storage: one connection factory, one transaction helper, named migrations."""

from gitquarry.store.connection import Store, open_store
from gitquarry.store.migrations import Migrations

__all__ = ["Migrations", "Store", "open_store"]
