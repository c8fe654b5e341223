"""py.triton.flash: a FlashAttention forward written here in Triton (the seeds' "Triton backend"):
one program per (query block, batch x head), an online softmax in base 2 over key blocks, GQA by
indexing the KV head, causal (top-left and bottom-right) by skipping the key blocks past the
diagonal and masking the one it crosses. Block sizes are autotuned in prepare (untimed)."""
from __future__ import annotations

from ..masks import has_empty_rows
from ..provider import Provider, Run

_kernel = None


def _build():
    """The kernel, defined once Triton is imported (in the worker, never in the catalog)."""
    import triton
    import triton.language as tl

    configs = [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
        for bm, bn, w, s in [(128, 64, 8, 3), (128, 128, 8, 3), (128, 64, 4, 4), (64, 64, 4, 4),
                             (128, 32, 4, 4)]
    ]

    @triton.autotune(configs=configs, key=["NQ", "NK", "D", "CAUSAL"])
    @triton.jit
    def forward(Q, K, V, O, sqb, sqh, sqs, skb, skh, sks, svb, svh, svs, sob, soh, sos,
                HQ, GROUP, NQ, NK, OFFSET, scale_log2,
                D: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
        block = tl.program_id(0)
        bh = tl.program_id(1)
        b = bh // HQ
        h = bh % HQ
        kvh = h // GROUP
        rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
        dims = tl.arange(0, D)
        q = tl.load(Q + b * sqb + h * sqh + rows[:, None] * sqs + dims[None, :],
                    mask=rows[:, None] < NQ, other=0.0)
        m = tl.full([BLOCK_M], float("-inf"), tl.float32)
        total = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, D], tl.float32)
        end = NK
        if CAUSAL:  # key j is visible to query i iff j <= i + OFFSET
            end = tl.minimum(NK, (block + 1) * BLOCK_M + OFFSET)
        k_base = K + b * skb + kvh * skh
        v_base = V + b * svb + kvh * svh
        for start in range(0, end, BLOCK_N):
            keys = start + tl.arange(0, BLOCK_N)
            k = tl.load(k_base + keys[None, :] * sks + dims[:, None], mask=keys[None, :] < NK,
                        other=0.0)
            s = tl.dot(q, k) * scale_log2
            visible = keys[None, :] < NK
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None] + OFFSET)
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # rows that saw no key yet
            p = tl.exp2(s - m_safe[:, None])
            alpha = tl.exp2(m - m_safe)
            total = total * alpha + tl.sum(p, 1)
            v = tl.load(v_base + keys[:, None] * svs + dims[None, :], mask=keys[:, None] < NK,
                        other=0.0)
            acc = acc * alpha[:, None]
            acc = tl.dot(p.to(v.dtype), v, acc)
            m = m_new
        acc = acc / tl.where(total > 0, total, 1.0)[:, None]  # a row that sees no key: zeros
        tl.store(O + b * sob + h * soh + rows[:, None] * sos + dims[None, :],
                 acc.to(O.dtype.element_ty), mask=rows[:, None] < NQ)

    return forward


class _Run(Run):
    def __init__(self, spec):
        self.spec = spec

    def launch(self, io):
        import math

        import triton

        s = self.spec
        q, k, v, o = io.q, io.k, io.v, io.o
        causal = s.mask_kind in ("causal", "causal-br")

        def grid(meta):
            return (triton.cdiv(s.q_len, meta["BLOCK_M"]), s.batch * s.q_heads)

        _kernel[grid](q, k, v, o, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3],
                      *o.stride()[:3], s.q_heads, s.group_size, s.q_len, s.kv_len,
                      s.diagonal_offset(), s.softmax_scale * (1 / math.log(2)), D=s.head_dim,
                      CAUSAL=causal)
        return None  # written into the harness's O

    def note(self):
        best = getattr(_kernel, "best_config", None)
        return f"Triton {best}" if best is not None else ""


class TritonFlash(Provider):
    name = "py.triton.flash"
    description = ("FlashAttention forward written in Triton here (online softmax, GQA, causal "
                   "block skipping; autotuned block sizes)")
    device = "cuda"
    family = "fused"
    fused = True
    library = "Triton"
    requires = ("torch", "triton")
    count_prepare_memory = False  # the autotuner's benchmark buffers are not the kernel's

    def supports(self, spec):
        why = []
        if spec.dtype not in ("fp16", "bf16"):
            why.append("fp16 and bf16 only")
        if spec.head_dim not in (16, 32, 64, 128, 256):
            why.append("head dims 16, 32, 64, 128 and 256")
        if spec.dv != spec.head_dim:
            why.append("V's head dim must equal Q's")
        if spec.mask_kind == "window":
            why.append("no sliding window")
        if has_empty_rows(spec):
            why.append("queries that see no key")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        global _kernel
        if _kernel is None:
            _kernel = _build()
        run = _Run(spec)
        run.launch(io)  # autotune and compile here, untimed
        return run


PROVIDERS = [TritonFlash()]
