"""py.flashinfer.fa2, py.flashinfer.fa3, py.flashinfer.decode: FlashInfer's kernels (the serving
engines' attention: SGLang, vLLM), on the harness's tensors.

- fa2 and fa3: BatchPrefillWithRaggedKVCacheWrapper with backend "fa2" (FlashAttention-2 style,
  any recent GPU) or "fa3" (FlashAttention-3 style, Hopper's TMA and wgmma). The batch is B
  sequences of q_len queries and kv_len keys; the ragged tensors are (tokens, heads, dim), which
  the harness's bshd layout is without a copy (`--layout bshd`), so bhsd points are refused.
  Any query count, so multi-token decode (the spec-decode preset) runs here too.
- decode: BatchDecodeWithPagedKVCacheWrapper with tensor cores, one query token per sequence. A
  paged point's K and V are the harness's containers of pages, which are FlashInfer's paged cache
  as they lie (bhsd: HND, bshd: NHD), with the harness's block table as its page indices, each
  sequence's pages up to its keys; contiguous K and V are a paged cache of one page per sequence
  (page size kv_len). A ragged batch's sequence b has seq_kv[b] keys (its last page's length); a
  sequence with none is refused. Paged and ragged decode are written against 0.6.13's plan() and
  have not yet run on a GPU.

FlashInfer's causal mask is bottom-right aligned; a window of W keys is causal with window_left
W - 1; the softcap is logits_soft_cap. The plans (and FlashInfer's JIT compile of each kernel
module, on its first use: tens of seconds) are made in prepare, so they land in prepare_s; the
compiled modules are kept under attnprof's cache folder ($XDG_CACHE_HOME/attnprof/flashinfer,
unless FLASHINFER_WORKSPACE_BASE is set), so a sweep compiles each once. Outputs are written into
the harness's O through `out=`; no LSE (FlashInfer's is base 2 and token-major)."""
from __future__ import annotations

import os

from ..provider import NotSupported, Provider, Run

_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
os.environ.setdefault("FLASHINFER_WORKSPACE_BASE", os.path.join(_cache, "attnprof", "flashinfer"))

_WORKSPACE_BYTES = 128 << 20  # FlashInfer's float workspace (split-KV partials), its usual size


def _dtype(spec):
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16}[spec.dtype]


def _mask(spec):
    """(causal, window_left) in FlashInfer's terms; None when it has no such mask."""
    kind = spec.mask_kind
    if kind == "none":
        return False, -1
    if kind == "causal" and spec.q_len != spec.kv_len:
        return None  # top-left alignment; FlashInfer aligns bottom-right
    if kind == "window":
        return True, spec.window - 1
    return True, -1


def _common_problems(spec):
    why = []
    if spec.dtype not in ("fp16", "bf16"):
        why.append("fp16 and bf16 only here")
    if spec.sinks:
        why.append("no attention sinks in these wrappers")
    if _mask(spec) is None:
        why.append("FlashInfer's causal mask is bottom-right aligned: top-left only where "
                   "q_len == kv_len")
    return why


def _plan_options(spec):
    """What both wrappers' plan() take alike: the mask's window, the softcap, the scale, dtypes."""
    return {"window_left": _mask(spec)[1],
            "logits_soft_cap": spec.softcap if spec.softcap > 0 else None,
            "sm_scale": spec.softmax_scale, "q_data_type": _dtype(spec),
            "kv_data_type": _dtype(spec)}


def _workspace(io):
    import torch

    return torch.empty(_WORKSPACE_BYTES, dtype=torch.uint8, device=io.q.device)


def _tokens(t):
    """A bshd tensor (logical (B, H, S, D)) as FlashInfer's ragged (B * S, H, D), no copy."""
    return t.transpose(1, 2).view(-1, t.shape[1], t.shape[3])


def _planned(plan, *args, **kwargs):
    """FlashInfer refuses a configuration it has no kernel for with ValueError or
    NotImplementedError: that is the point's not_supported, not a failure."""
    try:
        plan(*args, **kwargs)
    except (ValueError, NotImplementedError) as e:
        raise NotSupported(f"FlashInfer: {e}") from e


class _Prefill(Run):
    def __init__(self, spec, io, backend):
        import torch
        import flashinfer

        self.spec, self.backend = spec, backend
        if backend == "fa3" and torch.cuda.get_device_capability(io.q.device) != (9, 0):
            raise NotSupported("the fa3 backend needs a Hopper GPU (sm_90)")
        b = spec.batch
        self.workspace = _workspace(io)
        self.wrapper = flashinfer.BatchPrefillWithRaggedKVCacheWrapper(
            self.workspace, kv_layout="NHD", backend=backend)
        qo_indptr = torch.arange(b + 1, dtype=torch.int32) * spec.q_len
        kv_indptr = torch.arange(b + 1, dtype=torch.int32) * spec.kv_len
        _planned(self.wrapper.plan, qo_indptr, kv_indptr, spec.q_heads, spec.kv_heads,
                 spec.head_dim, spec.dv, causal=_mask(spec)[0], **_plan_options(spec))

    def launch(self, io):
        self.wrapper.run(_tokens(io.q), _tokens(io.k), _tokens(io.v), out=_tokens(io.o))

    def note(self):
        return (f"BatchPrefillWithRaggedKVCacheWrapper, backend {self.backend}; Q, K, V and O "
                "as (tokens, heads, dim) views of the bshd tensors")


