"""The index file most recently opened in this context: the path a storage error names when
a surface translates it without knowing which store raised it (``store.connection`` sets it
on every open; ``store.compression`` reads it)."""

from __future__ import annotations

import contextvars
from pathlib import Path

_current_path: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "gitquarry_index_path", default=None
)


def current_index_path() -> Path | None:
    """The index file most recently opened in this context (what storage errors name)."""
    return _current_path.get()
