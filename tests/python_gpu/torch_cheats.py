"""CUDA Python providers that cheat, each in one way a user's torch code can (docs/method.md,
"What a provider cannot fake"): each computes torch SDPA's correct answer, then misbehaves.
Loaded with --py-provider by tests/python_gpu/test_cheats.py, which names the row each must end
with."""
import ctypes
import os
import time

import attnprof


def _sdpa(spec, q, k, v):
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q, k, v, is_causal=spec.mask == "causal",
                                          scale=spec.softmax_scale, enable_gqa=spec.group_size > 1)


class _Honest(attnprof.Run):
    def __init__(self, spec):
        self.spec = spec
        self.launches = 0
        self.kept = None
        self.side = None

    def launch(self, io):
        self.launches += 1
        return self.cheat(io)

    def cheat(self, io):
        return {"o": _sdpa(self.spec, io.q, io.k, io.v)}


class _Lazy(_Honest):  # computes on its first launch only
    def cheat(self, io):
        return super().cheat(io) if self.launches == 1 else None


class _Memoizes(_Honest):  # answers every launch with the first launch's output
    def cheat(self, io):
        if self.kept is None:
            self.kept = super().cheat(io)["o"].clone()
        return {"o": self.kept}


class _ZeroesQ(_Honest):  # zeroes Q in place from its second launch on
    def cheat(self, io):
        if self.launches > 1:
            io.q.zero_()
        return super().cheat(io)


class _TogglesQ(_Honest):  # negates Q in place from its second launch on: back every other one
    def cheat(self, io):
        if self.launches > 1:
            io.q.neg_()
        return super().cheat(io)


class _PastEnd(_Honest):  # writes 16 bytes past the end of O (cudaMemsetAsync on its stream)
    def cheat(self, io):
        import torch

        io.o.copy_(super().cheat(io)["o"])
        cudart = ctypes.CDLL("libcudart.so.13") if _has("libcudart.so.13") else ctypes.CDLL(
            "libcudart.so")
        end = io.o.data_ptr() + io.o.numel() * io.o.element_size()
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        cudart.cudaMemsetAsync(ctypes.c_void_p(end), 0, ctypes.c_size_t(16), stream)
        return None


class _DefaultStream(_Honest):  # runs its work on the legacy default stream
    def cheat(self, io):
        import torch

        with torch.cuda.stream(torch.cuda.default_stream()):
            return super().cheat(io)


class _SideStream(_Honest):  # runs its work on a stream of its own that it never joins
    def cheat(self, io):
        import torch

        if self.side is None:
            self.side = torch.cuda.Stream()
        with torch.cuda.stream(self.side):
            out = super().cheat(io)
        return out


class _OneNan(_Honest):  # one NaN in O
    def cheat(self, io):
        o = super().cheat(io)["o"]
        o.view(-1)[o.numel() // 2] = float("nan")
        return {"o": o}


class _WrongShape(_Honest):  # O with one query row missing
    def cheat(self, io):
        return {"o": super().cheat(io)["o"][:, :, 1:, :]}


class _Raises(_Honest):
    def cheat(self, io):
        raise RuntimeError("the user's kernel is broken")


class _Exits(_Honest):  # the process exits under the harness
    def cheat(self, io):
        os._exit(3)


class _Sleeps(_Honest):  # sleeps far past the point's time limit on its second launch
    def cheat(self, io):
        if self.launches > 1:
            time.sleep(3600)
        return super().cheat(io)


def _has(lib):
    try:
        ctypes.CDLL(lib)
        return True
    except OSError:
        return False


class _Cheats(attnprof.Provider):
    device = "cuda"
    family = "test"
    framework = "torch"
    library = "test"
    requires = ("torch",)
    run_class = None

    def supports(self, spec):
        return None if spec.dtype in ("fp16", "bf16") else "fp16 and bf16 only"

    def prepare(self, spec, io):
        return self.run_class(spec)


CHEATS = {"honest": _Honest, "lazy": _Lazy, "memoize": _Memoizes, "zero_q": _ZeroesQ,
          "toggle_q": _TogglesQ, "past_end": _PastEnd, "default_stream": _DefaultStream,
          "side_stream": _SideStream, "nan": _OneNan, "wrong_shape": _WrongShape,
          "raises": _Raises, "exits": _Exits, "sleeps": _Sleeps}
PROVIDERS = [type(n, (_Cheats,), {"name": "test.torch.cheat." + n, "description": "test: " + n,
                                  "run_class": c})() for n, c in CHEATS.items()]
