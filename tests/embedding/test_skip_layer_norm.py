"""The shipped model writes each SkipLayerNormalization as Add (bias), Add (residual),
LayerNormalization (issue 21 target 6, ``tools/build_minilm_int8.py::unfuse_skip_layer_norm``),
and the runtime keeps ONNX Runtime from fusing it back (``minilm.DISABLED_OPTIMIZERS``): ONNX
Runtime 1.32's CPU kernel of the fused operator cost ~5x the three standard ones, ~1.3x
documents per CPU-second for the whole model (docs/performance.md, s8-embed).

What is checked: the rewrite computes the fused operator's function (fp32, tiny graphs with
real ONNX Runtime sessions); the shipped file is exactly that rewrite of the file shipped
before (undone, it gives the earlier file's SHA-256); with the runtime's settings ONNX
Runtime does not fuse it back at load (the optimised graph still runs LayerNormalization);
the vectors stay close to the earlier file's on real commit documents (they are not bitwise
equal, hence the new model id).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from gitquarry.embedding import minilm
from gitquarry.embedding.minilm import Runtime, model_files

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
#: SHA-256 of the model.onnx shipped before the rewrite (SkipLayerNormalization fused;
#: MANIFEST.json at commit 69158c7)
FUSED_SHA256 = "91123952f8014e846e4bc5bdce4d125bbce881158b67b3dbe89c6a0a324099d4"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_minilm_int8",
                                                  ROOT / "tools" / "build_minilm_int8.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool
    spec.loader.exec_module(tool)
    return tool


def _skip_ln_model(onnx: Any, *, beta: bool, bias: bool, extra_output: bool = False) -> Any:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    inits = {"gamma": (1 + 0.3 * rng.standard_normal(384)).astype(np.float32)}
    inputs = ["x", "skip", "gamma"]
    if beta or bias:
        inits["beta"] = (0.2 * rng.standard_normal(384)).astype(np.float32)
        inputs.append("beta" if beta else "")
    if bias:
        inits["bias"] = (0.5 * rng.standard_normal(384)).astype(np.float32)
        inputs.append("bias")
    outputs = ["y", "", "", "sum"] if extra_output else ["y"]
    node = helper.make_node("SkipLayerNormalization", inputs, outputs, name="SkipLayerNorm_0",
                            domain="com.microsoft", epsilon=1e-12)
    dims = ["b", "s", 384]
    graph_outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)]
    if extra_output:
        graph_outputs.append(helper.make_tensor_value_info("sum", TensorProto.FLOAT, dims))
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims) for n in ("x", "skip")],
        graph_outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def _run(model: Any, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    out: np.ndarray = session.run(["y"], feeds)[0]
    return out


@pytest.mark.parametrize(("beta", "bias"),
                         [(True, True), (True, False), (False, True), (False, False)])
def test_the_rewrite_computes_skip_layer_normalization(beta: bool, bias: bool) -> None:
    onnx = pytest.importorskip("onnx")
    tool = _tool()
    rng = np.random.default_rng(3)
    feeds = {"x": (3 * rng.standard_normal((2, 37, 384))).astype(np.float32),
             "skip": rng.standard_normal((2, 37, 384)).astype(np.float32)}
    fused = _skip_ln_model(onnx, beta=beta, bias=bias)
    want = _run(fused, feeds)
    rewritten = _skip_ln_model(onnx, beta=beta, bias=bias)
    assert tool.unfuse_skip_layer_norm(rewritten) == 1
    assert [n.op_type for n in rewritten.graph.node] == (
        ["Add", "Add", "LayerNormalization"] if bias else ["Add", "LayerNormalization"])
    onnx.checker.check_model(rewritten)
    got = _run(rewritten, feeds)
    # the same function to float32 rounding (the two kernels sum in another order)
    assert float(np.abs(got - want).max()) <= 2e-5
    # and not trivially: dropping the skip input changes the answer far beyond that
    assert float(np.abs(_run(fused, {"x": feeds["x"], "skip": 0 * feeds["skip"]}) - want)
                 .max()) > 0.1
    # undone, the graph is the fused one byte for byte
    assert tool.refuse_skip_layer_norm(rewritten) == 1
    assert rewritten.SerializeToString() == fused.SerializeToString()


def test_a_skip_layer_norm_whose_sum_output_is_read_is_refused() -> None:
    onnx = pytest.importorskip("onnx")
    model = _skip_ln_model(onnx, beta=True, bias=True, extra_output=True)
    with pytest.raises(ValueError, match="not a plain SkipLayerNormalization"):
        _tool().unfuse_skip_layer_norm(model)


def test_the_shipped_file_is_the_rewrite_of_the_fused_file() -> None:
    """Undoing the rewrite gives the earlier shipped file byte for byte, so the rewrite is
    the only change; and the shipped graph holds no SkipLayerNormalization."""
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(model_files()[0]))
    assert not [n for n in model.graph.node if n.op_type == "SkipLayerNormalization"]
    assert sum(n.op_type == "LayerNormalization" for n in model.graph.node) == 12
    assert _tool().refuse_skip_layer_norm(model) == 12
    assert hashlib.sha256(model.SerializeToString()).hexdigest() == FUSED_SHA256
    assert minilm.manifest()["recipe"]["skip_layer_norm"].startswith("12 ")


def _optimised_ops(path: Path, disabled: list[str] | None) -> list[str]:
    onnx = pytest.importorskip("onnx")
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.optimized_model_filepath = str(path)
    options.log_severity_level = 3
    ort.InferenceSession(str(model_files()[0]), options, providers=["CPUExecutionProvider"],
                         disabled_optimizers=disabled)
    return [n.op_type for n in onnx.load(str(path)).graph.node]


def test_the_runtime_keeps_onnx_runtime_from_fusing_it_back(tmp_path: Path) -> None:
    """With the runtime's ``DISABLED_OPTIMIZERS`` the optimised graph (what indexing runs)
    keeps LayerNormalization, the bias Adds folded into the DynamicQuantizeMatMuls; without
    them ONNX Runtime fuses the slow operator back (so the setting is needed, and were a
    later ONNX Runtime to fuse it another way, the first half fails)."""
    ops = _optimised_ops(tmp_path / "runtime.onnx", list(minilm.DISABLED_OPTIMIZERS))
    assert "SkipLayerNormalization" not in ops
    assert ops.count("LayerNormalization") == 12 and ops.count("Add") == 12
    assert ops.count("QAttention") == 6 and ops.count("DynamicQuantizeMatMul") == 18
    fused = _optimised_ops(tmp_path / "default.onnx", None)
    assert fused.count("SkipLayerNormalization") == 12


def test_vectors_stay_close_to_the_fused_files(tmp_path: Path) -> None:
    """On the 96 real commit documents (pallets/click) at 128 and 256 tokens: cosine to the
    earlier file's vectors >= 0.99 each (the rewrite moves vectors by quantisation noise, not
    more), and at least one vector differs (hence the new model id)."""
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(model_files()[0]))
    _tool().refuse_skip_layer_norm(model)
    fused = tmp_path / "fused.onnx"
    fused.write_bytes(model.SerializeToString())
    texts = [json.loads(line)["text"]
             for line in (DATA / "commit_documents.jsonl").read_text("utf-8").splitlines()]
    tokenizer = model_files()[1]
    shipped, earlier = (Runtime(p, tokenizer, "cpu", 1) for p in (model_files()[0], fused))
    assert minilm.DISABLED_OPTIMIZERS == ("SkipLayerNormFusion",)
    for budget in (128, 256):
        a, b = shipped.encode(texts, budget), earlier.encode(texts, budget)
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        cosines = (a * b).sum(axis=1)
        assert float(cosines.min()) >= 0.99, budget
        assert float(cosines.mean()) >= 0.997, budget
        assert not np.array_equal(a, b)
