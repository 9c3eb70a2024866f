"""The deterministic fake embedder, and that it is registered only when a test asks."""

from __future__ import annotations

import numpy as np
import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder, provider_names
from gitquarry.embedding.fake import HashingEmbedder
from gitquarry.errors import UnknownEmbeddingProviderError


def test_fake_is_not_registered_by_default() -> None:
    assert "fake" not in provider_names()
    with pytest.raises(UnknownEmbeddingProviderError) as info:
        create_embedder(EmbeddingConfig(provider="fake"), purpose="index")
    assert info.value.provider == "fake"
    assert "minilm-onnx" in info.value.known


def test_fake_registered_through_the_registry(fake_provider: object) -> None:
    embedder = create_embedder(EmbeddingConfig(provider="fake", model="32"), purpose="index")
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dimensions == 32
    assert embedder.namespace("commit-v1").key == "fake|hashing-bow-32|32|commit-v1"


def test_fake_unregistered_after_the_fixture() -> None:
    assert "fake" not in provider_names()


def test_fake_vectors_are_deterministic_normalised_and_meaningful() -> None:
    embedder = HashingEmbedder(64)
    texts = ["fix parser crash", "parser crash fixed", "update readme badges", ""]
    a = embedder.embed(texts)
    b = HashingEmbedder(64).embed(texts)
    assert a.shape == (4, 64) and a.dtype == np.float32
    assert np.array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    assert a[0] @ a[1] > a[0] @ a[2]
    assert embedder.embed([]).shape == (0, 64)


def test_embed_rejects_non_strings() -> None:
    with pytest.raises(TypeError):
        HashingEmbedder().embed([b"bytes"])  # type: ignore[list-item]
