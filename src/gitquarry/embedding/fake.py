"""A deterministic fake embedder for tests of ranking and indexing code. Not for real use.

:class:`HashingEmbedder` is a hashed bag of words: each lower-cased word (``\\w+``) adds +1 or
-1 to one of ``dimensions`` buckets, both chosen by BLAKE2b of the word, and the sum is
L2-normalised. Texts sharing words are therefore close, texts sharing none are near
orthogonal, and the same text gives the same vector on every machine and run. A text with no
words maps to a fixed unit vector. Nothing is loaded, so it is instant.

It is registered as provider ``"fake"`` only inside :func:`fake_provider_registered`, which
tests use (through the real registry, like any plugin) and which unregisters it on exit::

    with fake_provider_registered():
        embedder = create_embedder(EmbeddingConfig(provider="fake"), purpose="index")
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import numpy as np

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding.base import Embedder
from gitquarry.embedding.registry import (
    EmbedderProvider,
    register_provider,
    unregister_provider,
)

PROVIDER: Final = "fake"
DEFAULT_DIMENSIONS: Final = 64
_WORD = re.compile(r"\w+")


class HashingEmbedder(Embedder):
    """Hashed bag-of-words vectors of ``dimensions`` floats. Deterministic, instant."""

    provider = PROVIDER
    data_boundary = "local_process"

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS, *, max_tokens: int = 256) -> None:
        if dimensions < 2:
            raise ValueError("dimensions must be >= 2")
        self._dimensions = dimensions
        self._max_tokens = max_tokens
        self.model = f"hashing-bow-{dimensions}"
        #: number of texts embedded so far (tests assert on re-embedding).
        self.calls = 0
        self.texts_embedded = 0

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def _bucket(self, word: str) -> tuple[int, float]:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self._dimensions, 1.0 if (value >> 63) & 1 else -1.0

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())[: self._max_tokens]
            if not words:
                out[row, 0] = 1.0
                continue
            for word in words:
                index, sign = self._bucket(word)
                out[row, index] += sign
            if not out[row].any():  # every word cancelled out
                out[row, 0] = 1.0
        return out


def _create(config: EmbeddingConfig) -> HashingEmbedder:
    dimensions = int(config.model) if config.model.isdigit() else DEFAULT_DIMENSIONS
    return HashingEmbedder(dimensions)


#: the registry entry; ``[embedding] model`` may give the dimensions as a number ("32").
FAKE_PROVIDER: Final = EmbedderProvider(
    name=PROVIDER,
    factory=_create,
    data_boundary="local_process",
    description="deterministic hashed bag of words, for tests only",
)


@contextmanager
def fake_provider_registered() -> Iterator[EmbedderProvider]:
    """Register provider ``"fake"`` for the duration of the ``with`` block."""
    register_provider(FAKE_PROVIDER, replace=True)
    try:
        yield FAKE_PROVIDER
    finally:
        unregister_provider(PROVIDER)
