"""The C ABI between libattnprof_py.so and the Python worker (src/python/c_api.h, its twin).

The library serves the worker protocol and owns engines, tensors, timing and verification; it
calls back into Python through one function for every provider operation."""
from __future__ import annotations

import ctypes

from .provider import Io

ABI_VERSION = 3

ROLES = Io.ROLES  # TensorRole order (io.hpp), declared once with the Io providers see
DTYPES = ("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")  # DType order
LAYOUTS = ("bhsd", "bshd")  # Layout order

OP_SUPPORTS = 1  # handle: provider index; json: {"spec": ...}; out: {"reason": null | "..."}
OP_ESTIMATE = 2  # handle: provider index; json: {"spec": ...}; out: {"bytes": N}
OP_PREPARE = 3  # handle: provider index; json: {"spec", "threads"}; sets[0]: copy 0; out: {"run": id}
OP_BIND = 4  # handle: run; sets[0..count)
OP_LAUNCH = 5  # handle: run; count: index of the bound set
OP_PUBLISH = 6  # handle: run; count: index of the bound set
OP_INFO = 7  # handle: run; out: {"workspace_bytes", "untracked_peak_bytes", "note"}
OP_RELEASE = 8  # handle: run

OK = 0
FAILED = 1  # out: {"kind": "provider" | "not_supported" | "oom", "message": "..."}


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("layout", ctypes.c_int32),
        ("batch", ctypes.c_int64),
        ("heads", ctypes.c_int64),
        ("len", ctypes.c_int64),
        ("dim", ctypes.c_int64),
        # Version 3: K and V of a paged spec (0 and null: contiguous), and the per-tensor scale
        # (stored value = real value * scale; 1 except for fp8 storage).
        ("page_size", ctypes.c_int64),
        ("block_table", ctypes.c_void_p),
        ("scale", ctypes.c_float),
        ("reserved", ctypes.c_int32),
    ]


class IoStruct(ctypes.Structure):
    _fields_ = [
        ("t", Tensor * len(ROLES)),
        # Version 3: a ragged batch's lengths, (batch) int32 each; null when uniform.
        ("seq_q", ctypes.c_void_p),
        ("seq_kv", ctypes.c_void_p),
    ]


CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int32,  # OK or FAILED
    ctypes.c_int64,  # handle
    ctypes.c_int32,  # op
    ctypes.c_char_p,  # json (may be null)
    ctypes.POINTER(IoStruct),  # sets (may be null)
    ctypes.c_int32,  # count of sets, or the index of one
    ctypes.c_void_p,  # stream (cudaStream_t; null on the CPU)
    ctypes.c_void_p,  # out: a buffer for a JSON reply
    ctypes.c_int64,  # its capacity
)


def load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    lib.attnprof_py_abi_version.restype = ctypes.c_int32
    lib.attnprof_py_serve.restype = ctypes.c_int32
    lib.attnprof_py_serve.argtypes = [
        ctypes.c_int32,
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_char_p,
        CALLBACK,
    ]
    version = lib.attnprof_py_abi_version()
    if version != ABI_VERSION:
        raise RuntimeError(f"{path} speaks ABI {version}, this package {ABI_VERSION}")
    lib.attnprof_py_struct_size.restype = ctypes.c_int64
    lib.attnprof_py_struct_size.argtypes = [ctypes.c_int32]
    for which, struct in enumerate((Tensor, IoStruct)):
        size = lib.attnprof_py_struct_size(which)
        if size != ctypes.sizeof(struct):
            raise RuntimeError(f"{path}: {struct.__name__} is {size} bytes there, "
                               f"{ctypes.sizeof(struct)} here (c_api.h and _abi.py disagree)")
    return lib


def reply(out: int, capacity: int, text: str) -> None:
    """Writes `text` (NUL-terminated, cut to fit) into the library's buffer."""
    data = text.encode("utf-8")[: max(capacity - 1, 0)]
    ctypes.memmove(out, data + b"\0", len(data) + 1)
