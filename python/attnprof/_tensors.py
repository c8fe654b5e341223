"""Framework views of the harness's tensors: zero-copy, in the logical (B, H, S, D) order, except
a paged K and V, which are their container of pages (provider.py Io)."""
from __future__ import annotations

import ctypes

from ._abi import DTYPES, LAYOUTS, ROLES, IoStruct, Tensor
from .provider import Io


def _pages_per_seq(t: Tensor) -> int:
    """Pages of each sequence of a paged tensor: ceil(len / page_size) (io.hpp TensorView)."""
    return -(-t.len // t.page_size)


def _shape_strides(t: Tensor, role: str):
    b, h, s, d = t.batch, t.heads, t.len, t.dim
    if role == "lse":  # (B, H, S) fp32, always bhsd
        return (b, h, s), (h * s, s, 1)
    if role == "sink":  # one fp32 logit per query head
        return (h,), (1,)
    bhsd = LAYOUTS[t.layout] == "bhsd"
    if t.page_size > 0:  # the container of pages: each (H, P, D) for bhsd, (P, H, D) for bshd
        n, p = t.batch * _pages_per_seq(t), t.page_size
        if bhsd:
            return (n, h, p, d), (h * p * d, p * d, d, 1)
        return (n, p, h, d), (p * h * d, h * d, d, 1)
    if bhsd:
        return (b, h, s, d), (h * s * d, s * d, d, 1)
    return (b, h, s, d), (s * h * d, d, h * d, 1)


class _CudaArray:
    """A raw device allocation, described by __cuda_array_interface__ (torch.as_tensor wraps it
    without a copy). 16-bit types travel as int16 and fp8 as uint8, reinterpreted by the caller."""

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
            count = 1
            for n in shape:
                count *= n
            yield role, t, shape, strides, count


def _extras(io: IoStruct):
    """The block table (pointer, pages per sequence, page size) of a paged K/V, the lengths'
    pointers and batch, and every present tensor's scale."""
    k, v = io.t[ROLES.index("k")], io.t[ROLES.index("v")]
    table = None
    if k.data and k.page_size > 0:
        if (v.data and (v.page_size != k.page_size or v.block_table != k.block_table)):
            raise RuntimeError("K and V of a set are paged differently: the harness shares one "
                               "block table (io.hpp)")
        table = (k.block_table, _pages_per_seq(k), k.page_size)
    batch = io.t[ROLES.index("q")].batch
    scales = {role: float(io.t[i].scale) for i, role in enumerate(ROLES) if io.t[i].data}
    return table, batch, scales


def _io(io: IoStruct, out: dict, ints) -> Io:
    """The set's Io: its tensors `out`, and the block table and ragged lengths as the framework's
    int32 arrays (`ints(pointer, count)`)."""
    table, batch, scales = _extras(io)
    if table is not None:
        pointer, per_seq, out["page_size"] = table
        out["block_table"] = ints(pointer, batch * per_seq).reshape(batch, per_seq)
    if io.seq_q:
        out["seq_q"], out["seq_kv"] = ints(io.seq_q, batch), ints(io.seq_kv, batch)
    return Io(scales=scales, **out)


def torch_views(io: IoStruct, device: str) -> Io:
    import torch

    def ints(pointer, count):
        if device == "cuda":
            return torch.as_tensor(_CudaArray(pointer, count, "<i4"), device="cuda")
        return torch.frombuffer((ctypes.c_int32 * count).from_address(pointer), dtype=torch.int32)

    out = {}
    for role, t, shape, strides, count in _present(io):
        dtype = DTYPES[t.dtype]
        if device == "cuda":
            typestr = {"fp32": "<f4", "fp16": "<i2", "bf16": "<i2"}.get(dtype, "|u1")
            flat = torch.as_tensor(_CudaArray(t.data, count, typestr), device="cuda")
            if dtype != "fp32":
                flat = flat.view({"fp16": torch.float16, "bf16": torch.bfloat16,
                                  "fp8_e4m3": getattr(torch, "float8_e4m3fn", torch.uint8),
                                  "fp8_e5m2": getattr(torch, "float8_e5m2", torch.uint8)}[dtype])
        else:  # host tensors store float32
            buffer = (ctypes.c_float * count).from_address(t.data)
            flat = torch.frombuffer(buffer, dtype=torch.float32)
        out[role] = flat.as_strided(shape, strides)
    return _io(io, out, ints)


def numpy_views(io: IoStruct) -> Io:
    import numpy as np

    def ints(pointer, count):
        a = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_int32)), (count,))
        a.flags.writeable = False  # shared by every copy of the point's inputs
        return a

    out = {}
    for role, t, shape, strides, count in _present(io):
        flat = np.ctypeslib.as_array(ctypes.cast(t.data, ctypes.POINTER(ctypes.c_float)), (count,))
        out[role] = np.lib.stride_tricks.as_strided(flat, shape, tuple(4 * s for s in strides))
    return _io(io, out, ints)
