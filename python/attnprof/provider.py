"""What a Python provider is: the Python twin of include/attnprof/provider.hpp.

A provider declares its traits as class attributes, says what it cannot do in `supports`, and
builds a `Run` in `prepare` (never timed: compile, autotune, plan there). The C++ instrument owns
the tensors (bit-identical inputs for every provider), times `Run.launch` on its own stream,
verifies every output row against fp64, and measures memory; a provider only computes.

Tensors reach a provider as an `Io`: q, k, v (and d_o, o, lse, dq, dk, dv where the point has
them) as torch tensors (framework "torch") or numpy arrays (framework "numpy"), logical shape
(batch, heads, len, dim) whatever the spec's layout (bshd tensors are strided views); the LSE is
(batch, heads, len); the sink logits (spec.sinks) are (q_heads,) float32. Device tensors hold the
spec's dtype (fp8 as torch.float8_e4m3fn / float8_e5m2, each tensor's stored value being its real
value times io.scales[role]); host tensors always hold float32 (fp8 inputs as their real values).

A paged spec (spec.page_size > 0; trait `paged_kv`) gives K and V as their container of pages,
not as (batch, heads, len, dim): (num_pages, heads, page_size, dim) for bhsd and (num_pages,
page_size, heads, dim) for bshd, num_pages = batch * ceil(kv_len / page_size); sequence b's p-th
page is io.block_table[b, p] ((batch, pages_per_seq) int32). A ragged batch (spec.seqlens; trait
`ragged`) gives io.seq_q and io.seq_kv, (batch,) int32: sequence b uses its first seq_q[b] query
rows and seq_kv[b] keys (the mask applies to those lengths); rows past them are padding no one
verifies, and K and V hold poison past each sequence's keys (io.hpp).
"""
from __future__ import annotations

import importlib.util
from typing import Any, Optional

from .spec import Spec


class NotSupported(Exception):
    """Raise from prepare() or launch() when the point turns out to be one the provider cannot
    run (the row becomes not_supported with the message, not failed)."""


class Run:
    """One prepared point."""

    def launch(self, io: "Io") -> Optional[dict]:
        """Enqueue one execution on the current stream, reading io's inputs. Return None when the
        outputs were written into io's tensors, or a dict {"o": tensor, ...} of outputs the
        framework keeps: they are copied into io's tensors after the timed launches (untimed)."""
        raise NotImplementedError

    def note(self) -> str:
        """What to say about this point beside the numbers ("" for nothing)."""
        return ""

    def workspace_bytes(self) -> int:
        """Bytes held beyond the harness's tensors that the framework's allocator does not see."""
        return 0


# The traits a provider declares, the Python twin of include/attnprof/traits.hpp: (name, kind),
# the name both the Provider attribute and the JSON key of src/core/result_json.cpp traits_json.
# `describe()` (_loader.py) writes exactly these; a C++ test (PythonTraits.TheTableMatchesTheCodec)
# holds the names to traits_json's keys. library_version comes from Provider.library_version(),
# not from an attribute.
TRAITS = (
    ("name", str),
    ("description", str),
    ("device", str),
    ("family", str),
    ("fused", bool),
    ("library", str),
    ("library_version", str),
    ("in_default_set", bool),
    ("role", str),
    ("variant_of", str),
    ("forward", bool),
    ("backward", bool),
    ("writes_lse", bool),
    ("paged_kv", bool),
    ("fp8", bool),
    ("softcap", bool),
    ("sinks", bool),
    ("ragged", bool),
    ("own_streams", bool),
    ("quantization", str),
    ("output_tolerance", float),
    ("prepare_allowance_s", float),
)


