"""Prototype (session 8, s8-embed; not used by the shipped build): write each fused
``SkipLayerNormalization`` of an ONNX model back as ``Add``, ``Add``, ``LayerNormalization``.

ONNX Runtime 1.32's CPU kernel of the fused operator measured ~5x the cost of the standard ops
(docs/performance.md, "s8-embed"): the model alone ran 1.25-1.44x more documents per
CPU-second and the pipeline 1.27-1.29x, but the vectors move by quantisation noise and one
filtered click question fell out of the top 10, so the shipped model keeps the fused graph.
To try it: build with ``tools/build_minilm_int8.py --keep DIR``, apply
:func:`unfuse_skip_layer_norm` to the int8 file, and load it with
``disabled_optimizers=["SkipLayerNormFusion"]`` (ONNX Runtime would fuse it back).

Usage::

    python tools/unfuse_skip_layer_norm.py IN.onnx OUT.onnx
"""

from __future__ import annotations

import sys
from typing import Any


def unfuse_skip_layer_norm(model: Any) -> int:
    """Replace every ``SkipLayerNormalization`` of ``model`` (an ``onnx.ModelProto``, changed
    in place) by ``Add(input, bias)``, ``Add(., skip)`` and an ONNX ``LayerNormalization``
    (opset 17) with the same gamma, beta and epsilon; return how many were replaced.

    The same function in fp32, in the source graph's order (the linear layer's bias, then
    the residual, then the layer norm), but ONNX Runtime 1.32's CPU kernel of the fused
    operator costs ~5x the standard ones here (~260 vs ~45 us per 128 x 384 call, 12 calls
    per text: ~28 % of a 128-token commit document's model time; docs/performance.md,
    s8-embed). At load ONNX Runtime folds the bias ``Add`` into the ``DynamicQuantizeMatMul``
    before it and would fuse the rest back into SkipLayerNormalization unless the session
    turns ``SkipLayerNormFusion`` off. The vectors are not bitwise the fused graph's: the
    layer norm rounds differently in the last bits (~2e-6) and the next dynamic activation
    quantisation can round some values to the other int8 step, so a model built this way
    needs a model id of its own. Each replaced node's nodes take its place in the node list
    and the LayerNormalization keeps its name (:func:`refuse_skip_layer_norm` undoes the
    rewrite byte for byte).

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



def main(argv: list[str]) -> int:
    import onnx

    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    model = onnx.load(argv[0])
    print(f"replaced {unfuse_skip_layer_norm(model)} SkipLayerNormalization nodes")
    onnx.save(model, argv[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
