"""What the ONNX Runtime providers share: building a model from nodes, a session on the CPU
execution provider, and a run whose inputs and output are bound to the harness's buffers with
IOBinding (no copies: ORT reads Q, K, V where the harness put them and writes O there)."""
from __future__ import annotations

from ..masks import numpy_mask
from ..provider import NotSupported, Provider, Run

OPSET = 23  # the ONNX opset with the standard Attention operator
IR_VERSION = 10  # what ONNX Runtime reads (onnx writes a newer one by default)


def make_model(nodes, inputs, output, initializers=(), opsets=None):
    """inputs: (name, shape) float32 tensors; output: (name, shape)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info(output[0], TensorProto.FLOAT, list(output[1]))],
        initializer=list(initializers))
    imports = [helper.make_opsetid("", OPSET)]
    for domain, version in (opsets or {}).items():
        imports.append(helper.make_opsetid(domain, version))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = IR_VERSION
    return model


def additive_mask(spec, shape=None):
    """The spec's mask as 0 / -inf float32 (q_len, kv_len), reshaped to `shape`; None if none."""
    import numpy as np

    mask = numpy_mask(spec)
    if mask is None:
        return None
    bias = np.where(mask, np.float32(0), np.float32(-np.inf)).astype(np.float32)
    return bias.reshape(shape) if shape else bias


def tensor(name, array):
    import numpy as np
    from onnx import numpy_helper

    return numpy_helper.from_array(np.ascontiguousarray(array), name)


def shape_of(spec, role):
    """The (batch, heads, len, dim) shape the harness stores q, k, v or o in (bhsd)."""
    heads = spec.q_heads if role in ("q", "o") else spec.kv_heads
    length = spec.q_len if role in ("q", "o") else spec.kv_len
    dim = spec.dv if role in ("v", "o") else spec.head_dim
    return (spec.batch, heads, length, dim)


class OrtRun(Run):
    """A session whose launches run it once over the bound harness buffers."""

    def __init__(self, session, form, spec):
        self.session, self.form, self.spec = session, form, spec
        self.bindings = {}

    def _binding(self, io):
        import numpy as np

        key = io.q.ctypes.data
        if key not in self.bindings:
            b = self.session.io_binding()
            for name in ("q", "k", "v"):  # the harness's memory, in its layout
                b.bind_input(name, "cpu", 0, np.float32, list(shape_of(self.spec, name)),
                             io[name].ctypes.data)
            b.bind_output("o", "cpu", 0, np.float32, list(shape_of(self.spec, "o")),
                          io.o.ctypes.data)
            self.bindings[key] = b
        return self.bindings[key]

    def launch(self, io):
        self.session.run_with_iobinding(self._binding(io))
        return None  # ORT wrote the harness's O

    def note(self):
        return f"ONNX Runtime {self.form}, CPU execution provider, graph optimizations all"


class OrtProvider(Provider):
    device = "cpu"
    family = "fused"
    fused = False
    library = "ONNX Runtime"
    framework = "numpy"
    requires = ("onnxruntime", "onnx")
    form = ""  # which graph, in words (the row's note)

    def build(self, spec):
        """The ONNX model of the point: inputs q, k, v and output o in the harness's shapes."""
        raise NotImplementedError

    def supports(self, spec):
        if spec.layout != "bhsd":
            return "bhsd tensors only (the graphs are built for that layout)"
        return self.supports_bhsd(spec)

    def supports_bhsd(self, spec):
        return None

    def library_version(self):
        from importlib import metadata

        return metadata.version("onnxruntime")

    def prepare(self, spec, io):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = self.threads  # the engine's threads, as C++ providers use
        try:
            session = ort.InferenceSession(self.build(spec).SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
        except Exception as e:  # ORT refusing the graph is its answer for this point
            raise NotSupported(f"ONNX Runtime refused the graph: {str(e).splitlines()[0]}") from e
        return OrtRun(session, self.form, spec)
