"""py.sage: SageAttention 1.0 (`sageattention.sageattn`, pure Triton): Q and K quantized to INT8
per block, Q K^T in INT8, P V in fp16; the seed's "quantization impact" question, its error
against fp64 in every row beside its speed.

Its rows are judged against the bound it declares (output_tolerance, said in each row's verify
detail), not the dtype's: INT8 scores are off by ~1/127 of each block's largest |q|·|k|.
sageattn smooths K by subtracting its mean over the sequence *in place* (`k -= km`), which would
change the harness's inputs; here the same smoothing is done on a copy inside the launch (timed,
as sageattn times it) and sageattn is called with smooth_k=False. The softmax is unchanged by it
(a shift of every score of a row by q·km)."""
from __future__ import annotations

from ..provider import Provider, Run


class _Run(Run):
    def __init__(self, spec):
        self.spec = spec

    def launch(self, io):
        from sageattention import sageattn

        k = io.k - io.k.mean(dim=2, keepdim=True)  # smoothing, on a copy
        return {"o": sageattn(io.q, k, io.v, tensor_layout="HND",
                              is_causal=self.spec.mask == "causal",
                              sm_scale=self.spec.softmax_scale, smooth_k=False)}

    def note(self):
        return ("SageAttention 1.0: INT8 Q K^T per block, fp16 P V; K smoothed (mean over the "
                "sequence subtracted) on a copy in the launch")


class Sage(Provider):
    name = "py.sage"
    description = "SageAttention 1.0 (Triton): INT8 Q K^T per block, fp16 P V"
    device = "cuda"
    family = "fused"
    fused = True
    library = "SageAttention"
    requires = ("sageattention", "triton", "torch")
    quantization = "int8 Q K^T per block (K smoothed), fp16 P V"
    output_tolerance = 0.05

    def library_version(self):
        from importlib import metadata

        try:
            return metadata.version("sageattention")
        except metadata.PackageNotFoundError:
            return ""

    def supports(self, spec):
        why = []
        if spec.dtype == "fp32":
            why.append("fp16 and bf16 only")
        if spec.head_dim not in (64, 96, 128) or spec.dv != spec.head_dim:
            why.append("head dims 64, 96 and 128 only, V's as Q's")
        if spec.mask_kind not in ("none", "causal") or (spec.mask == "causal"
                                                         and spec.q_len != spec.kv_len):
            why.append("no mask, or causal with q_len == kv_len only")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        return _Run(spec)


PROVIDERS = [Sage()]
