"""Framework views of the harness's tensors: zero-copy, in the logical (B, H, S, D) order."""
from __future__ import annotations

import ctypes

from ._abi import DTYPES, LAYOUTS, ROLES, IoStruct, Tensor
from .provider import Io


def _shape_strides(t: Tensor, role: str):
    b, h, s, d = t.batch, t.heads, t.len, t.dim
    if role == "lse":  # (B, H, S) fp32, always bhsd
        return (b, h, s), (h * s, s, 1)
    if role == "sink":  # one fp32 logit per query head
        return (h,), (1,)
    if LAYOUTS[t.layout] == "bhsd":
        return (b, h, s, d), (h * s * d, s * d, d, 1)
    return (b, h, s, d), (s * h * d, d, h * d, 1)


class _CudaArray:
    """A raw device allocation, described by __cuda_array_interface__ (torch.as_tensor wraps it
    without a copy). 16-bit types travel as int16 and are reinterpreted by the caller."""

    def __init__(self, pointer: int, count: int, typestr: str):
        self.__cuda_array_interface__ = {
            "shape": (count,),
            "typestr": typestr,
            "data": (pointer, False),
            "version": 2,
        }


def _present(io: IoStruct):
    """(role, tensor, shape, strides, element count) of every tensor the set has."""
    for i, role in enumerate(ROLES):
        t = io.t[i]
        if t.data:
            shape, strides = _shape_strides(t, role)
            yield role, t, shape, strides, t.batch * t.heads * t.len * t.dim


def torch_views(io: IoStruct, device: str) -> Io:
    import torch

    out = {}
    for role, t, shape, strides, count in _present(io):
        dtype = DTYPES[t.dtype]
        if device == "cuda":
            typestr = "<f4" if dtype == "fp32" else "<i2"
            flat = torch.as_tensor(_CudaArray(t.data, count, typestr), device="cuda")
            if dtype == "fp16":
                flat = flat.view(torch.float16)
            elif dtype == "bf16":
                flat = flat.view(torch.bfloat16)
        else:  # host tensors store float32
            buffer = (ctypes.c_float * count).from_address(t.data)
            flat = torch.frombuffer(buffer, dtype=torch.float32)
        out[role] = flat.as_strided(shape, strides)
    return Io(**out)


def numpy_views(io: IoStruct) -> Io:
    import numpy as np

    out = {}
    for role, t, shape, strides, count in _present(io):
        flat = np.ctypeslib.as_array(ctypes.cast(t.data, ctypes.POINTER(ctypes.c_float)), (count,))
        out[role] = np.lib.stride_tricks.as_strided(flat, shape, tuple(4 * s for s in strides))
    return Io(**out)
