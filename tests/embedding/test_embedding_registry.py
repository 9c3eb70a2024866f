"""create_embedder: provider lookup, "none", and the data boundary rule for index and query."""

from __future__ import annotations

import warnings

import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import (
    EmbedderProvider,
    check_data_boundary,
    create_embedder,
    get_provider,
    provider_names,
    register_provider,
    unregister_provider,
)
from gitquarry.embedding import registry as registry_module
from gitquarry.embedding.fake import HashingEmbedder
from gitquarry.embedding.minilm import MiniLMOnnxEmbedder
from gitquarry.embedding.openai_http import OpenAICompatibleEmbedder
from gitquarry.errors import (
    DataBoundaryError,
    EmbeddingConfigInvalidError,
    EmbeddingError,
    GitquarryError,
    UndeclaredDataBoundaryError,
    UnknownEmbeddingProviderError,
)

PURPOSES = ["index", "query"]


def _openai(**kw: object) -> EmbeddingConfig:
    fields: dict[str, object] = {
        "provider": "openai",
        "url": "http://127.0.0.1:9/v1",
        "model": "bge-small",
    }
    fields.update(kw)
    return EmbeddingConfig(**fields)  # type: ignore[arg-type]


def test_builtins_are_registered() -> None:
    assert {"minilm-onnx", "sentence-transformers", "openai"} <= set(provider_names())
    assert get_provider("minilm-onnx").data_boundary == "local_process"
    assert get_provider("openai").data_boundary is None


def test_default_config_builds_the_offline_minilm() -> None:
    embedder = create_embedder(EmbeddingConfig(), purpose="index")
    assert isinstance(embedder, MiniLMOnnxEmbedder)
    assert embedder.data_boundary == "local_process"
    assert embedder.dimensions == 384
    assert embedder.max_tokens == 256


@pytest.mark.parametrize("purpose", PURPOSES)
def test_provider_none_gives_none(purpose: str) -> None:
    assert create_embedder(EmbeddingConfig(provider="none"), purpose=purpose) is None  # type: ignore[arg-type]


def test_unknown_provider() -> None:
    with pytest.raises(UnknownEmbeddingProviderError) as info:
        create_embedder(EmbeddingConfig(provider="word2vec"), purpose="index")
    assert isinstance(info.value, EmbeddingError)
    assert info.value.code == "embedding_provider_unknown"
    assert "none" in info.value.known


def test_bad_purpose_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        create_embedder(EmbeddingConfig(), purpose="train")  # type: ignore[arg-type]


@pytest.mark.parametrize("purpose", PURPOSES)
@pytest.mark.parametrize("boundary", ["remote", "unknown"])
def test_remote_and_unknown_boundaries_are_refused(purpose: str, boundary: str) -> None:
    with pytest.raises(DataBoundaryError) as info:
        create_embedder(_openai(data_boundary=boundary), purpose=purpose)  # type: ignore[arg-type]
    assert type(info.value) is DataBoundaryError
    assert info.value.provider == "openai"
    assert info.value.boundary == boundary
    assert info.value.code == "data_boundary_refused"
    assert isinstance(info.value, GitquarryError)


@pytest.mark.parametrize("purpose", PURPOSES)
def test_undeclared_boundary_is_refused(purpose: str) -> None:
    with pytest.raises(UndeclaredDataBoundaryError) as info:
        create_embedder(_openai(), purpose=purpose)  # type: ignore[arg-type]
    assert isinstance(info.value, DataBoundaryError)
    assert info.value.boundary == "unknown"
    assert "data_boundary" in str(info.value)


@pytest.mark.parametrize("boundary", ["remote", "unknown", ""])
def test_allow_remote_opts_in(boundary: str) -> None:
    embedder = create_embedder(_openai(data_boundary=boundary, allow_remote=True), purpose="index")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.data_boundary == (boundary or "unknown")


@pytest.mark.parametrize("boundary", ["local_network", "local_process"])
def test_local_boundaries_are_allowed(boundary: str) -> None:
    embedder = create_embedder(_openai(data_boundary=boundary), purpose="index")
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.data_boundary == boundary


