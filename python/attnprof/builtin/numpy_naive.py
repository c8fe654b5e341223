"""py.numpy.naive: the naive recipe in numpy on the CPU (float32 scores, softmax, PV). The Python
worker's CPU provider: runs wherever numpy imports, CI included."""
from __future__ import annotations

from ..masks import numpy_mask
from ..provider import Provider, Run


class _Run(Run):
    def __init__(self, spec):
        self.spec = spec
        self.mask = numpy_mask(spec)

    def launch(self, io):
        import numpy as np

        s = self.spec
        k, v = io.k, io.v
        if s.group_size > 1:
            k = np.repeat(k, s.group_size, axis=1)
            v = np.repeat(v, s.group_size, axis=1)
        scores = np.matmul(io.q, k.transpose(0, 1, 3, 2)) * np.float32(s.softmax_scale)
        if s.softcap > 0:
            cap = np.float32(s.softcap)
            scores = cap * np.tanh(scores / cap)
        if self.mask is not None:
            scores = np.where(self.mask, scores, np.float32(-np.inf))
        top = scores.max(axis=-1, keepdims=True)
        sink = None
        if s.sinks:  # each head's sink logit joins the max and the sum, with no value row
            sink = io.sink.astype(np.float32).reshape(1, -1, 1, 1)
            top = np.maximum(top, sink)
        top = np.where(np.isfinite(top), top, np.float32(0))
        p = np.exp(scores - top)
        total = p.sum(axis=-1, keepdims=True)
        if sink is not None:
            total = total + np.exp(sink - top)
        return {"o": np.matmul(p, v) / np.where(total > 0, total, np.float32(1))}


class NumpyNaive(Provider):
    name = "py.numpy.naive"
    description = "naive attention in numpy (float32 scores materialized, softmax, PV) on the CPU"
    device = "cpu"
    family = "naive"
    fused = False
    library = "numpy"
    framework = "numpy"
    requires = ("numpy",)
    softcap = True
    sinks = True

    def workspace_estimate(self, spec):
        return 3 * 4 * spec.batch * spec.q_heads * spec.q_len * spec.kv_len

    def prepare(self, spec, io):
        return _Run(spec)


PROVIDERS = [NumpyNaive()]
