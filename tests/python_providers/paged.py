"""Python providers that claim a paged cache or ragged batches and get them wrong, each in one way
(tests/app/test_cli_python.cpp, APagedCacheAndARaggedBatchReachPython): the harness's poison past
each sequence's keys and its shuffled block table must make each fail verification where
py.numpy.naive passes."""
import numpy as np

from attnprof.builtin.numpy_naive import NumpyNaive, _attend
from attnprof.masks import numpy_mask
from attnprof.provider import Run


class _PagesAsContiguous(Run):  # reads the container of pages in order, ignoring the block table
    def __init__(self, spec):
        self.spec = spec

    def launch(self, io):
        s = self.spec

        def contiguous(t):
            if s.layout == "bhsd":  # (B * P, H, page, D) -> (B, H, P * page, D)
                n, h, page, d = t.shape
                rows = t.reshape(s.batch, n // s.batch, h, page, d).transpose(0, 2, 1, 3, 4)
            else:  # (B * P, page, H, D) -> (B, H, P * page, D)
                n, page, h, d = t.shape
                rows = t.reshape(s.batch, n // s.batch, page, h, d).transpose(0, 3, 1, 2, 4)
            return rows.reshape(s.batch, h, -1, d)[:, :, :s.kv_len]

        return {"o": _attend(s, numpy_mask(s), io.q, contiguous(io.k), contiguous(io.v), None)}


class _IgnoresLengths(Run):  # attends every sequence to all kv_len keys, poison included
    def __init__(self, spec):
        self.spec = spec

    def launch(self, io):
        s = self.spec
        return {"o": _attend(s, numpy_mask(s), io.q, io.k, io.v, None)}


class PagesAsContiguous(NumpyNaive):
    name = "py.test.pages_in_order"
    description = "test: claims a paged cache, reads its pages in memory order"
    sinks = softcap = ragged = False
    in_default_set = False

    def prepare(self, spec, io):
        assert io.paged and io.block_table is not None
        return _PagesAsContiguous(spec)


class IgnoresLengths(NumpyNaive):
    name = "py.test.ignores_lengths"
    description = "test: claims ragged batches, attends to every key"
    sinks = softcap = paged_kv = False
    in_default_set = False

    def prepare(self, spec, io):
        assert io.seq_q is not None and io.seq_kv is not None
        assert io.seq_q.dtype == np.int32 and io.seq_q.shape == (spec.batch,)
        return _IgnoresLengths(spec)


PROVIDERS = [PagesAsContiguous(), IgnoresLengths()]
