"""The sentence-transformers provider where the package is not installed (torch-free venv)."""

from __future__ import annotations

import importlib
import importlib.util
import sys

import numpy as np
import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder
from gitquarry.errors import (
    EmbeddingDependencyMissingError,
    EmbeddingError,
    EmbeddingModelUnavailableError,
)

_INSTALLED = importlib.util.find_spec("sentence_transformers") is not None


@pytest.mark.skipif(_INSTALLED, reason="sentence-transformers is installed here")
@pytest.mark.parametrize("purpose", ["index", "query"])
def test_clear_error_when_package_missing(purpose: str) -> None:
    config = EmbeddingConfig(provider="sentence-transformers", model="BAAI/bge-small-en-v1.5")
    with pytest.raises(EmbeddingDependencyMissingError) as info:
        create_embedder(config, purpose=purpose)  # type: ignore[arg-type]
    error = info.value
    assert isinstance(error, EmbeddingError)
    assert error.code == "embedding_dependency_missing"
    assert error.provider == "sentence-transformers"
    assert error.install == "pip install 'gitquarry[sentence-transformers]'"
    assert "pip install 'gitquarry[sentence-transformers]'" in str(error)


_STUB = '''
"""A stand-in for the sentence_transformers package (torch is not installed in the test venv)."""
import os
from pathlib import Path

import numpy as np

calls = []


class SentenceTransformer:
    max_seq_length = 128

    def __init__(self, name, device=None, local_files_only=False):
        calls.append({"name": name, "device": device, "local_files_only": local_files_only,
                      "offline": os.environ.get("HF_HUB_OFFLINE")})
        if not Path(name).is_dir():
            raise OSError(f"We couldn't connect to 'https://huggingface.co' to load {name}")

    def get_sentence_embedding_dimension(self):
        return 3

    def encode(self, texts, batch_size, convert_to_numpy, normalize_embeddings,
               show_progress_bar):
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float64)
'''


@pytest.fixture
def stub_package(tmp_path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    package = tmp_path / "site" / "sentence_transformers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(_STUB, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "sentence_transformers", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    importlib.invalidate_caches()
    yield tmp_path
    sys.modules.pop("sentence_transformers", None)


def test_model_not_available_locally_is_clear_and_never_downloads(stub_package) -> None:  # type: ignore[no-untyped-def]
    config = EmbeddingConfig(provider="sentence-transformers", model="BAAI/bge-small-en-v1.5")
    embedder = create_embedder(config, purpose="index")
    assert embedder is not None
    with pytest.raises(EmbeddingModelUnavailableError) as info:
        embedder.embed(["x"])
    assert info.value.model == "BAAI/bge-small-en-v1.5"
    (call,) = sys.modules["sentence_transformers"].calls
    assert call["local_files_only"] is True
    assert call["offline"] == "1"


def test_local_directory_model(stub_package) -> None:  # type: ignore[no-untyped-def]
    model_dir = stub_package / "my-model"
    model_dir.mkdir()
    config = EmbeddingConfig(provider="sentence-transformers", model=str(model_dir), device="auto")
    embedder = create_embedder(config, purpose="query")
    assert embedder is not None
    vectors = embedder.embed(["ab", "abcd"])
    assert vectors.shape == (2, 3) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    assert embedder.max_tokens == 128
    assert embedder.namespace("commit-v1").key == f"sentence-transformers|{model_dir}|3|commit-v1"
    (call,) = sys.modules["sentence_transformers"].calls
    assert call["device"] is None  # "auto" lets torch choose
