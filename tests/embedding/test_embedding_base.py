"""Namespace identity, vector byte format, normalisation and the text budget."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gitquarry.embedding import (
    EmbeddingNamespace,
    char_budget,
    from_blob,
    l2_normalise,
    to_blob,
    truncate_to_token_budget,
)


def _ns(**overrides: object) -> EmbeddingNamespace:
    fields: dict[str, object] = {
        "provider": "minilm-onnx",
        "model": "all-MiniLM-L6-v2-onnx-int8",
        "dimensions": 384,
        "text_format": "commit-v1",
    }
    fields.update(overrides)
    return EmbeddingNamespace(**fields)  # type: ignore[arg-type]


def test_namespace_key_is_pinned() -> None:
    # The store keys vectors by this string: changing its format orphans every stored vector.
    assert _ns().key == "minilm-onnx|all-MiniLM-L6-v2-onnx-int8|384|commit-v1"


def test_namespace_key_changes_with_every_field() -> None:
    base = _ns()
    variants = [
        _ns(provider="openai"),
        _ns(model="BAAI/bge-small-en-v1.5"),
        _ns(dimensions=768),
        _ns(text_format="commit-v2"),
    ]
    keys = {base.key, *(v.key for v in variants)}
    assert len(keys) == 5


def test_namespace_key_escapes_separator() -> None:
    a = _ns(provider="a|b", model="c")
    b = _ns(provider="a", model="b|c")
    assert a.key != b.key
    assert a.key == "a%7Cb|c|384|commit-v1"
    assert _ns(model="50%|x").key == "minilm-onnx|50%25%7Cx|384|commit-v1"


def test_namespace_is_frozen_and_hashable() -> None:
    ns = _ns()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ns.model = "other"  # type: ignore[misc]
    assert {ns: 1}[_ns()] == 1


def test_blob_round_trip_is_little_endian_float32() -> None:
    vector = np.array([1.0, -0.5, 0.25], dtype=np.float64)
    blob = to_blob(vector)
    assert blob == np.array([1.0, -0.5, 0.25], dtype="<f4").tobytes()
    assert blob[:4] == b"\x00\x00\x80\x3f"  # 1.0f, little-endian
    back = from_blob(blob, 3)
    assert back.dtype == np.float32
    assert back.tolist() == [1.0, -0.5, 0.25]
    back[0] = 2.0  # writable copy, not a view of the bytes


def test_blob_errors() -> None:
    with pytest.raises(ValueError):
        to_blob(np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        from_blob(b"\x00" * 8, 3)


def test_l2_normalise_rows_and_zero_row() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0], [0.6, 0.8], rtol=1e-6)
    assert out[1].tolist() == [0.0, 0.0]


def test_truncate_keeps_short_text_unchanged() -> None:
    text = "fix: handle empty files\n\nThe parser crashed."
    assert truncate_to_token_budget(text, 256) is text


def test_truncate_cuts_long_text_by_characters_at_whitespace() -> None:
    line = "+    value = compute_something(argument_one, argument_two)\n"
    text = line * 10_000
    out = truncate_to_token_budget(text, 256)
    assert len(out) <= char_budget(256)
    assert len(out) >= char_budget(256) * 0.9
    assert text.startswith(out)
    assert out[-1] not in " \n" and text[len(out)] in " \n"


def test_truncate_without_whitespace_cuts_exactly() -> None:
    out = truncate_to_token_budget("x" * 100_000, 10, chars_per_token=3.0)
    assert out == "x" * 30


def test_char_budget_rejects_non_positive() -> None:
    with pytest.raises(ValueError):
        char_budget(0)
    with pytest.raises(ValueError):
        char_budget(10, 0)
