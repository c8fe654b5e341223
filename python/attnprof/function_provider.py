"""A provider made of one function: fn(q, k, v) -> o, or fn(q, k, v, spec) -> o.

q, k, v arrive as (batch, heads, len, dim) tensors (torch, on the device the provider runs on);
the function returns O in the same logical shape. A function without a `spec` parameter is
called only for points it can answer without one: no mask and the default scale. prepare()
calls it once, untimed, so that torch.compile's compilation and autotuning land in the row's
prepare_s, not in the timed launches.

    @attnprof.provider(name="py.mine", device="cuda", masks=("none", "causal"))
    def attention(q, k, v, spec): ...
"""
from __future__ import annotations

import inspect
from typing import Callable, Optional

from .provider import Io, Provider, Run
from .spec import Spec


class _FunctionRun(Run):
    def __init__(self, fn: Callable, with_spec: bool, spec: Spec):
        self.fn, self.with_spec, self.spec = fn, with_spec, spec

    def launch(self, io: Io):
        if self.with_spec:
            return {"o": self.fn(io.q, io.k, io.v, self.spec)}
        return {"o": self.fn(io.q, io.k, io.v)}


class FunctionProvider(Provider):
    def __init__(self, fn: Callable, origin: str = "", **traits):
        self.fn = fn
        params = inspect.signature(fn).parameters
        self.with_spec = len(params) >= 4 or any(
            p.kind == p.VAR_POSITIONAL for p in params.values())
        self.name = traits.pop("name", None) or f"py.{fn.__name__}"
        where = origin or f"{getattr(fn, '__module__', '?')}.{fn.__name__}"
        self.description = traits.pop("description", None) or f"the function {where}"
        self.library = traits.pop("library", None) or "user"
        self.family = traits.pop("family", "fused")
        self.fused = traits.pop("fused", self.family == "fused")
        self.device = traits.pop("device", "cuda")
        self.requires = tuple(traits.pop("requires", ("torch",)))
        # The mask kinds the function handles (none, causal, causal-br, window); None: all.
        self.masks = traits.pop("masks", None)
        for key, value in traits.items():
            if not hasattr(Provider, key):
                raise TypeError(f"unknown provider trait '{key}'")
            setattr(self, key, value)

    def supports(self, spec: Spec) -> Optional[str]:
        if spec.mode != "fwd":
            return "a function provider runs the forward only"
        if self.masks is not None and spec.mask_kind not in self.masks:
            return f"masks: {', '.join(self.masks)} only"
        if not self.with_spec and (spec.mask != "none" or spec.scale > 0):
            return (f"{self.fn.__name__} takes no spec: it runs only without a mask and with the "
                    "default scale (add a fourth parameter `spec` to get them)")
        return None

    def prepare(self, spec: Spec, io: Io) -> Run:
        run = _FunctionRun(self.fn, self.with_spec, spec)
        run.launch(io)  # compile and autotune here, untimed
        return run


def provider(**traits):
    """Decorator: @attnprof.provider(name=..., device="cuda", family="fused", ...)."""

    def wrap(fn: Callable) -> FunctionProvider:
        return FunctionProvider(fn, **traits)

    return wrap
