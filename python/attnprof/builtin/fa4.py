"""py.fa4: FlashAttention-4 (the flash-attn-4 package, `flash_attn.cute`): FlashAttention written
in NVIDIA's CuTe DSL, JIT-compiled per configuration; Hopper (sm_90) and Blackwell kernels.

Q, K, V and O are the harness's bshd tensors as FlashAttention's (batch, seq, heads, dim), no
copy, so bhsd points are refused (FlashAttention would copy them to contiguous first, inside the
timed call). The output is written into the harness's O through `out=` of
`flash_attn.cute.interface._flash_attn_fwd`, the function `flash_attn_func` calls (its public
signature takes no `out`); no LSE. FlashAttention's causal mask and window are bottom-right
aligned; a window of W keys is window_size (W - 1, 0); the softcap is `softcap`; the sink logits
are `learnable_sink`. The first call of a configuration compiles its kernel (seconds): made in
prepare, so it lands in prepare_s; the compiled kernels stay in the worker's memory.

Modes bwd and fwd_bwd call `_flash_attn_bwd`, the function FlashAttnFunc.backward calls, with
the harness's dQ, dK and dV as its `dq=`, `dk=`, `dv=` (no copy) and the O and log-sum-exp of
its own forward (`return_lse=True`): mode bwd times the backward alone, from a forward run once
in prepare (every set of the point's tensors holds the same inputs, so one forward serves them
all); fwd_bwd times the forward into the harness's O and the backward from it."""
from __future__ import annotations

from ..provider import NotSupported, Provider, Run


def _window(spec):
    """(causal, window_size) in FlashAttention's terms; None when it has no such mask."""
    kind = spec.mask_kind
    if kind == "none":
        return False, (None, None)
    if kind == "causal" and spec.q_len != spec.kv_len:
        return None  # top-left alignment; FlashAttention aligns bottom-right
    if kind == "window":
        return False, (spec.window - 1, 0)
    return True, (None, None)


def _seq_major(t):
    """A bshd tensor (logical (B, H, S, D)) as FlashAttention's (B, S, H, D), no copy."""
    return t.transpose(1, 2)


class _Run(Run):
    def __init__(self, spec, io):
        import torch

        major = torch.cuda.get_device_capability(io.q.device)[0]
        if major not in (9, 10, 11):
            raise NotSupported("FlashAttention-4's kernels are for Hopper (sm_90) and "
                               f"Blackwell (sm_100/sm_110), not sm_{major}x")
        from flash_attn.cute.interface import _flash_attn_bwd, _flash_attn_fwd

        self.fwd, self.bwd, self.spec = _flash_attn_fwd, _flash_attn_bwd, spec
        self.causal, self.window = _window(spec)
        self.saved = None
        if spec.mode == "bwd":  # the forward the timed backward starts from, run once here
            self.saved = self.forward(io, torch.empty_like(_seq_major(io.q)[..., :spec.dv]))
        self.launch(io)  # compile this configuration's kernels here, untimed

    def forward(self, io, out):
        """FlashAttention's forward into `out` (seq-major); (out, lse) for a backward."""
        s = self.spec
        o, lse = self.fwd(_seq_major(io.q), _seq_major(io.k), _seq_major(io.v),
                          softmax_scale=s.softmax_scale, causal=self.causal,
                          window_size_left=self.window[0], window_size_right=self.window[1],
                          softcap=s.softcap if s.softcap > 0 else None,
                          learnable_sink=io.sink if s.sinks else None, out=out,
                          return_lse=s.mode != "fwd")[:2]
        return o, lse

    def backward(self, io, saved):
        s = self.spec
        out, lse = saved
        self.bwd(_seq_major(io.q), _seq_major(io.k), _seq_major(io.v), out,
                 _seq_major(io.d_o), lse, s.softmax_scale, self.causal,
                 s.softcap if s.softcap > 0 else 0.0,
                 window_size_left=self.window[0], window_size_right=self.window[1],
                 dq=_seq_major(io.dq), dk=_seq_major(io.dk), dv=_seq_major(io.dv),
                 learnable_sink=io.sink if s.sinks else None)

    def launch(self, io):
        mode = self.spec.mode
        if mode == "fwd":
            self.forward(io, _seq_major(io.o))
        elif mode == "bwd":
            self.backward(io, self.saved)
        else:
            self.backward(io, self.forward(io, _seq_major(io.o)))

    def note(self):
        views = "Q, K, V and O as (batch, seq, heads, dim) views of the bshd tensors"
        mode = self.spec.mode
        if mode == "fwd":
            return "flash_attn.cute.interface._flash_attn_fwd (what flash_attn_func calls) with out=; " + views
        return ("flash_attn.cute.interface._flash_attn_bwd (what FlashAttnFunc.backward calls) with "
                "dq=, dk=, dv=" + (", the backward alone (the forward run in prepare)"
                                  if mode == "bwd" else " after _flash_attn_fwd with out=")
                + "; " + views.replace("and O", "O and their gradients"))


class FlashAttention4(Provider):
    name = "py.fa4"
    description = ("FlashAttention-4's forward and backward (flash-attn-4, CuTe DSL kernels; bshd "
                   "layout; the backward not yet run on a GPU)")
    device = "cuda"
    family = "fused"
    fused = True
    backward = True
    library = "FlashAttention-4"
    softcap = True
    sinks = True  # learnable_sink: one natural-log logit per query head, as io.sink
    requires = ("torch",)

    def availability(self):
        import importlib.util

        reason = super().availability()
        # flash_attn alone may be the standalone FlashAttention-2 package: FA4 is its cute part.
        if not reason and (importlib.util.find_spec("flash_attn") is None
                           or importlib.util.find_spec("flash_attn.cute") is None):
            reason = "flash_attn.cute not importable"
        return (f"{reason} (pip install flash-attn-4; its CuTe DSL needs all of "
                "nvidia-cutlass-dsl, -libs-base, -libs-core and -libs-cu13)") if reason else None

    def library_version(self):
        from importlib import metadata

        try:
            return metadata.version("flash-attn-4")
        except metadata.PackageNotFoundError:
            return ""

    def fingerprint(self):
        out = super().fingerprint()
        from importlib import metadata

        for package in ("flash-attn-4", "nvidia-cutlass-dsl-libs-base"):
            try:
                out[package] = metadata.version(package)
            except metadata.PackageNotFoundError:
                pass
        return out

    def supports(self, spec):
        why = []
        if spec.dtype not in ("fp16", "bf16"):
            why.append("fp16 and bf16 only here")
        if spec.layout != "bshd":
            why.append("FlashAttention takes (batch, seq, heads, dim) tensors: --layout bshd")
        if not (8 <= spec.head_dim <= 256 and 8 <= spec.dv <= 256) or spec.head_dim % 8 or \
                spec.dv % 8:
            why.append("head dims from 8 to 256, multiples of 8 (Hopper's range)")
        if _window(spec) is None:
            why.append("FlashAttention's causal mask is bottom-right aligned: top-left only where "
                       "q_len == kv_len")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        return _Run(spec, io)


PROVIDERS = [FlashAttention4()]
