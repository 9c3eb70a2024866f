"""Configuration errors (family ``ConfigError``, kind ``INVALID``: CLI exit 2, HTTP 400) beyond
the loader's own ``ConfigError``: an ``[embedding]`` setting."""

from __future__ import annotations

from gitquarry.errors.base import (
    ConfigError,
    EmbeddingError,
)


class UnknownEmbeddingProviderError(EmbeddingError, ConfigError):
    """``[embedding] provider`` names no registered provider. ``known`` lists those that are."""

    code = "embedding_provider_unknown"

    def __init__(self, provider: str, known: list[str]) -> None:
        known_list = ", ".join(sorted(known))
        ConfigError.__init__(
            self, None, f"unknown embedding provider {provider!r}; known: {known_list}"
        )
        self.provider = provider
        self.known = known


class EmbeddingConfigInvalidError(EmbeddingError, ConfigError):
    """An ``[embedding]`` setting is invalid for the chosen provider; ``key`` names it."""

    code = "embedding_config_invalid"

    def __init__(self, key: str, message: str) -> None:
        ConfigError.__init__(self, None, f"[embedding] {key}: {message}")
        self.key = key
