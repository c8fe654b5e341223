"""py.torch.sdpa.flash: torch.nn.functional.scaled_dot_product_attention from Python with only
the FLASH_ATTENTION backend allowed: ATen's vendored FlashAttention-2 forward. The same kernel
as the LibTorch provider torch.sdpa.flash, reachable wherever PyTorch's Python package is (the
GPU machine's venv) without building LibTorch: the FA2 baseline cuda.flash is held against in
one call."""
from __future__ import annotations

from ..provider import Provider, Run


class _Run(Run):
    def __init__(self, spec):
        self.spec = spec

    def launch(self, io):
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        s = self.spec
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return {"o": F.scaled_dot_product_attention(
                io.q, io.k, io.v, is_causal=s.mask_kind != "none", scale=s.softmax_scale,
                enable_gqa=s.group_size > 1)}

    def note(self):
        return "sdpa_kernel(SDPBackend.FLASH_ATTENTION): ATen's FlashAttention-2"


class TorchSdpaFlash(Provider):
    name = "py.torch.sdpa.flash"
    description = ("scaled_dot_product_attention from Python, FLASH_ATTENTION backend only "
                   "(ATen's FlashAttention-2)")
    device = "cuda"
    family = "fused"
    fused = True
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
        return _Run(spec)


PROVIDERS = [TorchSdpaFlash()]
