"""py.openvino.cpu.sdpa: OpenVINO's ScaledDotProductAttention operation (opset 13) compiled for
the CPU plugin, which lowers it as it chooses (a Snippets MHA subgraph, brgemm MatMuls and a
Softmax, ...: the row's note names the nodes of the compiled graph and their primitives).

The harness's tensors go in and out without copies: each input is an ov.Tensor over the
harness's memory (shared_memory) in its storage order (bshd tensors are transposed to bhsd
inside the graph), and the output tensor is the harness's O; a set whose memory OpenVINO would
copy is refused rather than timed with a copy. GQA runs without repeating K and V: the query
heads of one KV head are folded into its rows ((B, Hkv, G * L, D), a free reshape of bhsd Q) and
the mask is tiled over them, so every mask goes in as an explicit boolean mask (causal too: the
operation's own `causal` flag cannot know the fold). bf16 (and fp16 where the CPU reports it)
runs with the inference precision hint set to it: the harness's host tensors hold the dtype's
values in fp32, and OpenVINO converts them inside the compiled graph (timed)."""
from __future__ import annotations

from ..masks import has_empty_rows, numpy_mask
from ..provider import NotSupported, Provider, Run
from ._ort import resident_bytes

# The CPU plugin's name for each dtype's precision (its OPTIMIZATION_CAPABILITIES and the
# INFERENCE_PRECISION_HINT values).
_CAPABILITY = {"fp32": "FP32", "bf16": "BF16", "fp16": "FP16"}
_HINT = {"fp32": "f32", "bf16": "bf16", "fp16": "f16"}


def _physical(spec, role):
    """The shape the harness stores q, k, v or o in (its layout)."""
    heads = spec.q_heads if role in ("q", "o") else spec.kv_heads
    length = spec.q_len if role in ("q", "o") else spec.kv_len
    dim = spec.dv if role in ("v", "o") else spec.head_dim
    if spec.layout == "bshd":
        return (spec.batch, length, heads, dim)
    return (spec.batch, heads, length, dim)


def _storage(spec, array):
    """The harness's memory of a (B, H, S, D) view, in its storage order (C-contiguous)."""
    return array.transpose(0, 2, 1, 3) if spec.layout == "bshd" else array


def _model(spec):
    import numpy as np
    import openvino as ov
    import openvino.opset13 as ops

    params = [ops.parameter(list(_physical(spec, r)), np.float32, name=r) for r in ("q", "k", "v")]

    def to_bhsd(node):
        return ops.transpose(node, ops.constant(np.array([0, 2, 1, 3], np.int64)))

    q, k, v = (to_bhsd(p) if spec.layout == "bshd" else p for p in params)
    g = spec.group_size
    b, hkv, lq, d = spec.batch, spec.kv_heads, spec.q_len, spec.head_dim
    if g > 1:  # the group's query heads as rows of their KV head
        q = ops.reshape(q, ops.constant(np.array([b, hkv, g * lq, d], np.int64)), False)
    mask = numpy_mask(spec)
    if mask is not None and g > 1:
        mask = np.tile(mask, (g, 1))
    mask_node = ops.constant(np.ascontiguousarray(mask)) if mask is not None else None
    scale = ops.constant(np.float32(spec.softmax_scale))
    o = ops.scaled_dot_product_attention(q, k, v, mask_node, scale, causal=False)
    if g > 1:
        o = ops.reshape(o, ops.constant(np.array([b, spec.q_heads, lq, spec.dv], np.int64)), False)
    if spec.layout == "bshd":
        o = to_bhsd(o)  # the same swap of axes 1 and 2
    return ov.Model([o], params, "attention")


def _lowered(compiled):
    """The compiled graph's compute nodes as 'LayerType (primitive)', in order."""
    out = []
    for node in compiled.get_runtime_model().get_ordered_ops():
        info = node.get_rt_info()
        layer = info["layerType"].astype(str)
        if layer in ("Input", "Output", "Const", "Reshape"):
            continue
        out.append(f"{layer} ({info['primitiveType'].astype(str)})")
    return out


