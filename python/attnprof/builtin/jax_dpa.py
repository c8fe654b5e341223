"""py.jax.xla, py.jax.cudnn: `jax.nn.dot_product_attention` with implementation="xla" (XLA's
fusion of the recipe) or "cudnn" (cuDNN's fused kernel through XLA), jitted in prepare.

JAX runs its kernels on streams of its own, not on the stream the instrument times. The launch
hands the harness's tensors to JAX through DLPack from inside the timed stream (so JAX's work
waits for what the stream did before: the L2 flush and the start event) and takes the output
back through DLPack on the timed stream (which then waits for JAX's kernels before the end
event). prepare() proves that ordering on this machine with a spin on the timed stream and
refuses the point (not_supported, with why) where it does not hold;
tests/python_gpu/test_timed_stream.py checks it with CUPTI timestamps. The tensors go over as
(batch, heads, len, dim) and are transposed to JAX's (batch, len, heads, dim) inside the jitted
function (timed, said in the row's note)."""
from __future__ import annotations

import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # share the GPU with the harness

from ..provider import NotSupported, Provider, Run  # noqa: E402


def _ordering_holds():
    """Whether JAX's DLPack exchange orders its work after the current torch stream's and that
    stream after JAX's: a 20 ms spin, then a fill, on the stream; JAX adds 1; the stream copies
    the result back. Without the ordering JAX reads the zeros or the stream reads a buffer JAX has
    not written."""
    import jax
    import torch

    x = torch.zeros(1 << 16, device="cuda")
    torch.cuda._sleep(40_000_000)  # ~20 ms at the H200's clocks, on the current stream
    x.fill_(1.0)
    y = jax.dlpack.from_dlpack(x) + 1.0
    z = torch.from_dlpack(y).clone()
    torch.cuda.current_stream().synchronize()
    return bool((z == 2).all().item())


def _jax_memory():
    """JAX's allocator on the GPU: (bytes in use, the process's peak bytes in use)."""
    import jax

    stats = jax.devices("gpu")[0].memory_stats() or {}
    return int(stats.get("bytes_in_use", 0)), int(stats.get("peak_bytes_in_use", 0))


class _Run(Run):
    """JAX allocates from a pool of its own that the harness's tracker and torch do not see, and
    whose peak cannot be reset: the first launch reads it. Where this point raised the process's
    peak, what it added over what JAX held before is exact; otherwise only what JAX held right
    after the launch's dispatch is known (a lower bound), and the note says which."""

    def __init__(self, fn, implementation):
        self.fn, self.implementation = fn, implementation
        self.in_use_before, self.peak_before = _jax_memory()
        self.extra = None  # bytes JAX added for the first launch
        self.exact = False

    def launch(self, io):
        import jax
        import torch

        out = self.fn(jax.dlpack.from_dlpack(io.q), jax.dlpack.from_dlpack(io.k),
                      jax.dlpack.from_dlpack(io.v))
        if self.extra is None:  # the allocations of a dispatch are made by now
            in_use, peak = _jax_memory()
            self.exact = peak > self.peak_before
            self.extra = max(0, (peak if self.exact else in_use) - self.in_use_before)
        return {"o": torch.from_dlpack(out)}

    def workspace_bytes(self):
        return self.extra or 0

    def note(self):
        memory = ("JAX's allocator peak counted" if self.exact else
                  "JAX's memory after the dispatch counted (a lower bound: an earlier point set "
                  "the process's peak)")
        return (f"jax.nn.dot_product_attention(implementation={self.implementation!r}), jitted; "
                f"JAX's own streams, ordered with the timed stream through DLPack; (b, h, s, d) "
                f"transposed to JAX's (b, s, h, d) inside the jitted function; {memory}")


class JaxAttention(Provider):
    device = "cuda"
    library = "JAX"
    requires = ("jax", "torch")
    implementation = ""
    # Kernels on streams of its own, ordered with the timed stream (the stream test checks the
    # order by CUPTI timestamps instead of stream ids).
    own_streams = True

    def library_version(self):
        from importlib import metadata

        try:
            return metadata.version("jax")
        except metadata.PackageNotFoundError:
            return ""

    def supports(self, spec):
        why = []
        if spec.dtype == "fp32" and self.implementation == "cudnn":
            why.append("fp16 and bf16 only (cuDNN's fused kernel)")
        if spec.mask_kind not in ("none", "causal") or (spec.mask == "causal"
                                                         and spec.q_len != spec.kv_len):
            why.append("no mask, or causal with q_len == kv_len only (is_causal)")
        if spec.dv != spec.head_dim:
            why.append("V's head dim must equal Q's")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        import jax
        import jax.numpy as jnp

        if not _ordering_holds():
            raise NotSupported("JAX's DLPack exchange did not order its kernels with the timed "
                               "stream here: its timing would not be the kernels'")
        implementation = self.implementation
        scale = spec.softmax_scale
        causal = spec.mask == "causal"

        @jax.jit
        def fn(q, k, v):
            t = lambda x: jnp.swapaxes(x, 1, 2)  # noqa: E731
            o = jax.nn.dot_product_attention(t(q), t(k), t(v), scale=scale, is_causal=causal,
                                             implementation=implementation)
            return jnp.swapaxes(o, 1, 2)

        run = _Run(fn, implementation)
        try:
            run.launch(io)  # compiles (prepare is not timed)
        except Exception as e:  # XLA refusing the shape (cuDNN's limits) is its answer here
            raise NotSupported(f"JAX: {str(e).splitlines()[0]}") from e
        return run


class JaxXla(JaxAttention):
    name = "py.jax.xla"
    description = "jax.nn.dot_product_attention, implementation='xla' (XLA's fusion), jitted"
    family = "naive"  # XLA's compilation of the recipe
    fused = False  # XLA may materialize the scores
    implementation = "xla"


class JaxCudnn(JaxAttention):
    name = "py.jax.cudnn"
    description = "jax.nn.dot_product_attention, implementation='cudnn' (cuDNN via XLA), jitted"
    family = "fused"
    fused = True
    implementation = "cudnn"


PROVIDERS = [JaxXla(), JaxCudnn()]
