"""py.jax.xla.cpu: `jax.nn.dot_product_attention(implementation="xla")` on JAX's CPU backend,
jitted in prepare. (py.jax.xla, jax_dpa.py, is the same call on the GPU.)

The harness's host tensors are copied into JAX arrays in the launch (timed: Q, K and V). What the
copy costs (bench/jax_input_copy.py, results in bench/results/cpu/2026-12-07-jax-copy): at B 1, H 8,
D 64 on the 2-core VM, 0.48 ms against 4.4 ms of attention at N 256 (10% of the row), 1.5% at N
1024, 0.6% at N 4096; one `jnp.array(copy=True)` instead took 0.35, 1.9 and 6.6 ms: no saving that
holds at every N. Handing them over without a copy (DLPack, which XLA's CPU client aliases when they
are 64-byte aligned) made the worker die of a segfault in one of XLA's threads at 1 to 3 of
cpu-small's 15 points in each of three runs (jaxlib 0.10.2, 2026-12-06, with XLA's Eigen pool on one
thread too); with the copy, none in two runs of the same 15 points. GQA is JAX's own (K/V heads
divide Q heads), masks are its `is_causal` (top-left) or a boolean mask. fp32 only: with bf16 (a
cast inside the jitted function) the worker died of a segfault in one of XLA's threads about once in
30 points under the harness with jaxlib 0.10.2 (not reproduced in a plain loop of the same call), so
bf16 is refused with that reason. The launch waits for the result (JAX dispatches asynchronously);
its output is copied into the harness's O after the timed launches (untimed)."""
from __future__ import annotations

from ..masks import has_empty_rows, numpy_mask
from ..provider import Provider, Run


class _Run(Run):
    def __init__(self, fn, spec):
        self.fn, self.spec = fn, spec

    def _inputs(self, io):
        import jax.numpy as jnp
        import numpy as np

        s = self.spec
        # bshd storage is JAX's own (B, S, H, D) order: copied as it lies; bhsd is swapped inside
        # the jitted function.
        order = (0, 2, 1, 3) if s.layout == "bshd" else (0, 1, 2, 3)
        return [jnp.asarray(np.array(io[r].transpose(order))) for r in ("q", "k", "v")]

    def launch(self, io):
        import numpy as np

        out = self.fn(*self._inputs(io))
        out.block_until_ready()  # JAX dispatches asynchronously: the launch ends with the work
        o = np.asarray(out)  # JAX's buffer, (B, S, H, Dv): copied into the harness's O untimed
        return {"o": o.transpose(0, 2, 1, 3)}

    def note(self):
        s = self.spec
        copies = ("inputs copied into JAX arrays inside the timed launch (aliasing the harness's "
                  "memory crashed XLA's CPU runtime)")
        mask = {"none": "no mask", "causal": "is_causal"}.get(s.mask, "a boolean mask")
        return (f"jax.nn.dot_product_attention(implementation='xla') on JAX's CPU backend, "
                f"jitted; {mask}; {copies}; O copied into the harness's tensor untimed")


class JaxXlaCpu(Provider):
    name = "py.jax.xla.cpu"
    description = "jax.nn.dot_product_attention, implementation='xla', jitted, on JAX's CPU backend"
    device = "cpu"
    family = "naive"  # XLA's compilation of the recipe
    fused = False  # XLA materializes the scores
    library = "JAX"
    framework = "numpy"
    requires = ("jax", "jaxlib")

    def library_version(self):
        from importlib import metadata

        return metadata.version("jax")

    def supports(self, spec):
        why = []
        if spec.dtype != "fp32":
            why.append(f"{spec.dtype}: fp32 only here (bf16 crashed XLA's CPU backend in the "
                       f"worker now and then, jaxlib 0.10.2)")
        if has_empty_rows(spec):
            why.append("queries that see no key (XLA's softmax averages them instead of zeros)")
        return "; ".join(why) or None

    def workspace_estimate(self, spec):
        # The scores and probabilities, fp32, and a copy of each input and of O.
        elems = (spec.q_heads * spec.q_len * (spec.head_dim + spec.dv)
                 + spec.kv_heads * spec.kv_len * (spec.head_dim + spec.dv))
        return 4 * spec.batch * (2 * spec.q_heads * spec.q_len * spec.kv_len + elems)

    def prepare(self, spec, io):
        import jax
        import jax.numpy as jnp

        bhsd = spec.layout == "bhsd"
        causal = spec.mask == "causal"
        mask = None if causal else numpy_mask(spec)
        scale = spec.softmax_scale

        @jax.jit
        def fn(q, k, v):
            t = (lambda x: jnp.swapaxes(x, 1, 2)) if bhsd else (lambda x: x)
            o = jax.nn.dot_product_attention(
                t(q), t(k), t(v), scale=scale, is_causal=causal,
                mask=None if mask is None else jnp.asarray(mask)[None, None],
                implementation="xla")
            return o

        run = _Run(fn, spec)
        run.launch(io)  # compiles (prepare is not timed)
        return run


PROVIDERS = [JaxXlaCpu()]
