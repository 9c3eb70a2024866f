"""Single ONNX Runtime operators at the shipped model's shapes: CPU microseconds per call.

Usage::

    python benchmarks/bench_embedding_ops.py [--tokens 128] [--calls 300]

One-node (or few-node) graphs with random inputs of one 128-token text, 1 intra-op thread,
spinning off and ONNX Runtime's SkipLayerNormFusion off:
SkipLayerNormalization against Add, Add, LayerNormalization
(the rewrite measured in session 8, ``tools/unfuse_skip_layer_norm.py``), BiasGelu against FastGelu
and the ONNX Gelu, and the largest difference between each pair's outputs.
``time.process_time`` per call, after 3 warm-up calls; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args(argv)
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    f32, s = TensorProto.FLOAT, args.tokens

    def session(nodes: list[Any], inputs: list[Any], outputs: list[Any],
                inits: dict[str, np.ndarray]) -> Any:
        graph = helper.make_graph(nodes, "g", inputs, outputs,
                                  [numpy_helper.from_array(v, k) for k, v in inits.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                        helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 9
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"],
                                    disabled_optimizers=["SkipLayerNormFusion"])

    def vi(name: str, shape: list[int]) -> Any:
        return helper.make_tensor_value_info(name, f32, shape)

    out: dict[str, Any] = {"tokens": s, "load_before": os.getloadavg(), "us_per_call": {}}

    def bench(name: str, sess: Any, feeds: dict[str, np.ndarray]) -> np.ndarray:
        for _ in range(3):
            y: np.ndarray = sess.run(None, feeds)[0]
        cpu = time.process_time()
        for _ in range(args.calls):
            sess.run(None, feeds)
        out["us_per_call"][name] = round((time.process_time() - cpu) / args.calls * 1e6, 1)
        return y

    rng = np.random.default_rng(0)
    x4 = rng.standard_normal((1, s, 1536)).astype(np.float32)
    b4 = (0.1 * rng.standard_normal(1536)).astype(np.float32)
    io4 = ([vi("x", [1, s, 1536])], [vi("y", [1, s, 1536])])
    gelu = bench("BiasGelu", session([helper.make_node("BiasGelu", ["x", "bb"], ["y"],
                                                       domain="com.microsoft")], *io4,
                                     {"bb": b4}), {"x": x4})
    fast = bench("FastGelu", session([helper.make_node("FastGelu", ["x", "bb"], ["y"],
                                                       domain="com.microsoft")], *io4,
                                     {"bb": b4}), {"x": x4})
    onnx_gelu = bench("Add + Gelu (opset 20)", session(
        [helper.make_node("Add", ["x", "bb"], ["a"]), helper.make_node("Gelu", ["a"], ["y"])],
        *io4, {"bb": b4}), {"x": x4})
    x = rng.standard_normal((1, s, 384)).astype(np.float32)
    skip = rng.standard_normal((1, s, 384)).astype(np.float32)
    g = (1 + 0.1 * rng.standard_normal(384)).astype(np.float32)
    b = (0.1 * rng.standard_normal(384)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(384)).astype(np.float32)
    io = ([vi("x", [1, s, 384]), vi("k", [1, s, 384])], [vi("y", [1, s, 384])])
    inits = {"g": g, "b": b, "bb": bias}
    fused = bench("SkipLayerNormalization", session(
        [helper.make_node("SkipLayerNormalization", ["x", "k", "g", "b", "bb"], ["y"],
                          domain="com.microsoft", epsilon=1e-12)], *io, inits),
        {"x": x, "k": skip})
    plain = bench("Add (bias), Add (skip), LayerNormalization", session(
        [helper.make_node("Add", ["x", "bb"], ["a"]), helper.make_node("Add", ["a", "k"], ["a2"]),
         helper.make_node("LayerNormalization", ["a2", "g", "b"], ["y"], axis=-1,
                          epsilon=1e-12)], *io, inits), {"x": x, "k": skip})
    out["max_abs_difference"] = {
        "FastGelu vs BiasGelu": float(np.abs(fast - gelu).max()),
        "Gelu vs BiasGelu": float(np.abs(onnx_gelu - gelu).max()),
        "LayerNormalization vs SkipLayerNormalization": float(np.abs(plain - fused).max()),
    }
    out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
