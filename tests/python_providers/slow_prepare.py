"""Providers whose prepare() takes 3 s, as a JIT compile on first use does
(tests/app/test_cli_python.cpp, APrepareAllowanceOutlastsTheHangLimit): one declares a
prepare_allowance_s, the other does not."""
import time

from attnprof.builtin.numpy_naive import NumpyNaive


class SlowPrepare(NumpyNaive):
    name = "py.test.slow_prepare"
    description = "test: numpy's naive attention after a 3 s prepare, allowance declared"
    in_default_set = False
    prepare_allowance_s = 30.0

    def prepare(self, spec, io):
        time.sleep(3)
        return super().prepare(spec, io)


class SlowPrepareUndeclared(SlowPrepare):
    name = "py.test.slow_prepare_undeclared"
    description = "test: the same 3 s prepare, no allowance declared"
    prepare_allowance_s = 0.0


PROVIDERS = [SlowPrepare(), SlowPrepareUndeclared()]
