"""ort.cpu.naive_graph, ort.cuda.naive_graph: the graph torch.onnx.export makes of the naive module
(MatMul, Mul by the scale, Add of the mask, Softmax, MatMul), run by ONNX Runtime's CPU or CUDA
execution provider; GQA as a broadcast over a group axis."""
from __future__ import annotations

from ..masks import has_empty_rows
from ._ort import OrtProvider, additive_mask, cuda_twin, float_constant, make_model, shape_of, tensor


def naive_graph(spec, elem):
    import numpy as np
    from onnx import helper

    b, hkv, g = spec.batch, spec.kv_heads, spec.group_size
    nodes, inits = [], []
    names = {"q": "q", "k": "k", "v": "v"}
    inits += [tensor("q5_shape", np.array([b, hkv, g, spec.q_len, spec.head_dim], np.int64)),
              tensor("o_shape", np.array([b, spec.q_heads, spec.q_len, spec.dv], np.int64)),
              tensor("group_axis", np.array([2], np.int64))]
    scale = float_constant("scale", np.array(spec.softmax_scale, np.float32), elem, nodes, inits)
    nodes += [
        helper.make_node("Reshape", [names["q"], "q5_shape"], ["q5"]),
        helper.make_node("Unsqueeze", [names["k"], "group_axis"], ["k5"]),
        helper.make_node("Unsqueeze", [names["v"], "group_axis"], ["v5"]),
        helper.make_node("Transpose", ["k5"], ["kt"], perm=[0, 1, 2, 4, 3]),
        helper.make_node("MatMul", ["q5", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", scale], ["scaled"]),
    ]
    logits = "scaled"
    bias = additive_mask(spec)
    if bias is not None:
        mask = float_constant("mask", bias, elem, nodes, inits)
        nodes.append(helper.make_node("Add", ["scaled", mask], ["masked"]))
        logits = "masked"
    nodes += [helper.make_node("Softmax", [logits], ["probs"], axis=-1),
              helper.make_node("MatMul", ["probs", "v5"], ["o5"])]
    nodes.append(helper.make_node("Reshape", ["o5", "o_shape"], ["o"]))
    inputs = [(n, shape_of(spec, n)) for n in ("q", "k", "v")]
    return make_model(nodes, inputs, ("o", shape_of(spec, "o")), inits, elem=elem)


class OrtNaiveGraph(OrtProvider):
    name = "ort.cpu.naive_graph"
    description = ("ONNX Runtime (CPU EP) on the exported naive graph: MatMul, Mul, Add mask, "
                   "Softmax, MatMul")
    family = "naive"
    form = "exported naive graph (MatMul, Mul, Add mask, Softmax, MatMul)"

    def supports_bhsd(self, spec):
        if has_empty_rows(spec):
            return "queries that see no key (the softmax of an empty row is NaN)"
        return None

    def workspace_estimate(self, spec):
        return 3 * 4 * spec.batch * spec.q_heads * spec.q_len * spec.kv_len

    def build(self, spec, elem):
        return naive_graph(spec, elem)


PROVIDERS = [
    OrtNaiveGraph(),
    cuda_twin(OrtNaiveGraph, "ort.cuda.naive_graph",
              "ONNX Runtime (CUDA EP) on the exported naive graph: MatMul, Mul, Add mask, "
              "Softmax, MatMul"),
]
