"""Semantic ranking over commit vectors (filled in by the embedding work)."""

from __future__ import annotations

from typing import Any

from gitquarry.config import Config
from gitquarry.store import Store


def load_semantic_ranker(config: Config, store: Store) -> Any | None:
    """The semantic ranker for ``config.embedding``, or None when no provider is usable."""
    return None
