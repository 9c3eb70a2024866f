"""Embeddings: the ``Embedder`` interface, its providers, and the namespace of a vector space.

Default provider: all-MiniLM-L6-v2 (384 dims) on ONNX Runtime, offline. See docs/embedding.md.
"""

from typing import TYPE_CHECKING

from gitquarry._lazy import lazy_exports

if TYPE_CHECKING:
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

#: exported name -> the module that defines it (imported on first use)
_EXPORTS = {
    "DATA_BOUNDARIES": "gitquarry.embedding.base",
    "SAFE_DATA_BOUNDARIES": "gitquarry.embedding.base",
    "Embedder": "gitquarry.embedding.base",
    "EmbeddingNamespace": "gitquarry.embedding.base",
    "from_blob": "gitquarry.embedding.base",
    "l2_normalise": "gitquarry.embedding.base",
    "to_blob": "gitquarry.embedding.base",
    "ENTRY_POINT_GROUP": "gitquarry.embedding.registry",
    "EmbedderProvider": "gitquarry.embedding.registry",
    "check_data_boundary": "gitquarry.embedding.registry",
    "create_embedder": "gitquarry.embedding.registry",
    "get_provider": "gitquarry.embedding.registry",
    "provider_names": "gitquarry.embedding.registry",
    "register_provider": "gitquarry.embedding.registry",
    "unregister_provider": "gitquarry.embedding.registry",
    "char_budget": "gitquarry.embedding.text",
    "truncate_to_token_budget": "gitquarry.embedding.text",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
