"""py.torch.sdpa: torch.nn.functional.scaled_dot_product_attention called from Python, PyTorch's
own dispatch choosing the backend. The same kernels as the LibTorch provider torch.sdpa.default:
run both in one call to see the Python worker measure what the C++ worker measures."""
from __future__ import annotations

from ..masks import has_empty_rows, torch_mask
from ..provider import Provider, Run


class _Run(Run):
    def __init__(self, spec, mask):
        self.spec, self.mask = spec, mask

    def launch(self, io):
        import torch.nn.functional as F

        s = self.spec
        return {"o": F.scaled_dot_product_attention(
            io.q, io.k, io.v, attn_mask=self.mask, is_causal=s.mask == "causal",
            scale=s.softmax_scale, enable_gqa=s.group_size > 1)}


class TorchSdpa(Provider):
    name = "py.torch.sdpa"
    description = "torch.nn.functional.scaled_dot_product_attention from Python (PyTorch's dispatch)"
    device = "cuda"
    family = "dispatcher"
    fused = False  # its math backend materializes the scores
    library = "PyTorch"
    requires = ("torch",)

    def supports(self, spec):
        if spec.dtype == "fp32":
            return "fp16 and bf16 only here (fp32 runs the math backend)"
        if has_empty_rows(spec):
            return "queries that see no key (SDPA returns NaN rows)"
        return None

    def prepare(self, spec, io):
        mask = None if spec.mask_kind in ("none", "causal") else torch_mask(spec, io.q.device)
        return _Run(spec, mask)


PROVIDERS = [TorchSdpa()]
