"""Per-corpus schema modules. Import order here is migration order; append, never reorder."""

from __future__ import annotations

_registered = False


def register_all() -> None:
    """Import every schema module once so its migrations register on ``MIGRATIONS``."""
    global _registered
    if _registered:
        return
    from gitquarry.store.schema import graph, history  # noqa: F401

    _registered = True
