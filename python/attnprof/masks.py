"""The mask of a spec as a boolean (q_len, kv_len) matrix: True where key j is visible to query
i (Spec.visible, the definition every provider is checked against)."""
from __future__ import annotations

from .spec import Spec


def _visible(spec: Spec, i, j):
    off = spec.diagonal_offset()
    keep = j <= i + off
    if spec.mask_kind == "window":
        keep = keep & (j > i + off - spec.window)
    return keep


def numpy_mask(spec: Spec):
    """None when nothing is hidden."""
    import numpy as np

    if spec.mask_kind == "none":
        return None
    return _visible(spec, np.arange(spec.q_len)[:, None], np.arange(spec.kv_len)[None, :])


def torch_mask(spec: Spec, device):
    import torch

    if spec.mask_kind == "none":
        return None
    i = torch.arange(spec.q_len, device=device)[:, None]
    j = torch.arange(spec.kv_len, device=device)[None, :]
    return _visible(spec, i, j)


def has_empty_rows(spec: Spec) -> bool:
    """Whether some query sees no key (a bottom-right mask with more queries than keys)."""
    return spec.mask_kind != "none" and spec.diagonal_offset() < 0