def _page_table(spec, io):
    """FlashInfer's page table of the batch, on the host: (indptr, indices, last_page_len,
    page_size). Paged: the harness's block table, each sequence's pages up to its keys;
    contiguous: one page of kv_len keys per sequence. A ragged batch's sequence b has seq_kv[b]
    keys."""
    import torch

    b = spec.batch
    keys = (io.seq_kv.to("cpu", torch.int64) if io.seq_kv is not None
            else torch.full((b,), spec.kv_len, dtype=torch.int64))
    if bool((keys < 1).any()):
        raise NotSupported("a sequence with no key (FlashInfer's decode needs at least one)")
    if io.page_size > 0:
        page = io.page_size
        used = (keys + page - 1) // page
        table = io.block_table.to("cpu", torch.int32)
        indices = torch.cat([table[i, :int(used[i])] for i in range(b)])
    else:
        page = spec.kv_len
        used = torch.ones(b, dtype=torch.int64)
        indices = torch.arange(b, dtype=torch.int32)
    indptr = torch.zeros(b + 1, dtype=torch.int32)
    indptr[1:] = torch.cumsum(used, 0)
    return indptr, indices, (keys - (used - 1) * page).to(torch.int32), page


class _Decode(Run):
    def __init__(self, spec, io):
        import flashinfer

        self.spec = spec
        self.layout = "HND" if spec.layout == "bhsd" else "NHD"
        self.paged = io.page_size > 0
        self.workspace = _workspace(io)
        self.wrapper = flashinfer.BatchDecodeWithPagedKVCacheWrapper(
            self.workspace, kv_layout=self.layout, use_tensor_cores=True)
        indptr, indices, last, self.page = _page_table(spec, io)
        _planned(self.wrapper.plan, indptr, indices, last, spec.q_heads, spec.kv_heads,
                 spec.head_dim, self.page, **_plan_options(spec))

    def _cache(self, t):
        # A paged point's containers are FlashInfer's layout as they lie; contiguous K and V are
        # one page per sequence: (pages, heads, page, dim) is bhsd's memory, (pages, page, heads,
        # dim) bshd's.
        return t if self.paged or self.layout == "HND" else t.transpose(1, 2)

    def launch(self, io):
        s = self.spec
        self.wrapper.run(io.q.view(s.batch, s.q_heads, s.head_dim),
                         (self._cache(io.k), self._cache(io.v)),
                         out=io.o.view(s.batch, s.q_heads, s.dv))

    def note(self):
        pages = (f"the harness's pages of {self.page} keys through its block table" if self.paged
                 else f"one page of {self.page} keys per sequence (the harness's contiguous K and "
                      "V)")
        return (f"BatchDecodeWithPagedKVCacheWrapper with tensor cores, {self.layout}: {pages}"
                + (", each sequence's own length" if self.spec.seqlens else ""))


class _FlashInfer(Provider):
    device = "cuda"
    family = "fused"
    fused = True
    library = "FlashInfer"
    softcap = True
    requires = ("flashinfer", "torch")
    # Its first use of a kernel module JIT-compiles it in prepare (16-65 s on the H200's 16 cores):
    # the supervisor waits this much beyond --hang-timeout for such a point.
    prepare_allowance_s = 240.0

    def availability(self):
        reason = super().availability()
        return f"{reason} (pip install flashinfer-python)" if reason else None

    def library_version(self):
        from importlib import metadata

        try:
            return metadata.version("flashinfer-python")
        except metadata.PackageNotFoundError:
            return ""

    def fingerprint(self):
        out = super().fingerprint()
        version = self.library_version()
        if version:
            out["flashinfer-python"] = version
        return out

    def workspace_estimate(self, spec):
        return _WORKSPACE_BYTES


class FlashInferPrefill(_FlashInfer):
    def __init__(self, backend):
        self.backend = backend
        self.name = f"py.flashinfer.{backend}"
        self.description = (f"FlashInfer's batch prefill on its {backend} backend "
                            "(ragged Q, K, V; bshd layout)")

    def supports(self, spec):
        why = _common_problems(spec)
        if spec.layout != "bshd":
            why.append("the ragged wrapper takes (tokens, heads, dim) tensors: --layout bshd")
        if (spec.head_dim, spec.dv) not in ((64, 64), (128, 128), (256, 256), (192, 128)):
            why.append("head dims 64, 128 and 256 (V's as Q's), or 192 with 128")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        return _Prefill(spec, io, self.backend)


class FlashInferDecode(_FlashInfer):
    name = "py.flashinfer.decode"
    description = ("FlashInfer's batch decode with tensor cores (one query token; the harness's "
                   "pages or its contiguous K and V as one page per sequence; paged and ragged "
                   "batches not yet run on a GPU)")
    paged_kv = True  # the harness's block table as its page indices
    ragged = True  # each sequence's keys as its last page's length

    def supports(self, spec):
        why = _common_problems(spec)
        if spec.q_len != 1:
            why.append("one query token per sequence (py.flashinfer.fa2/fa3 take more)")
        if spec.head_dim not in (64, 128, 256) or spec.dv != spec.head_dim:
            why.append("head dims 64, 128 and 256, V's as Q's")
        return "; ".join(why) or None

    def prepare(self, spec, io):
        return _Decode(spec, io)


PROVIDERS = [FlashInferPrefill("fa2"), FlashInferPrefill("fa3"), FlashInferDecode()]
