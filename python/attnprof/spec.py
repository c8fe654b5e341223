"""The problem one point poses, as the C++ instrument sends it (docs/results.md, "spec")."""
from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, fields


_CASTS = {"int": int, "float": float, "bool": bool, "str": str}


def _typed(f, j: dict):
    return _CASTS[f.type if isinstance(f.type, str) else f.type.__name__](j[f.name])


@dataclass(frozen=True)
class Spec:
    """One field per JSON field of the C++ axis table (include/attnprof/axes.hpp); a C++ test
    (Axes.ThePythonSpecHasEveryField) fails when an axis is added there and not here."""
    batch: int
    q_heads: int
    kv_heads: int
    q_len: int
    kv_len: int
    head_dim: int
    v_head_dim: int  # 0: same as head_dim
    dtype: str  # fp32, fp16, bf16, fp8_e4m3, fp8_e5m2
    mask: str  # none, causal, causal-br, window:W
    mode: str  # fwd, bwd, fwd_bwd
    layout: str  # bhsd, bshd
    scale: float  # 0: 1/sqrt(head_dim)
    page_size: int = 0  # paged K/V (keys per page); 0: contiguous. Io.block_table maps the pages
    softcap: float = 0.0  # logit softcap C: scaled scores become C * tanh(s / C); 0: none
    sinks: bool = False  # a learned sink logit per query head joins each row's softmax (io.sink)
    shared_latent: bool = False  # V is K's first Dv columns (absorbed MLA decode)
    seqlens: str = ""  # a ragged batch's key counts (uniform:A:B, zipf:A:B[:S], L1/L2/...); "": none

    @staticmethod
    def from_json(j: dict) -> "Spec":
        """The spec as the instrument writes it: fields at their defaults may be absent."""
        values = {}
        for f in fields(Spec):
            if f.name in j:
                values[f.name] = _typed(f, j)
            elif f.default is MISSING:
                raise KeyError(f"spec has no field '{f.name}'")
        return Spec(**values)

    @property
    def dv(self) -> int:
        return self.v_head_dim if self.v_head_dim > 0 else self.head_dim

    @property
    def softmax_scale(self) -> float:
        return self.scale if self.scale > 0 else 1.0 / math.sqrt(self.head_dim)

    @property
    def group_size(self) -> int:
        return self.q_heads // self.kv_heads

    @property
    def mask_kind(self) -> str:
        return self.mask.split(":", 1)[0]

    @property
    def window(self) -> int:
        return int(self.mask.split(":", 1)[1]) if self.mask_kind == "window" else 0

    def diagonal_offset(self) -> int:
        """Key j is visible to query i iff j <= i + offset (and, for a window, j > i + offset - W)."""
        return 0 if self.mask_kind == "causal" else self.kv_len - self.q_len

    def visible(self, i: int, j: int) -> bool:
        """The definition every provider is checked against (src/core/spec.cpp, Mask::visible)."""
        if j < 0 or j >= self.kv_len:
            return False
        if self.mask_kind == "none":
            return True
        off = self.diagonal_offset()
        if j > i + off:
            return False
        return not (self.mask_kind == "window" and j <= i + off - self.window)
