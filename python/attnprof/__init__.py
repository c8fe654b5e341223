"""attnprof from Python: the CLI's verbs, and providers of one's own, measured by the C++
instrument.

    import attnprof

    def attention(q, k, v):  # numpy arrays or torch tensors: found by calling it
        ...

    rows = attnprof.profile(attention, compare="cpu.flash", heads=8, seq=[256, 1024],
                            head_dim=64, dtype="fp32")
    best = attnprof.tune(attention, heads=8, seq=1024, head_dim=64, dtype="fp32",
                         max_memory="1GiB", p95="50ms")

run, profile, tune, report, compare and providers call the attnprof executable installed with
this package (api.py, _cli.py); its refusals raise UsageError with the CLI's message. Providers
run in a Python worker of their own, started by `attnprof run`; the instrument owns the inputs,
the timing, the verification against fp64 and the memory figures (docs/design.md, "Python
providers")."""
from ._cli import Error, RunError, UsageError
from .api import compare, profile, providers, report, rows_frame, run, tune
from .function_provider import FunctionProvider, provider
from .provider import Io, NotSupported, Provider, Run
from .spec import Spec

__all__ = ["Io", "NotSupported", "Provider", "Run", "Spec", "FunctionProvider", "provider",
           "run", "profile", "tune", "report", "compare", "providers", "rows_frame", "Error",
           "UsageError", "RunError"]
