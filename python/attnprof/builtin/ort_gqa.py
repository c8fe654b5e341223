"""ort.cpu.gqa: ONNX Runtime's contrib operator com.microsoft.GroupQueryAttention, the one LLM
decoders export: grouped K/V heads, always causal (bottom-right), the keys before the last q_len
ones passed as its past cache, a sliding window through `local_window_size`; the CPU (ort.cpu.gqa)
or CUDA (ort.cuda.gqa) execution provider."""
from __future__ import annotations

from ..masks import has_empty_rows
from ._ort import OrtProvider, cuda_twin, make_model, shape_of, tensor


def gqa_graph(spec, elem):
    import numpy as np
    from onnx import helper

    b, hq, hkv, nq, nk, d = (spec.batch, spec.q_heads, spec.kv_heads, spec.q_len, spec.kv_len,
                             spec.head_dim)
    past = nk - nq
    nodes = []
    inits = [tensor("q_shape", np.array([b, nq, hq * d], np.int64)),
             tensor("kv_shape", np.array([b, nq, hkv * d], np.int64)),
             tensor("o_shape", np.array([b, nq, hq, d], np.int64)),
             tensor("seqlens_k", np.full([b], nk - 1, np.int32)),
             tensor("total_len", np.array([nk], np.int32)),
             tensor("past_end", np.array([past], np.int64)),
             tensor("new_end", np.array([nk], np.int64)),
             tensor("start", np.array([0], np.int64)),
             tensor("seq_axis", np.array([2], np.int64))]
    nodes += [helper.make_node("Transpose", ["q"], ["q_bshd"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["q_bshd", "q_shape"], ["q3"])]
    for name in ("k", "v"):  # the last q_len keys are new, the ones before them the past cache
        nodes += [
            helper.make_node("Slice", [name, "past_end", "new_end", "seq_axis"], [name + "_new"]),
            helper.make_node("Transpose", [name + "_new"], [name + "_bshd"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [name + "_bshd", "kv_shape"], [name + "3"]),
            helper.make_node("Slice", [name, "start", "past_end", "seq_axis"], [name + "_past"]),
        ]
    window = spec.window if spec.mask_kind == "window" else -1
    nodes += [
        helper.make_node("GroupQueryAttention",
                         ["q3", "k3", "v3", "k_past", "v_past", "seqlens_k", "total_len"],
                         ["o3", "present_k", "present_v"], domain="com.microsoft", num_heads=hq,
                         kv_num_heads=hkv, scale=float(spec.softmax_scale),
                         local_window_size=int(window)),
        helper.make_node("Reshape", ["o3", "o_shape"], ["o_bshd"]),
        helper.make_node("Transpose", ["o_bshd"], ["o"], perm=[0, 2, 1, 3]),
    ]
    graph_inputs = [(n, shape_of(spec, n)) for n in ("q", "k", "v")]
    return make_model(nodes, graph_inputs, ("o", shape_of(spec, "o")), inits,
                      opsets={"com.microsoft": 1}, elem=elem)


class OrtGqa(OrtProvider):
    name = "ort.cpu.gqa"
    description = "ONNX Runtime (CPU EP) running com.microsoft.GroupQueryAttention (past cache)"
    family = "fused"
    variant_of = "ort.cpu.naive_graph"  # the same runtime, another graph form
    form = "com.microsoft.GroupQueryAttention"

    def supports_bhsd(self, spec):
        why = []
        causal = spec.mask_kind in ("causal-br", "window") or (
            spec.mask == "causal" and spec.q_len == spec.kv_len) or (
            spec.mask == "none" and spec.q_len == 1)
        if not causal:
            why.append("always causal from the bottom right: masks causal-br, window, causal "
                       "with q_len == kv_len, or none for one query")
        if spec.q_len > spec.kv_len:
            why.append("more queries than keys")
        if spec.dv != spec.head_dim:
            why.append("V's head dim must equal Q's")
        if has_empty_rows(spec):
            why.append("queries that see no key")
        return "; ".join(why) or None

    def build(self, spec, elem):
        return gqa_graph(spec, elem)


PROVIDERS = [
    OrtGqa(),
    cuda_twin(OrtGqa, "ort.cuda.gqa",
              "ONNX Runtime (CUDA EP) running com.microsoft.GroupQueryAttention (past cache)"),
]
