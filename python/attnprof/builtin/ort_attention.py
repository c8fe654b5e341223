"""ort.cpu.attention: the standard ONNX Attention operator (opset 23) on 4D Q, K, V, GQA through
the head counts, causal through `is_causal` (top-left), other masks through an additive
`attn_mask`; ONNX Runtime's CPU (ort.cpu.attention) or CUDA (ort.cuda.attention) execution
provider."""
from __future__ import annotations

from ..masks import has_empty_rows
from ._ort import OrtProvider, additive_mask, cuda_twin, float_constant, make_model, shape_of


def attention_graph(spec, elem):
    from onnx import helper

    nodes, inits = [], []
    inputs = ["q", "k", "v"]
    causal = spec.mask == "causal"
    if not causal and spec.mask_kind != "none":
        inputs.append(float_constant("mask", additive_mask(spec), elem, nodes, inits))
    nodes.append(helper.make_node("Attention", inputs, ["o"], is_causal=int(causal),
                                  scale=float(spec.softmax_scale)))
    graph_inputs = [(n, shape_of(spec, n)) for n in ("q", "k", "v")]
    return make_model(nodes, graph_inputs, ("o", shape_of(spec, "o")), inits, elem=elem)


class OrtAttention(OrtProvider):
    name = "ort.cpu.attention"
    description = "ONNX Runtime (CPU EP) running the ONNX opset-23 Attention operator"
    family = "fused"
    variant_of = "ort.cpu.naive_graph"  # the same runtime, another graph form
    form = "ONNX Attention operator (opset 23)"

    def supports_bhsd(self, spec):
        if has_empty_rows(spec):
            return "queries that see no key"
        return None

    def build(self, spec, elem):
        return attention_graph(spec, elem)


PROVIDERS = [
    OrtAttention(),
    cuda_twin(OrtAttention, "ort.cuda.attention",
              "ONNX Runtime (CUDA EP) running the ONNX opset-23 Attention operator"),
]
