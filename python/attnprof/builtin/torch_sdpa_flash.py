"""py.torch.sdpa.flash: torch.nn.functional.scaled_dot_product_attention from Python with only
the FLASH_ATTENTION backend allowed: ATen's vendored FlashAttention-2. The same kernels as the
LibTorch provider torch.sdpa.flash, reachable wherever PyTorch's Python package is (the GPU
machine's venv) without building LibTorch: the FA2 baseline cuda.flash is held against in one
call.

Modes bwd and fwd_bwd call the two ATen operators autograd calls for SDPA's flash backend
(aten::_scaled_dot_product_flash_attention and its _backward): mode bwd times the backward
alone, from the O and log-sum-exp of a forward run once in prepare (every set of the point's
tensors holds the same inputs, so one forward serves them all)."""
from __future__ import annotations

from ..provider import Provider, Run


def _forward(io, spec):
    import torch

    return torch.ops.aten._scaled_dot_product_flash_attention(
        io.q, io.k, io.v, 0.0, spec.mask_kind != "none", False, scale=spec.softmax_scale)


class _Run(Run):
    def __init__(self, spec, saved=None):
        self.spec = spec
        self.saved = saved  # mode bwd: the forward's outputs

    def _backward(self, io, fwd):
        import torch

        out, lse, cum_q, cum_k, max_q, max_k, seed, offset, _ = fwd
        dq, dk, dv = torch.ops.aten._scaled_dot_product_flash_attention_backward(
            io.d_o, io.q, io.k, io.v, out, lse, cum_q, cum_k, max_q, max_k, 0.0,
            self.spec.mask_kind != "none", seed, offset, scale=self.spec.softmax_scale)
        return {"dq": dq, "dk": dk, "dv": dv}

    def launch(self, io):
        s = self.spec
        if s.mode == "bwd":
            return self._backward(io, self.saved)
        if s.mode == "fwd_bwd":
            fwd = _forward(io, s)
            return {"o": fwd[0], **self._backward(io, fwd)}
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return {"o": F.scaled_dot_product_attention(
                io.q, io.k, io.v, is_causal=s.mask_kind != "none", scale=s.softmax_scale,
                enable_gqa=s.group_size > 1)}

    def note(self):
        if self.spec.mode == "fwd":
            return "sdpa_kernel(SDPBackend.FLASH_ATTENTION): ATen's FlashAttention-2"
        return ("aten::_scaled_dot_product_flash_attention(_backward): ATen's FlashAttention-2"
                + (", the backward alone (the forward run in prepare)"
                   if self.spec.mode == "bwd" else ""))


class TorchSdpaFlash(Provider):
    name = "py.torch.sdpa.flash"
    description = ("scaled_dot_product_attention from Python, FLASH_ATTENTION backend only "
                   "(ATen's FlashAttention-2); its backward through the same ATen operators "
                   "autograd calls")
    device = "cuda"
    family = "fused"
    fused = True
    backward = True
    library = "PyTorch"
    requires = ("torch",)

    def supports(self, spec):
        why = []
        if spec.dtype not in ("fp16", "bf16"):
            why.append("FlashAttention-2 takes fp16 and bf16 only")
        if spec.dv != spec.head_dim or spec.head_dim % 8 or spec.head_dim > 256:
            why.append("head dims up to 256, multiples of 8, with Dv == D")
        if spec.mask_kind == "window":
            why.append("no window mask (SDPA's flash backend takes no attention mask)")
        elif spec.mask_kind == "causal-br" and spec.q_len != spec.kv_len:
            why.append("causal is top-left aligned: bottom-right only where q_len == kv_len")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        return _Run(spec, _forward(io, spec) if spec.mode == "bwd" else None)


PROVIDERS = [TorchSdpaFlash()]
