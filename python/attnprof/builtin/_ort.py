"""What the ONNX Runtime providers share: building a model from nodes in the point's element
type, a session on the CPU or the CUDA execution provider, and a run whose inputs and output are
bound to the harness's buffers with IOBinding (no copies: ORT reads Q, K, V where the harness put
them and writes O there).

On the CUDA EP the session computes on the stream the instrument times (`user_compute_stream`),
runs are not synchronized by ORT (the instrument times the stream), and the device memory ORT
takes for itself (its arena, its cuBLAS/cuDNN workspaces) counts in the point's peak: the drop
in the device's free memory from before the session to after the verified launch. On the CPU EP
what ORT holds (its arena: tracemalloc, which counts numpy's buffers, does not see it) counts the
same way: the growth of the process's resident memory from before the session to after its first
run (ORT's arena keeps what a run took)."""
from __future__ import annotations

from ..masks import numpy_mask
from ..provider import NotSupported, Provider, Run

OPSET = 23  # the ONNX opset with the standard Attention operator
IR_VERSION = 10  # what ONNX Runtime reads (onnx writes a newer one by default)


def elem_type(dtype):
    """The ONNX element type of the harness's tensors: fp32 on the host, the spec's on the GPU."""
    from onnx import TensorProto

    return {"fp32": TensorProto.FLOAT, "fp16": TensorProto.FLOAT16,
            "bf16": TensorProto.BFLOAT16}[dtype]


def make_model(nodes, inputs, output, initializers=(), opsets=None, elem=None):
    """inputs: (name, shape) tensors of element type `elem` (float32 when None); output: (name,
    shape)."""
    from onnx import TensorProto, helper

    elem = TensorProto.FLOAT if elem is None else elem
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info(n, elem, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info(output[0], elem, list(output[1]))],
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


def float_constant(name, array, elem, nodes, inits):
    """A float32 constant as an initializer, cast to `elem` in the graph where that differs (numpy
    has no bfloat16); returns the name the graph reads it by."""
    from onnx import TensorProto, helper

    inits.append(tensor(name, array))
    if elem == TensorProto.FLOAT:
        return name
    nodes.append(helper.make_node("Cast", [name], [name + "_cast"], to=elem))
    return name + "_cast"


def shape_of(spec, role):
    """The (batch, heads, len, dim) shape the harness stores q, k, v or o in (bhsd)."""
    heads = spec.q_heads if role in ("q", "o") else spec.kv_heads
    length = spec.q_len if role in ("q", "o") else spec.kv_len
    dim = spec.dv if role in ("v", "o") else spec.head_dim
    return (spec.batch, heads, length, dim)


def _address(t):
    return t.ctypes.data if hasattr(t, "ctypes") else t.data_ptr()


def resident_bytes():
    """The process's resident memory now (Linux /proc; 0 where there is none)."""
    import os

    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class OrtRun(Run):
    """A session whose launches run it once over the bound harness buffers."""

    def __init__(self, session, provider, spec, free_before=None, resident_before=None):
        self.session, self.provider, self.spec = session, provider, spec
        self.bindings = {}
        self.free_before = free_before  # CUDA: the device's free bytes before the session
        self.resident_before = resident_before  # CPU: the process's resident bytes before it
        self.resident_after = None  # and after the first (verified) run, before any check
        self.options = None
        if provider.ep == "cuda":
            import onnxruntime as ort

            self.options = ort.RunOptions()
            # ORT would otherwise wait for the stream after each run: the instrument times it.
            self.options.add_run_config_entry("disable_synchronize_execution_providers", "1")

    def _binding(self, io):
        key = _address(io.q)
        if key not in self.bindings:
            b = self.session.io_binding()
            device, index = ("cuda", io.q.device.index or 0) if self.provider.ep == "cuda" else (
                "cpu", 0)
            elem = elem_type(self.spec.dtype if self.provider.ep == "cuda" else "fp32")
            for name in ("q", "k", "v"):  # the harness's memory, in its layout
                b.bind_input(name, device, index, elem, list(shape_of(self.spec, name)),
                             _address(io[name]))
            b.bind_output("o", device, index, elem, list(shape_of(self.spec, "o")), _address(io.o))
            self.bindings[key] = b
        return self.bindings[key]

    def launch(self, io):
        self.session.run_with_iobinding(self._binding(io), self.options)
        if self.resident_before is not None and self.resident_after is None:
            # ORT's arena keeps what the run took; read before the instrument's host check
            # allocates its own buffers in this process.
            self.resident_after = resident_bytes()
        return None  # ORT wrote the harness's O

    def workspace_bytes(self):
        if self.resident_before is not None:
            return max(0, (self.resident_after or self.resident_before) - self.resident_before)
        if self.free_before is None:
            return 0
        import torch

        return max(0, self.free_before - torch.cuda.mem_get_info()[0])

    def note(self):
        p = self.provider
        if p.ep == "cuda":
            return (f"ONNX Runtime {p.form}, CUDA execution provider on the timed stream, graph "
                    f"optimizations all, fused attention kernel chosen by ORT (sdpa_kernel "
                    f"auto; the kernels are named), no TF32")
        return (f"ONNX Runtime {p.form}, CPU execution provider, graph optimizations all; ORT's "
                f"own memory counted as the growth of resident memory over the session's creation "
                f"and first run")


