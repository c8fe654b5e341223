"""py.numpy.naive: the naive recipe in numpy on the CPU (float32 scores, softmax, PV). The Python
worker's CPU provider: runs wherever numpy imports, CI included."""
from __future__ import annotations

from dataclasses import replace

from ..masks import numpy_mask
from ..provider import Provider, Run


def _attend(s, mask, q, k, v, sink):
    """O of (B, Hq, Sq, D) queries against (B, Hkv, Sk, D) keys and values under spec `s`."""
    import numpy as np

    if s.group_size > 1:
        k = np.repeat(k, s.group_size, axis=1)
        v = np.repeat(v, s.group_size, axis=1)
    scores = np.matmul(q, k.transpose(0, 1, 3, 2)) * np.float32(s.softmax_scale)
    if s.softcap > 0:
        cap = np.float32(s.softcap)
        scores = cap * np.tanh(scores / cap)
    if mask is not None:
        scores = np.where(mask, scores, np.float32(-np.inf))
    top = scores.max(axis=-1, keepdims=True)
    if sink is not None:  # each head's sink logit joins the max and the sum, with no value row
        top = np.maximum(top, sink)
    top = np.where(np.isfinite(top), top, np.float32(0))
    p = np.exp(scores - top)
    total = p.sum(axis=-1, keepdims=True)
    if sink is not None:
        total = total + np.exp(sink - top)
    return np.matmul(p, v) / np.where(total > 0, total, np.float32(1))


def _keys(io, t, b, count, layout):
    """The first `count` rows of sequence b of K or V (io.k, io.v) as (1, H, count, D): a slice
    of a contiguous tensor, or its pages gathered through io.block_table (provider.py Io)."""
    if not io.paged:
        return t[b:b + 1, :, :count]
    pages = t[io.block_table[b]]  # (pages_per_seq, H, P, D) for bhsd, (pages_per_seq, P, H, D)
    heads, dim = (pages.shape[1], pages.shape[3]) if layout == "bhsd" else pages.shape[2:]
    if layout == "bhsd":
        rows = pages.transpose(1, 0, 2, 3).reshape(heads, -1, dim)
    else:
        rows = pages.reshape(-1, heads, dim).transpose(1, 0, 2)
    return rows[None, :, :count]


class _Run(Run):
    def __init__(self, spec):
        self.spec = spec
        self.mask = numpy_mask(spec)

    def launch(self, io):
        import numpy as np

        s = self.spec
        sink = io.sink.astype(np.float32).reshape(1, -1, 1, 1) if s.sinks else None
        if io.seq_q is None and not io.paged:
            return {"o": _attend(s, self.mask, io.q, io.k, io.v, sink)}
        # Sequence by sequence: a ragged batch's own lengths (rows past seq_q[b] are padding that
        # keeps what it holds; keys past seq_kv[b] are never read), a paged cache's pages.
        o = np.array(io.o)
        for b in range(s.batch):
            nq, nk = s.q_len, s.kv_len
            if io.seq_q is not None:
                nq, nk = int(io.seq_q[b]), int(io.seq_kv[b])
            if nq == 0:
                continue
            seq = replace(s, batch=1, q_len=nq, kv_len=nk, seqlens="")
            k = _keys(io, io.k, b, nk, s.layout)
            v = _keys(io, io.v, b, nk, s.layout)
            o[b:b + 1, :, :nq] = _attend(seq, numpy_mask(seq), io.q[b:b + 1, :, :nq], k, v, sink)
        return {"o": o}


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
    paged_kv = True  # reads K and V through io.block_table
    ragged = True  # each sequence at its own lengths (io.seq_q, io.seq_kv)

    def workspace_estimate(self, spec):
        return 3 * 4 * spec.batch * spec.q_heads * spec.q_len * spec.kv_len

    def prepare(self, spec, io):
        return _Run(spec)


PROVIDERS = [NumpyNaive()]
