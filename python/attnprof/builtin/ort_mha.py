"""ort.cpu.mha: ONNX Runtime's contrib operator com.microsoft.MultiHeadAttention on (batch, seq,
heads x dim) inputs (Transposes in the graph from the harness's bhsd tensors), masks through an
additive `attention_bias`; the CPU (ort.cpu.mha) or CUDA (ort.cuda.mha) execution provider."""
from __future__ import annotations

from ..masks import has_empty_rows
from ._ort import OrtProvider, additive_mask, cuda_twin, float_constant, make_model, shape_of, tensor


def mha_graph(spec, elem):
    import numpy as np
    from onnx import helper

    b, h = spec.batch, spec.q_heads
    nodes, inits, names = [], [], {}
    for name, length, dim in (("q", spec.q_len, spec.head_dim), ("k", spec.kv_len, spec.head_dim),
                              ("v", spec.kv_len, spec.dv)):
        nodes.append(helper.make_node("Transpose", [name], [name + "_bshd"], perm=[0, 2, 1, 3]))
        source = name + "_bshd"
        inits.append(tensor(name + "_shape", np.array([b, length, h * dim], np.int64)))
        nodes.append(helper.make_node("Reshape", [source, name + "_shape"], [name + "3"]))
        names[name] = name + "3"
    inputs = [names["q"], names["k"], names["v"], "", ""]  # no bias, no key padding mask
    bias = additive_mask(spec, (1, 1, spec.q_len, spec.kv_len))
    if bias is not None:
        inputs.append(float_constant("attention_bias", bias, elem, nodes, inits))
    else:
        inputs = inputs[:3]
    nodes.append(helper.make_node("MultiHeadAttention", inputs, ["o3"], domain="com.microsoft",
                                  num_heads=h, scale=float(spec.softmax_scale)))
    inits.append(tensor("o_shape", np.array([b, spec.q_len, h, spec.dv], np.int64)))
    nodes += [helper.make_node("Reshape", ["o3", "o_shape"], ["o_bshd"]),
              helper.make_node("Transpose", ["o_bshd"], ["o"], perm=[0, 2, 1, 3])]
    graph_inputs = [(n, shape_of(spec, n)) for n in ("q", "k", "v")]
    return make_model(nodes, graph_inputs, ("o", shape_of(spec, "o")), inits,
                      opsets={"com.microsoft": 1}, elem=elem)


class OrtMha(OrtProvider):
    name = "ort.cpu.mha"
    description = "ONNX Runtime (CPU EP) running com.microsoft.MultiHeadAttention"
    family = "fused"
    variant_of = "ort.cpu.naive_graph"  # the same runtime, another graph form
    form = "com.microsoft.MultiHeadAttention"

    def supports_bhsd(self, spec):
        why = []
        if spec.kv_heads != spec.q_heads:
            why.append("no grouped K/V heads (ort.cpu.attention takes them)")
        if has_empty_rows(spec):
            why.append("queries that see no key")
        return "; ".join(why) or None

    def build(self, spec, elem):
        return mha_graph(spec, elem)


PROVIDERS = [
    OrtMha(),
    cuda_twin(OrtMha, "ort.cuda.mha",
              "ONNX Runtime (CUDA EP) running com.microsoft.MultiHeadAttention"),
]