class Provider:
    # Traits (include/attnprof/traits.hpp): every row records them. TRAITS above lists them.
    name: str = ""
    description: str = ""
    device: str = "cuda"  # cpu or cuda
    family: str = "fused"  # naive, math, fused, dispatcher, reference, test
    fused: bool = False  # the N x N scores never reach memory
    library: str = ""  # "PyTorch", "Triton", "numpy", ...
    role: str = ""  # "", baseline, gqa_expansion
    variant_of: str = ""
    # Eligible for the default set (no --providers, or "default"): run wherever it is available
    # and can run a point of the grid (traits and supports() decide, src/registry).
    in_default_set: bool = True
    forward: bool = True
    backward: bool = False
    writes_lse: bool = False
    # Reads K and V from a paged cache (spec.page_size > 0): io.k and io.v are containers of
    # pages, io.block_table maps them (see the module's docstring). Without it the runner refuses
    # paged points.
    paged_kv: bool = False
    # Takes fp8 inputs (spec.dtype fp8_e4m3 / fp8_e5m2) and writes O in the same format, each
    # tensor scaled by io.scales[role]. Without it the runner refuses fp8 points.
    fp8: bool = False
    # Takes a ragged batch (spec.seqlens): reads io.seq_q and io.seq_kv, never reads past a
    # sequence's keys. Without it the runner refuses ragged points.
    ragged: bool = False
    # Applies the spec's logit softcap (spec.softcap: scaled scores s become C * tanh(s / C)).
    # Without it the runner refuses capped points.
    softcap: bool = False
    # Takes attention sinks (spec.sinks): io.sink holds one logit per query head (natural units of
    # the scaled scores) that joins each row's softmax denominator and takes no value row.
    # Without it the runner refuses points with sinks.
    sinks: bool = False
    # Runs kernels on streams of its own and orders them with the instrument's stream, proving the
    # order in prepare (JAX). Without it any kernel off the timed stream fails the point
    # (fault off_stream); with it, any that runs outside the launch's window.
    own_streams: bool = False
    # A kernel deliberately lossier than its dtype (INT8 Q K^T) says how, and the per-row relative
    # L2 bound it promises for O (replaces the dtype's when looser; at most 0.1). Rows say so.
    quantization: str = ""
    output_tolerance: float = 0.0
    # Seconds prepare() may take beyond the worker's hang limit (a JIT compile on first use); the
    # supervisor waits that much longer for this provider's points. 0: none.
    prepare_allowance_s: float = 0.0
    # How tensors are handed over: "torch" (torch tensors; launches run on the instrument's
    # stream) or "numpy" (host arrays; device cpu only).
    framework: str = "torch"
    # Modules that must be importable for the provider to be available.
    requires: tuple = ()
    # Whether what the framework's allocator held during prepare() counts toward the point's
    # memory (False for providers whose prepare benchmarks: an autotuner's L2-flush buffer is no
    # part of running attention).
    count_prepare_memory: bool = True
    # Set before each prepare(): the threads a CPU provider should use (the engine's --threads;
    # 0 for all).
    threads: int = 0
    # Knobs beyond the spec (include/attnprof/provider_settings.hpp): one dict per setting,
    # {"name": ..., "values": [...], "help": ...}; `--set NAME.SETTING=V1,V2` is checked against
    # them and sweeps the values. Set before each prepare(): `setting_values`, the point's value
    # of each setting given (absent: the provider's default).
    settings: tuple = ()
    setting_values: dict = {}

    def availability(self) -> Optional[str]:
        """None when the provider can run here, else why not, in words. Must be cheap: `attnprof
        list` asks every provider (the default checks `requires` without importing them)."""
        for module in self.requires:
            if importlib.util.find_spec(module) is None:
                import sys

                return f"{module} not importable in {sys.executable}"
        return None

    def library_version(self) -> str:
        """Version of the library this provider runs, "" when not known."""
        from importlib import metadata

        for module in self.requires:
            try:
                return metadata.version(module)
            except metadata.PackageNotFoundError:
                continue
        return ""

    def fingerprint(self) -> dict:
        """Entries for the rows' environment fingerprint ({"torch": "2.11.0"})."""
        from importlib import metadata

        out = {}
        for module in self.requires:
            try:
                out[module] = metadata.version(module)
            except metadata.PackageNotFoundError:
                pass
        return out

    def supports(self, spec: Spec) -> Optional[str]:
        """None when the provider can run `spec`, else everything it cannot do, in words."""
        return None

    def workspace_estimate(self, spec: Spec) -> int:
        """Bytes the provider expects to allocate beyond the harness's tensors."""
        return 0

    def prepare(self, spec: Spec, io: "Io") -> Run:
        raise NotImplementedError


class Io:
    """The tensors of one set (see the module's docstring); absent ones are None. Beside them:
    block_table ((batch, pages_per_seq) int32) and page_size (0: contiguous) of a paged K and V;
    seq_q and seq_kv ((batch,) int32) of a ragged batch, None when uniform; scales: per present
    role, stored value / real value (1.0 except for fp8 device tensors). Arrays of the set's kind
    (numpy on the CPU, torch tensors where the framework is torch), in the tensors' memory."""

    ROLES = ("q", "k", "v", "d_o", "o", "lse", "dq", "dk", "dv", "sink")  # io.hpp TensorRole order

    def __init__(self, block_table: Any = None, page_size: int = 0, seq_q: Any = None,
                 seq_kv: Any = None, scales: Optional[dict] = None, **tensors: Any):
        for role in self.ROLES:
            setattr(self, role, tensors.get(role))
        self.block_table = block_table
        self.page_size = int(page_size)
        self.seq_q = seq_q
        self.seq_kv = seq_kv
        self.scales = dict(scales) if scales else {r: 1.0 for r in self.ROLES
                                                   if tensors.get(r) is not None}

    @property
    def paged(self) -> bool:
        return self.page_size > 0

    def __getitem__(self, role: str) -> Any:
        return getattr(self, role)
