"""Python providers that fail in every way a user's code can: the Python worker must turn each
into the point's fault and keep serving (or be replaced), never lose the sweep."""
import ctypes
import time

import attnprof


class _Raises(attnprof.Run):
    def launch(self, io):
        raise RuntimeError("the user's kernel is broken")


class _Crashes(attnprof.Run):
    def launch(self, io):
        ctypes.string_at(0)  # reads address 0: SIGSEGV in the worker


class _Hangs(attnprof.Run):
    def launch(self, io):
        while True:
            time.sleep(1)


class _Base(attnprof.Provider):
    device = "cpu"
    family = "test"
    framework = "numpy"
    library = "test"
    requires = ("numpy",)
    run_class = None

    def prepare(self, spec, io):
        return self.run_class()


class Raises(_Base):
    name = "test.py.raise"
    description = "test: a Python provider whose launch raises"
    run_class = _Raises


class Crashes(_Base):
    name = "test.py.segv"
    description = "test: a Python provider that segfaults through ctypes"
    run_class = _Crashes


class Hangs(_Base):
    name = "test.py.hang"
    description = "test: a Python provider that never returns"
    run_class = _Hangs


class Refuses(_Base):
    name = "test.py.refuse"
    description = "test: a Python provider whose library refuses the point in prepare"

    def prepare(self, spec, io):
        raise attnprof.NotSupported("the library refused this shape")


PROVIDERS = [Raises(), Crashes(), Hangs(), Refuses()]
