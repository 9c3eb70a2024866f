"""The bundled all-MiniLM-L6-v2 ONNX model, for real (marked slow; runs in CI)."""

from __future__ import annotations

import numpy as np
import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder
from gitquarry.embedding.minilm import BATCH_TEXTS, MiniLMOnnxEmbedder, model_files

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> MiniLMOnnxEmbedder:
    created = create_embedder(EmbeddingConfig(), purpose="index")
    assert isinstance(created, MiniLMOnnxEmbedder)
    return created


def test_model_files_come_from_installed_packages() -> None:
    model, tokenizer = model_files()
    assert model.name == "model.onnx" and "site-packages" in str(model)
    assert tokenizer.name == "tokenizer.json" and "site-packages" in str(tokenizer)


def test_shape_dtype_and_unit_norm(embedder: MiniLMOnnxEmbedder) -> None:
    texts = ["fix crash in parser", "add retries to the HTTP client", "bump version to 1.2"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_similar_sentences_are_closer(embedder: MiniLMOnnxEmbedder) -> None:
    a, b, c = embedder.embed(
        [
            "Fix crash when the config file is empty",
            "Handle an empty configuration file without crashing",
            "Update the logo colours on the landing page",
        ]
    )
    assert a @ b > 0.6
    assert a @ b > a @ c + 0.3
    assert a @ b > b @ c + 0.3


def test_empty_list(embedder: MiniLMOnnxEmbedder) -> None:
    out = embedder.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_order_is_preserved_despite_length_sorting(embedder: MiniLMOnnxEmbedder) -> None:
    # More than one batch, lengths deliberately out of order.
    texts = [
        ("word " * (1 + (i * 37) % 60)) + f"commit number {i} touches module_{i}.py"
        for i in range(BATCH_TEXTS * 2 + 5)
    ]
    together = embedder.embed(texts)
    for i in (0, 1, 7, BATCH_TEXTS, len(texts) - 1):
        alone = embedder.embed([texts[i]])[0]
        assert float(together[i] @ alone) > 0.9999, i


def test_empty_string_and_unicode(embedder: MiniLMOnnxEmbedder) -> None:
    out = embedder.embed(["", "修复解析器崩溃 🚀", "\x00\n\t"])
    assert out.shape == (3, 384)
    assert np.isfinite(out).all()


def test_huge_text_is_truncated_without_error(embedder: MiniLMOnnxEmbedder) -> None:
    head = "Refactor the storage layer so that writers share one connection. " * 40
    tail = "".join(
        f"+line {i}: completely unrelated payload about bananas\n" for i in range(10_000)
    )
    long_vec, head_vec = embedder.embed([head + tail, head])
    # Only the first 256 tokens are read, and the head alone is longer than that.
    assert float(long_vec @ head_vec) > 0.9999


def test_reads_256_tokens_not_the_tokenizer_files_128(embedder: MiniLMOnnxEmbedder) -> None:
    # ~150 tokens of one topic, then a different topic: a 128-token cut would never see it.
    first = "the parser handles empty files. " * 25
    a, b = embedder.embed([first + "database migration for user accounts", first])
    assert float(a @ b) < 0.9999


def test_shared_runtime_across_instances(embedder: MiniLMOnnxEmbedder) -> None:
    other = MiniLMOnnxEmbedder(device="cpu")
    text = ["same text, same vector"]
    assert np.array_equal(other.embed(text), embedder.embed(text))
