"""Embeddings: the ``Embedder`` interface, its providers, and the namespace of a vector space.

Default provider: all-MiniLM-L6-v2 (384 dims) on ONNX Runtime, offline. See docs/embedding.md.
"""

from gitquarry.embedding.base import (
    DATA_BOUNDARIES,
    SAFE_DATA_BOUNDARIES,
    Embedder,
    EmbeddingNamespace,
    from_blob,
    l2_normalise,
    to_blob,
)
from gitquarry.embedding.registry import (
    ENTRY_POINT_GROUP,
    EmbedderProvider,
    check_data_boundary,
    create_embedder,
    get_provider,
    provider_names,
    register_provider,
    unregister_provider,
)
from gitquarry.embedding.text import char_budget, truncate_to_token_budget

__all__ = [
    "DATA_BOUNDARIES",
    "ENTRY_POINT_GROUP",
    "SAFE_DATA_BOUNDARIES",
    "Embedder",
    "EmbedderProvider",
    "EmbeddingNamespace",
    "char_budget",
    "check_data_boundary",
    "create_embedder",
    "from_blob",
    "get_provider",
    "l2_normalise",
    "provider_names",
    "register_provider",
    "to_blob",
    "truncate_to_token_budget",
    "unregister_provider",
]
