"""Same text, same vector: a text's vector never depends on the texts embedded with it.

The shipped model quantises activations dynamically (a scale per input tensor), so the
runtime runs one text per ONNX call (``BATCH_TEXTS == 1``); these tests hold the runtime to
that and check that a text's vector is identical, to 1e-6, alone and inside any batch of any
composition and order. A batch larger than one is only allowed for a model whose activation
scales are fixed (static, calibrated int8: ``tools/build_minilm_static_int8.py``); the last
test runs such a file in real padded batches when ``GITQUARRY_STATIC_INT8_MODEL`` names one.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder, minilm
from gitquarry.embedding.minilm import MiniLMOnnxEmbedder, Runtime, manifest, model_files

pytestmark = pytest.mark.slow

TOLERANCE = 1e-6


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = [
        "parser", "config", "retry", "index", "cache", "click", "option", "group", "prompt",
        "pager", "help", "flag", "envvar", "default", "context", "command", "shell",
        "completion", "windows", "colour", "stream",
    ]
    out = []
    for i in range(n):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(1, 120)))
        out.append(f"commit {i}: {body}\n+ changed_{i} = {rng.randint(0, 999)}")
    return out


@pytest.fixture(scope="module")
def embedder() -> MiniLMOnnxEmbedder:
    created = create_embedder(EmbeddingConfig(threads=1), purpose="index")
    assert isinstance(created, MiniLMOnnxEmbedder)
    return created


def test_dynamic_activation_scales_mean_one_text_per_call() -> None:
    activation = str(manifest()["recipe"]["activation_type"])
    if "dynamic" in activation:
        assert minilm.BATCH_TEXTS == 1


def test_a_vector_is_the_same_alone_and_in_any_batch(embedder: MiniLMOnnxEmbedder) -> None:
    texts = _texts(40, seed=1)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    rng = random.Random(2)
    for _ in range(3):
        order = list(range(len(texts)))
        rng.shuffle(order)
        cut = rng.randint(5, len(texts))
        subset = order[:cut]
        batch = embedder.embed([texts[i] for i in subset])
        assert float(np.abs(batch - alone[subset]).max()) <= TOLERANCE
    # the 128-token budget the commit corpus uses
    short = embedder.embed(texts, max_tokens=128)
    for i in (0, 9, 39):
        assert float(np.abs(short[i] - embedder.embed([texts[i]], max_tokens=128)[0]).max()) \
            <= TOLERANCE


@pytest.mark.skipif(not os.environ.get("GITQUARRY_STATIC_INT8_MODEL"),
                    reason="GITQUARRY_STATIC_INT8_MODEL names no static-int8 model file")
def test_static_int8_model_is_batch_independent_in_padded_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = Path(os.environ["GITQUARRY_STATIC_INT8_MODEL"])
    runtime = Runtime(path, model_files()[1], "cpu", 1)
    texts = _texts(48, seed=3)
    monkeypatch.setattr(minilm, "BATCH_TEXTS", 1)
    alone = runtime.encode(texts)
    for size in (2, 7, 16, 48):
        monkeypatch.setattr(minilm, "BATCH_TEXTS", size)
        batched = runtime.encode(texts)
        scale = np.linalg.norm(alone, axis=1, keepdims=True)
        assert float(np.abs(batched / scale - alone / scale).max()) <= TOLERANCE, size


def test_thread_spinning_changes_cost_not_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    model, tokenizer = model_files()
    texts = _texts(12, seed=4)
    monkeypatch.setattr(minilm, "ALLOW_SPINNING", True)
    spinning = Runtime(model, tokenizer, "cpu", 2).encode(texts)
    monkeypatch.setattr(minilm, "ALLOW_SPINNING", False)
    assert minilm.ALLOW_SPINNING is False
    blocking = Runtime(model, tokenizer, "cpu", 2).encode(texts)
    assert np.array_equal(spinning, blocking)
