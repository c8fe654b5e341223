"""Python providers that cheat, each in one way a user's code can (docs/method.md, "What a
provider cannot fake"): each computes py.numpy.naive's correct answer, then misbehaves. The
harness must end each point with the status and fault that say what it did
(tests/app/test_cli_cheats.cpp)."""
import ctypes
import os
import time

import attnprof
from attnprof.builtin.numpy_naive import _Run as _Honest


class _Cheat(_Honest):
    def __init__(self, spec):
        super().__init__(spec)
        self.launches = 0
        self.kept = None

    def launch(self, io):
        self.launches += 1
        return self.cheat(io)

    def cheat(self, io):
        return super().launch(io)


class _Lazy(_Cheat):  # computes on its first launch (the verified one) only
    def cheat(self, io):
        return super().cheat(io) if self.launches == 1 else None


class _Memoizes(_Cheat):  # answers every launch with the first launch's outputs
    def cheat(self, io):
        if self.kept is None:
            self.kept = {k: v.copy() for k, v in super().cheat(io).items()}
        return self.kept


class _ZeroesQ(_Cheat):  # zeroes Q in place from its second launch on
    def cheat(self, io):
        if self.launches > 1:
            io.q[...] = 0
        return super().cheat(io)


class _TogglesQ(_Cheat):  # negates Q in place from its second launch on: back every other launch
    def cheat(self, io):
        if self.launches > 1:
            io.q[...] = -io.q
        return super().cheat(io)


class _PastEnd(_Cheat):  # writes 4 bytes past the end of O
    def cheat(self, io):
        out = super().cheat(io)
        io.o[...] = out["o"]
        ctypes.memset(io.o.ctypes.data + io.o.nbytes, 0, 4)
        return None


class _OneNan(_Cheat):  # one NaN in O
    def cheat(self, io):
        out = super().cheat(io)
        out["o"].reshape(-1)[out["o"].size // 2] = float("nan")
        return out


class _WrongShape(_Cheat):  # O with one query row missing
    def cheat(self, io):
        out = super().cheat(io)
        return {"o": out["o"][:, :, 1:, :]}


class _Exits(_Cheat):  # the process exits under the harness (a library calling exit)
    def cheat(self, io):
        os._exit(3)


class _Sleeps(_Cheat):  # sleeps far past the point's time limit on its second launch
    def cheat(self, io):
        if self.launches > 1:
            time.sleep(3600)
        return super().cheat(io)


class _Cheats(attnprof.Provider):
    device = "cpu"
    family = "test"
    framework = "numpy"
    library = "test"
    requires = ("numpy",)
    run_class = None

    def prepare(self, spec, io):
        return self.run_class(spec)


def _provider(name, run_class):
    return type(name, (_Cheats,), {"name": "test.cheat." + name,
                                   "description": "test: " + (run_class.__doc__ or name),
                                   "run_class": run_class})()


CHEATS = {"honest": _Cheat, "lazy": _Lazy, "memoize": _Memoizes, "zero_q": _ZeroesQ,
          "toggle_q": _TogglesQ, "past_end": _PastEnd, "nan": _OneNan,
          "wrong_shape": _WrongShape, "exits": _Exits, "sleeps": _Sleeps}
PROVIDERS = [_provider(name, cls) for name, cls in CHEATS.items()]