class OrtProvider(Provider):
    device = "cpu"
    family = "fused"
    fused = False
    library = "ONNX Runtime"
    framework = "numpy"
    requires = ("onnxruntime", "onnx")
    form = ""  # which graph, in words (the row's note)
    ep = "cpu"  # the execution provider: cpu or cuda
    cuda_dtypes = ("fp16", "bf16", "fp32")  # what the CUDA EP runs the form in

    def build(self, spec, elem):
        """The ONNX model of the point: inputs q, k, v and output o in the harness's shapes, of
        element type `elem`."""
        raise NotImplementedError

    def availability(self):
        if self.ep != "cuda":
            return super().availability()
        import importlib.util
        import sys

        why = []
        if importlib.util.find_spec("onnxruntime") is None:
            why.append(f"onnxruntime not importable in {sys.executable}")
        else:
            import onnxruntime as ort

            if "CUDAExecutionProvider" not in ort.get_available_providers():
                why.append(f"onnxruntime {ort.__version__} in {sys.executable} has no CUDA "
                           f"execution provider (the onnxruntime-gpu wheel has it; "
                           f"scripts/device/stage.sh carries it to a GPU machine)")
        for module in ("onnx", "torch"):
            if importlib.util.find_spec(module) is None:
                why.append(f"{module} not importable in {sys.executable}")
        return "; ".join(why) or None

    def supports(self, spec):
        why = []
        if spec.layout != "bhsd":
            why.append("bhsd tensors only (the graphs are built for that layout)")
        if self.ep == "cuda" and spec.dtype not in self.cuda_dtypes:
            why.append(f"{spec.dtype} (this form runs {', '.join(self.cuda_dtypes)})")
        form = self.supports_bhsd(spec)
        if form:
            why.append(form)
        return "; ".join(why) or None

    def supports_bhsd(self, spec):
        return None

    def library_version(self):
        # The module's own: a staged onnxruntime-gpu ahead of an installed onnxruntime on the path
        # leaves the package metadata of the other behind.
        import onnxruntime as ort

        return ort.__version__

    def fingerprint(self):
        import onnx
        import onnxruntime as ort

        return {"onnxruntime": ort.__version__, "onnx": onnx.__version__}

    def prepare(self, spec, io):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        free_before = resident_before = None
        if self.ep == "cuda":
            import torch

            torch.cuda.synchronize()
            free_before = torch.cuda.mem_get_info()[0]
            stream = torch.cuda.current_stream()  # the instrument's (the worker sets it)
            providers = [("CUDAExecutionProvider", {
                "device_id": str(io.q.device.index or 0),
                "has_user_compute_stream": "1",
                "user_compute_stream": str(stream.cuda_stream),
                "use_tf32": "0",
            })]
            elem = elem_type(spec.dtype)
        else:
            options.intra_op_num_threads = self.threads  # the engine's threads, as C++ providers
            providers = ["CPUExecutionProvider"]
            elem = elem_type("fp32")
            resident_before = resident_bytes()
        try:
            session = ort.InferenceSession(self.build(spec, elem).SerializeToString(), options,
                                           providers=providers)
        except Exception as e:  # ORT refusing the graph is its answer for this point
            raise NotSupported(f"ONNX Runtime refused the graph: {str(e).splitlines()[0]}") from e
        if self.ep == "cuda" and session.get_providers()[0] != "CUDAExecutionProvider":
            raise NotSupported(f"ONNX Runtime placed the session on {session.get_providers()}")
        return OrtRun(session, self, spec, free_before, resident_before)


def cuda_twin(cls, name, description):
    """The same graph form on the CUDA execution provider (torch views of the device tensors)."""
    return type(cls.__name__ + "Cuda", (cls,), {
        "name": name,
        "description": description,
        "device": "cuda",
        "framework": "torch",
        "ep": "cuda",
        "requires": ("onnxruntime", "onnx", "torch"),
        "variant_of": "ort.cuda.naive_graph" if name != "ort.cuda.naive_graph" else "",
    })()
