"""Fixtures of the Python package's tests (tests/CMakeLists.txt runs them with ATTNPROF_BIN set
to the build's attnprof and the source tree's python/ on PYTHONPATH; CPU only, numpy providers).

Functions handed to attnprof must live in a file the worker can import: `module` writes one
into the test's folder and imports it."""
from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest

# One small point: what every run and tune of these tests measures, quickly (a 2-core machine).
POINT = dict(device="cpu", heads=2, seq=32, head_dim=16, dtype="fp32", min_time="1ms",
             min_samples=3, no_trace=True)


@pytest.fixture
def module(tmp_path):
    """module(name, source) -> the module of that source, written to tmp_path/name.py."""

    def make(name: str, source: str):
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        spec = importlib.util.spec_from_file_location(name, path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
        return loaded

    yield make


NUMPY_ATTENTION = """
    import numpy as np

    def attention(q, k, v):
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
        p = np.exp(s - s.max(-1, keepdims=True))
        return p / p.sum(-1, keepdims=True) @ v
"""


@pytest.fixture
def numpy_attention(module, request):
    """An undecorated numpy attention function in a file of its own (named after the test)."""
    return module(f"numpy_attention_{request.node.name}", NUMPY_ATTENTION).attention
