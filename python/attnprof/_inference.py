"""Which tensors a function provider takes, found by calling it (issue 56).

A function declared without `device=` and `framework=` is called once, untimed, on tiny inputs of
each kind it could take, in this order: numpy arrays (cheap, and a torch function fails on them
at once), torch CUDA tensors (where torch imports and a GPU answers), torch CPU tensors. The first
kind it answers with an output of that kind and the query's shape is the one it runs on; a
declared device or framework leaves only the kinds that match it, and where one kind is left the
function is not called at all. When no kind works, the error names each kind with why it failed
and what to declare. The instrument still verifies every row: this only picks the tensors."""
from __future__ import annotations

import importlib.util
from typing import Callable, NamedTuple

from .spec import Spec


class Kind(NamedTuple):
    device: str  # cpu or cuda
    framework: str  # numpy or torch
    words: str  # what the function is handed, in words


NUMPY = Kind("cpu", "numpy", "numpy arrays")
KINDS = (NUMPY, Kind("cuda", "torch", "torch CUDA tensors"), Kind("cpu", "torch", "torch CPU tensors"))


class InferenceError(Exception):
    pass


def tiny_spec(kind: Kind) -> Spec:
    """The point of the trial call: B1 H2 N16 D64, no mask; fp16 on a GPU (host tensors hold
    float32 whatever the spec's dtype: provider.py)."""
    return Spec(batch=1, q_heads=2, kv_heads=2, q_len=16, kv_len=16, head_dim=64, v_head_dim=0,
                dtype="fp16" if kind.device == "cuda" else "fp32", mask="none", mode="fwd",
                layout="bhsd", scale=0.0)


def _unavailable(kind: Kind) -> str:
    """Why inputs of this kind cannot be made here; "" when they can."""
    if importlib.util.find_spec(kind.framework) is None:
        return f"{kind.framework} is not importable"
    if kind.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            return "no CUDA device answers"
    return ""


def _inputs(kind: Kind, spec: Spec) -> tuple:
    shape = (spec.batch, spec.q_heads, spec.q_len, spec.head_dim)
    if kind.framework == "numpy":
        import numpy as np

        rng = np.random.default_rng(0)
        return tuple(rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
    import torch

    generator = torch.Generator(device=kind.device).manual_seed(0)
    dtype = torch.float16 if kind.device == "cuda" else torch.float32
    return tuple(torch.randn(shape, generator=generator, device=kind.device, dtype=dtype)
                 for _ in range(3))


def _answered(kind: Kind, out, q) -> str:
    """"" when `out` is an output of `kind` with q's shape, else what it is instead."""
    if kind.framework == "numpy":
        import numpy as np

        ok = isinstance(out, np.ndarray)
    else:
        import torch

        ok = isinstance(out, torch.Tensor) and out.device.type == kind.device
    if ok and tuple(out.shape) == tuple(q.shape):
        return ""
    what = type(out).__name__
    if hasattr(out, "shape"):
        what += f" of shape {tuple(out.shape)}"
    return f"returned a {what}, not {kind.words} of shape {tuple(q.shape)}"


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def trial(kind: Kind, call: Callable) -> str:
    """"" when `call(q, k, v, spec)` answers tiny inputs of `kind`, else why not, in words."""
    why = _unavailable(kind)
    if why:
        return why
    spec = tiny_spec(kind)
    q, k, v = _inputs(kind, spec)
    try:
        return _answered(kind, call(q, k, v, spec), q)
    except Exception as e:  # the user's function: any failure means "not this kind"
        return _first_line(e)


def infer(name: str, call: Callable, device: str | None, framework: str | None) -> Kind:
    """The kind `call(q, k, v, spec)` takes, among those matching the declared device and
    framework (None: any). Raises InferenceError naming every kind tried and why it failed."""
    kinds = [k for k in KINDS
             if device in (None, k.device) and framework in (None, k.framework)]
    if not kinds:
        raise InferenceError(f"{name}: no input kind is device={device!r}, framework={framework!r}"
                             " (numpy runs on the cpu; torch on cpu or cuda)")
    if len(kinds) == 1:
        return kinds[0]
    tried = []
    for kind in kinds:
        why = trial(kind, call)
        if not why:
            return kind
        tried.append(f"{kind.words}: {why}")
    raise InferenceError(
        f"{name}: cannot tell which tensors it takes ({'; '.join(tried)}); declare them, e.g. "
        "@attnprof.provider(device='cuda', framework='torch') or (device='cpu', "
        "framework='numpy')")
