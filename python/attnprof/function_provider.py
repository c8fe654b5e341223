"""A provider made of one function: fn(q, k, v) -> o, or fn(q, k, v, spec) -> o.

q, k, v arrive as (batch, heads, len, dim) numpy arrays or torch tensors, on the device the
provider runs on; the function returns O in the same logical shape. Which of them it takes is
declared (`device=`, `framework=`) or, where not, found by calling it on tiny inputs of each kind
(_inference.py) when the provider is loaded. A function without a `spec` parameter is called only
for points it can answer without one: no mask and the default scale. prepare() calls it once,
untimed, so that torch.compile's compilation and autotuning land in the row's prepare_s, not in
the timed launches.

    @attnprof.provider(name="py.mine", masks=("none", "causal"))
    def attention(q, k, v, spec): ...
"""
from __future__ import annotations

import inspect
from typing import Callable, Optional

from ._inference import infer
from .provider import Io, Provider, Run
from .spec import Spec


class _FunctionRun(Run):
    def __init__(self, call: Callable, spec: Spec):
        self.call, self.spec = call, spec

    def launch(self, io: Io):
        return {"o": self.call(io.q, io.k, io.v, self.spec)}


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
        # None: found by settle() (_inference.py).
        self.declared_device = traits.pop("device", None)
        self.declared_framework = traits.pop("framework", None)
        self.declared_requires = traits.pop("requires", None)
        # The mask kinds the function handles (none, causal, causal-br, window); None: all.
        self.masks = traits.pop("masks", None)
        for key, value in traits.items():
            if not hasattr(Provider, key):
                raise TypeError(f"unknown provider trait '{key}'")
            setattr(self, key, value)

    def settle(self) -> None:
        """Sets device, framework and (unless declared) requires: as declared, else from a call
        on tiny inputs. Raises _inference.InferenceError saying what to declare."""
        kind = infer(self.name, self.call, self.declared_device, self.declared_framework)
        self.device, self.framework = kind.device, kind.framework
        self.requires = tuple(self.declared_requires or (kind.framework,))

    def call(self, q, k, v, spec: Spec):
        """The function on one set of tensors, with the spec where it takes one."""
        return self.fn(q, k, v, spec) if self.with_spec else self.fn(q, k, v)

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
        run = _FunctionRun(self.call, spec)
        run.launch(io)  # compile and autotune here, untimed
        return run


def provider(**traits):
    """Decorator: @attnprof.provider(name=..., family="fused", ...); device= and framework=
    where the function's tensors are not to be found by calling it."""

    def wrap(fn: Callable) -> FunctionProvider:
        return FunctionProvider(fn, **traits)

    return wrap
