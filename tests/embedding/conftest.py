"""Fixtures for embedding tests: the fake provider, registered through the real registry."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gitquarry.embedding.fake import fake_provider_registered
from gitquarry.embedding.registry import EmbedderProvider


@pytest.fixture
def fake_provider() -> Iterator[EmbedderProvider]:
    """Provider ``"fake"`` is registered for the test and removed afterwards."""
    with fake_provider_registered() as provider:
        yield provider
