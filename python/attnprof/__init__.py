"""attnprof from Python: write a provider, or profile a function, measured by the C++ instrument.

    import attnprof

    @attnprof.provider(name="py.mine")
    def attention(q, k, v, spec):
        ...

    rows = attnprof.profile(attention, heads=16, seq=[1024, 4096], head_dim=128, dtype="bf16",
                            compare="cudnn.sdpa,torch.sdpa.flash")

Providers run in a Python worker of their own, started by `attnprof run` with this package on
PYTHONPATH; the instrument owns the inputs, the timing, the verification against fp64 and the
memory figures (docs/providers.md, "Python providers")."""
from .api import profile, rows_frame, run
from .function_provider import FunctionProvider, provider
from .provider import Io, NotSupported, Provider, Run
from .spec import Spec

__all__ = ["Io", "NotSupported", "Provider", "Run", "Spec", "FunctionProvider", "provider",
           "run", "profile", "rows_frame"]