def test_in_process_providers_ignore_a_declared_boundary() -> None:
    # The bundled model never sends text anywhere, whatever the config claims.
    embedder = create_embedder(EmbeddingConfig(data_boundary="remote"), purpose="index")
    assert embedder is not None and embedder.data_boundary == "local_process"


def test_invalid_boundary_value() -> None:
    with pytest.raises(EmbeddingConfigInvalidError) as info:
        create_embedder(_openai(data_boundary="lan"), purpose="index")
    assert info.value.key == "data_boundary"
    with pytest.raises(EmbeddingConfigInvalidError):
        check_data_boundary("x", "lan", allow_remote=True)


@pytest.mark.parametrize(
    ("overrides", "key"),
    [({"url": ""}, "url"), ({"url": "ftp://x"}, "url"), ({"model": ""}, "model")],
)
def test_openai_config_errors(overrides: dict[str, object], key: str) -> None:
    with pytest.raises(EmbeddingConfigInvalidError) as info:
        create_embedder(_openai(data_boundary="local_network", **overrides), purpose="index")
    assert info.value.key == key
    assert info.value.exit_code == 2


def test_minilm_rejects_another_model_and_bad_device() -> None:
    with pytest.raises(EmbeddingConfigInvalidError) as info:
        create_embedder(EmbeddingConfig(model="BAAI/bge-small-en-v1.5"), purpose="index")
    assert info.value.key == "model"
    with pytest.raises(EmbeddingConfigInvalidError):
        MiniLMOnnxEmbedder(device="tpu")


def test_register_and_unregister_a_plugin_provider() -> None:
    provider = EmbedderProvider(
        name="test-plugin",
        factory=lambda config: HashingEmbedder(8),
        data_boundary="remote",
    )
    register_provider(provider)
    try:
        with pytest.raises(ValueError):
            register_provider(provider)
        # A plugin's own declared boundary is enforced too.
        with pytest.raises(DataBoundaryError):
            create_embedder(EmbeddingConfig(provider="test-plugin"), purpose="query")
        embedder = create_embedder(
            EmbeddingConfig(provider="test-plugin", allow_remote=True), purpose="query"
        )
        assert embedder is not None and embedder.dimensions == 8
    finally:
        unregister_provider("test-plugin")
    assert "test-plugin" not in provider_names()


def test_register_rejects_reserved_name_and_bad_boundary() -> None:
    with pytest.raises(ValueError):
        register_provider(EmbedderProvider(name="none", factory=lambda c: HashingEmbedder()))
    with pytest.raises(ValueError):
        register_provider(
            EmbedderProvider(name="x", factory=lambda c: HashingEmbedder(), data_boundary="lan")
        )


class _EntryPoint:
    """Stands in for importlib.metadata.EntryPoint (an installed plugin's metadata)."""

    def __init__(self, name: str, obj: object) -> None:
        self.name = name
        self._obj = obj

    def load(self) -> object:
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def test_entry_points_load_lazily_and_broken_ones_are_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = EmbedderProvider(
        name="ep-good", factory=lambda c: HashingEmbedder(4), data_boundary="local_process"
    )
    clash = EmbedderProvider(name="minilm-onnx", factory=lambda c: HashingEmbedder(4))
    eps = [
        _EntryPoint("good", lambda: good),
        _EntryPoint("broken", ImportError("no module named plugin")),
        _EntryPoint("clash", clash),
    ]
    seen: list[str] = []

    def fake_entry_points(*, group: str) -> list[_EntryPoint]:
        seen.append(group)
        return eps

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)
    monkeypatch.setattr(registry_module, "_providers", {})
    monkeypatch.setattr(registry_module, "_loaded", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = provider_names()
    assert seen == ["gitquarry.embedders"]
    assert "ep-good" in names
    assert get_provider("minilm-onnx").factory is not clash.factory
    messages = [str(w.message) for w in caught]
    assert any("'broken'" in m for m in messages)
    assert any("'clash'" in m for m in messages)
    embedder = create_embedder(EmbeddingConfig(provider="ep-good"), purpose="index")
    assert embedder is not None and embedder.dimensions == 4
