"""py.flex: FlexAttention (torch.nn.attention.flex_attention), compiled, with block masks for
causal, causal-br and window and a score_mod for the logit softcap: the kernel PyTorch users
write custom masks and score modifiers with. Compilation and the block mask are built in prepare
(prepare_s)."""
from __future__ import annotations

from ..masks import has_empty_rows
from ..provider import Provider, Run


class _Run(Run):
    def __init__(self, fn, spec, block_mask, score_mod):
        self.fn, self.spec, self.block_mask, self.score_mod = fn, spec, block_mask, score_mod

    def launch(self, io):
        s = self.spec
        return {"o": self.fn(io.q, io.k, io.v, score_mod=self.score_mod,
                             block_mask=self.block_mask, scale=s.softmax_scale,
                             enable_gqa=s.group_size > 1)}

    def note(self):
        return ("torch.compile(flex_attention)" +
                (" with a block mask" if self.block_mask else "") +
                (f", softcap {self.spec.softcap:g} as a score_mod" if self.score_mod else ""))


class Flex(Provider):
    name = "py.flex"
    description = "FlexAttention (compiled Triton kernel of torch.nn.attention.flex_attention)"
    device = "cuda"
    family = "fused"
    fused = True
    library = "PyTorch"
    requires = ("torch", "triton")
    softcap = True  # a score_mod on the scaled scores

    def supports(self, spec):
        why = []
        if spec.head_dim < 16 or spec.head_dim & (spec.head_dim - 1):
            why.append("head dims are powers of two from 16")
        if spec.dv != spec.head_dim:
            why.append("V's head dim must equal Q's here")
        if has_empty_rows(spec):
            why.append("queries that see no key")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        import torch
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        off = spec.diagonal_offset()
        window = spec.window
        block_mask = None
        if spec.mask_kind in ("causal", "causal-br"):
            def visible(b, h, q_idx, kv_idx):
                return kv_idx <= q_idx + off
            block_mask = create_block_mask(visible, None, None, spec.q_len, spec.kv_len,
                                           device=io.q.device)
        elif spec.mask_kind == "window":
            def visible(b, h, q_idx, kv_idx):
                return (kv_idx <= q_idx + off) & (kv_idx > q_idx + off - window)
            block_mask = create_block_mask(visible, None, None, spec.q_len, spec.kv_len,
                                           device=io.q.device)
        score_mod = None
        if spec.softcap > 0:
            cap = float(spec.softcap)

            def score_mod(score, b, h, q_idx, kv_idx):  # score: the scaled q . k
                return cap * torch.tanh(score / cap)
        torch._dynamo.reset()  # a fresh compilation per point (see torch_compile_naive.py)
        fn = torch.compile(flex_attention, dynamic=False)
        run = _Run(fn, spec, block_mask, score_mod)
        run.launch(io)  # compile and autotune here, untimed
        return run


PROVIDERS = [Flex()]
