"""py.torch.mha: torch.nn.MultiheadAttention's forward as models call it, projections included.
Its four projections get identity weights and zero biases, so its output is attention of the
point's Q, K and V (verified against fp64) while the projection GEMMs still run and are timed:
the row prices what a module-level caller pays. Inputs go in as (batch, seq, embed); for a bhsd
point they are rearranged once per tensor set when bound (untimed)."""
from __future__ import annotations

from ..masks import torch_mask
from ..provider import Provider, Run


class _Run(Run):
    def __init__(self, module, spec, mask):
        self.module, self.spec, self.mask = module, spec, mask
        self.inputs = {}

    def _embed(self, io):
        key = io.q.data_ptr()
        if key not in self.inputs:
            b, h, n, d = io.q.shape
            self.inputs[key] = [t.transpose(1, 2).reshape(b, t.shape[2], h * d)
                                for t in (io.q, io.k, io.v)]
        return self.inputs[key]

    def launch(self, io):
        import torch

        x_q, x_k, x_v = self._embed(io)
        with torch.inference_mode():
            out, _ = self.module(x_q, x_k, x_v, attn_mask=self.mask, need_weights=False,
                                 is_causal=self.spec.mask == "causal")
        b, h, n, d = io.q.shape
        return {"o": out.reshape(b, n, h, d).transpose(1, 2)}

    def note(self):
        return "nn.MultiheadAttention forward: identity in/out projections included in the time"


class TorchMha(Provider):
    name = "py.torch.mha"
    description = "torch.nn.MultiheadAttention forward (identity projections, timed with them)"
    device = "cuda"
    family = "dispatcher"
    fused = False
    library = "PyTorch"
    requires = ("torch",)

    def supports(self, spec):
        why = []
        if spec.kv_heads != spec.q_heads:
            why.append("no grouped K/V heads")
        if spec.dv != spec.head_dim:
            why.append("V's head dim must equal Q's")
        if spec.scale > 0:
            why.append("the scale is 1/sqrt(head_dim) only")
        if spec.mask_kind != "none" and spec.mask != "causal":
            why.append("masks: none and causal only")
        if spec.dtype == "fp32":
            why.append("fp16 and bf16 only here")
        return "; ".join(why) or None

    def workspace_estimate(self, spec):
        size = 2 * spec.batch * spec.q_len * spec.q_heads * spec.head_dim
        return 4 * (3 * size)  # the embedded inputs and the projections' outputs

    def prepare(self, spec, io):
        import torch

        embed = spec.q_heads * spec.head_dim
        module = torch.nn.MultiheadAttention(embed, spec.q_heads, batch_first=True, bias=True,
                                             device=io.q.device, dtype=io.q.dtype)
        with torch.no_grad():
            eye = torch.eye(embed, device=io.q.device, dtype=io.q.dtype)
            module.in_proj_weight.copy_(torch.cat([eye, eye, eye]))
            module.in_proj_bias.zero_()
            module.out_proj.weight.copy_(eye)
            module.out_proj.bias.zero_()
        module.eval()
        mask = None
        if spec.mask == "causal":
            mask = ~torch_mask(spec, io.q.device)  # MultiheadAttention: True = not allowed
        return _Run(module, spec, mask)


PROVIDERS = [TorchMha()]