class _Run(Run):
    def __init__(self, compiled, spec, hint, resident_before):
        self.compiled, self.spec, self.hint = compiled, spec, hint
        self.requests = {}  # by Q's address: an infer request bound to that set's memory
        self.resident_before, self.resident_after = resident_before, None

    def _request(self, io):
        import openvino as ov

        key = io.q.ctypes.data
        if key not in self.requests:
            request = self.compiled.create_infer_request()
            for i, role in enumerate(("q", "k", "v")):
                array = _storage(self.spec, io[role])
                request.set_input_tensor(i, ov.Tensor(array, shared_memory=True))
                if request.get_input_tensor(i).data.ctypes.data != array.ctypes.data:
                    raise NotSupported(f"OpenVINO would copy {role} (not shared memory)")
            out = _storage(self.spec, io.o)
            request.set_output_tensor(0, ov.Tensor(out, shared_memory=True))
            self.requests[key] = request
        return self.requests[key]

    def launch(self, io):
        request = self._request(io)
        request.infer()
        if request.get_output_tensor(0).data.ctypes.data != _storage(self.spec, io.o).ctypes.data:
            raise NotSupported("OpenVINO wrote O elsewhere than the harness's tensor")
        if self.resident_after is None:
            self.resident_after = resident_bytes()
        return None  # OpenVINO wrote the harness's O

    def workspace_bytes(self):
        return max(0, (self.resident_after or self.resident_before) - self.resident_before)

    def note(self):
        nodes = ", ".join(_lowered(self.compiled))
        fold = (f"GQA: {self.spec.group_size} query heads folded into each KV head's rows; "
                if self.spec.group_size > 1 else "")
        return (f"OpenVINO ScaledDotProductAttention (opset 13), CPU plugin, inference precision "
                f"{self.hint}; compiled to: {nodes}; {fold}inputs and O shared with the harness "
                f"(no copies); OpenVINO's own memory counted as the growth of resident memory")


class OpenVinoSdpa(Provider):
    name = "py.openvino.cpu.sdpa"
    description = ("OpenVINO's ScaledDotProductAttention (opset 13) compiled by the CPU plugin, "
                   "on the harness's memory")
    device = "cpu"
    family = "fused"
    fused = False  # the plugin may lower it to MatMul, Softmax, MatMul (the note says)
    library = "OpenVINO"
    framework = "numpy"
    requires = ("openvino",)

    def library_version(self):
        import openvino as ov

        return ov.__version__.split("-", 1)[0]

    def fingerprint(self):
        import openvino as ov

        return {"openvino": ov.__version__}

    def _capabilities(self):
        import openvino as ov

        return set(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))

    def supports(self, spec):
        why = []
        if spec.dtype not in _CAPABILITY:
            why.append(f"{spec.dtype} (OpenVINO's CPU plugin runs fp32, bf16, fp16)")
        elif _CAPABILITY[spec.dtype] not in self._capabilities():
            why.append(f"{spec.dtype}: this CPU's OpenVINO plugin does not offer "
                       f"{_CAPABILITY[spec.dtype]} (OPTIMIZATION_CAPABILITIES)")
        if has_empty_rows(spec):
            why.append("queries that see no key (OpenVINO returns NaN rows)")
        return "; ".join(why) or None

    def workspace_estimate(self, spec):
        # Lowered to MatMul, Softmax, MatMul, the scores may be materialized: fp32 B x Hq x L x S.
        return 4 * spec.batch * spec.q_heads * spec.q_len * spec.kv_len

    def prepare(self, spec, io):
        import openvino as ov

        resident_before = resident_bytes()
        config = {"INFERENCE_PRECISION_HINT": _HINT[spec.dtype], "PERFORMANCE_HINT": "LATENCY"}
        if self.threads > 0:  # the engine's threads, as the C++ providers use them
            config["INFERENCE_NUM_THREADS"] = self.threads
        try:
            compiled = ov.Core().compile_model(_model(spec), "CPU", config)
        except Exception as e:  # OpenVINO refusing the graph is its answer for this point
            raise NotSupported(f"OpenVINO refused the graph: {str(e).splitlines()[0]}") from e
        return _Run(compiled, spec, _HINT[spec.dtype], resident_before)


PROVIDERS = [OpenVinoSdpa()]
