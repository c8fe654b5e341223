"""py.torch.sdpa.cpu: torch.nn.functional.scaled_dot_product_attention on the CPU, PyTorch's
dispatch choosing between its CPU flash kernel and its math backend (the row's note names the
one it chose, from torch._fused_sdp_choice on the point's tensors).

The harness's host tensors are wrapped without copies (torch.frombuffer; bshd ones as strided
views). bf16 and fp16 are casts inside the launch (timed; the host tensors hold the dtype's values
in fp32) and O comes back cast to fp32; SDPA has no `out=`, so O is copied into the harness's
tensor after the timed launches (untimed). Not installed in CI (PyTorch's PyPI wheel brings the
CUDA libraries, gigabytes): its tests skip where torch does not import."""
from __future__ import annotations

from ..masks import has_empty_rows, torch_mask
from ..provider import Provider, Run
from ._ort import resident_bytes


def _backend(q, k, v, mask, causal, scale, gqa):
    """The backend PyTorch's dispatch picks for these tensors, by name ("" when not told)."""
    import torch
    from torch.nn.attention import SDPBackend

    try:
        choice = torch._fused_sdp_choice(q, k, v, mask, 0.0, causal, scale=scale, enable_gqa=gqa)
        return SDPBackend(choice).name.lower()
    except Exception:  # a private function: its absence is no reason to fail the point
        return ""


class _Run(Run):
    def __init__(self, spec, mask, dtype, resident_before):
        self.spec, self.mask, self.dtype = spec, mask, dtype
        self.backend = ""
        self.resident_before, self.resident_after = resident_before, None

    def launch(self, io):
        import torch
        import torch.nn.functional as F

        s = self.spec
        q, k, v = (io[r].to(self.dtype) for r in ("q", "k", "v"))
        causal = s.mask == "causal"
        if not self.backend:
            self.backend = _backend(q, k, v, self.mask, causal, s.softmax_scale, s.group_size > 1)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask, is_causal=causal,
                                           scale=s.softmax_scale, enable_gqa=s.group_size > 1)
        if self.resident_after is None:
            self.resident_after = resident_bytes()
        return {"o": o.to(torch.float32)}

    def workspace_bytes(self):
        return max(0, (self.resident_after or self.resident_before) - self.resident_before)

    def note(self):
        cast = f"inputs cast to {self.spec.dtype} in the launch; " if self.spec.dtype != "fp32" else ""
        return (f"torch.nn.functional.scaled_dot_product_attention on the CPU, backend chosen: "
                f"{self.backend or 'not reported'}; {cast}O copied into the harness's tensor "
                f"untimed; PyTorch's memory counted as the growth of resident memory")


class TorchSdpaCpu(Provider):
    name = "py.torch.sdpa.cpu"
    description = ("torch.nn.functional.scaled_dot_product_attention on the CPU (PyTorch's "
                   "dispatch: its CPU flash kernel or math)")
    device = "cpu"
    family = "dispatcher"
    fused = False  # its math backend materializes the scores
    library = "PyTorch"
    framework = "torch"
    requires = ("torch",)

    def supports(self, spec):
        why = []
        if spec.dtype not in ("fp32", "bf16", "fp16"):
            why.append(f"{spec.dtype} (fp32, bf16 and fp16 here)")
        if has_empty_rows(spec):
            why.append("queries that see no key (SDPA returns NaN rows)")
        return "; ".join(why) or None

    def workspace_estimate(self, spec):
        return 4 * spec.batch * spec.q_heads * spec.q_len * spec.kv_len

    def prepare(self, spec, io):
        import torch

        if self.threads > 0:
            torch.set_num_threads(self.threads)
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[spec.dtype]
        mask = None if spec.mask_kind in ("none", "causal") else torch_mask(spec, "cpu")
        return _Run(spec, mask, dtype, resident_bytes())


PROVIDERS = [TorchSdpaCpu()]
