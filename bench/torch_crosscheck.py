#!/usr/bin/env python3
"""PyTorch's own measurements of what attnprof measures, for a side-by-side check in one call.

Outside the C++ product: run it on the GPU machine in the same device call as `attnprof`, so
that both see the same card, clocks and libraries (absolute figures move ~7% between calls on
the lent H200, ../shared/ANCHORS.md). Everything is timed with triton.testing.do_bench, which
flushes L2 before every call, and reported as its median.

  ceilings   8192^3 bf16 GEMM (TFLOP/s), a 2 GiB device-to-device copy (TB/s, read + write)
  presets    seed-000, seed-003, fa-bench and decode (presets/*.toml), forward, inference
             (torch.no_grad, inputs without grad), with:
               naive         softmax(q @ k^T * D^-0.5 [causal: masked_fill(triu, -inf)]) @ v,
                             in the preset's dtype; GQA by viewing each KV group's query heads
                             as one matrix (no copy), like cuda.naive
               naive.expand  the same after k, v.repeat_interleave(group, dim=1), like
                             cuda.naive.expand (GQA shapes only)
               sdpa.math / sdpa.efficient / sdpa.flash / sdpa.cudnn
                             F.scaled_dot_product_attention inside sdpa_kernel(<backend>),
                             enable_gqa for GQA shapes
FLOPs follow attnprof's convention (docs/method.md): 4 * D per visible (query, key) pair,
exactly counted (a causal square gives N(N+1)/2 pairs, not N^2/2). Decode rows also give
bytes = K + V read once + Q + O, as TB/s. One JSON object per line goes to --out; a table is
printed at the end. Naive and math points whose N x N intermediates would pass ~40 GB are
skipped (a row says so).

  python3 bench/torch_crosscheck.py --out $OUT/torch_crosscheck.jsonl [--only fa-bench,decode]
"""

import argparse
import json
import math
import sys
import time
import warnings

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

MAX_INTERMEDIATE_BYTES = 40e9
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}
BACKENDS = {
    "sdpa.math": SDPBackend.MATH,
    "sdpa.efficient": SDPBackend.EFFICIENT_ATTENTION,
    "sdpa.flash": SDPBackend.FLASH_ATTENTION,
    "sdpa.cudnn": SDPBackend.CUDNN_ATTENTION,
}


def geometric(lo, hi):
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= 2
    return out


def preset_shapes():
    """(preset, B, Hq, Hkv, Nq, Nk, D, dtype, mask) for the four presets, as presets/*.toml."""
    shapes = []
    for n in geometric(64, 2048):
        shapes.append(("seed-000", 1, 12, 12, n, n, 64, "fp16", "none"))
        shapes.append(("seed-000", 1, 12, 3, n, n, 64, "fp16", "none"))
    for n in geometric(512, 4096):
        shapes.append(("seed-003", 32, 16, 16, n, n, 64, "fp16", "none"))
    for d in (64, 128):
        for mask in ("none", "causal"):
            for n in geometric(512, 16384):
                b, h = 16384 // n, 2048 // d
                shapes.append(("fa-bench", b, h, h, n, n, d, "bf16", mask))
    for nk in geometric(1024, 32768):
        shapes.append(("decode", 64, 32, 8, 1, nk, 128, "bf16", "causal-br"))
    return shapes


def visible_pairs(nq, nk, mask):
    if mask == "none":
        return nq * nk
    off = 0 if mask == "causal" else nk - nq  # key j visible to query i iff j <= i + off
    return sum(max(0, min(nk, i + off + 1)) for i in range(nq))


BENCH = {"warmup": 25, "rep": 100}  # do_bench's defaults, in ms; --warmup-ms / --rep-ms


def bench_ms(fn):
    # Warm-up first (cuBLAS handles, cuDNN graph build, autotuning stay out of the numbers).
    fn()
    torch.cuda.synchronize()
    return do_bench(fn, warmup=BENCH["warmup"], rep=BENCH["rep"], return_mode="median")


def peak_extra_mb(fn):
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 1e6


def naive_fn(q, k, v, causal_mask, expand):
    b, hq, nq, d = q.shape
    hkv, nk = k.shape[1], k.shape[2]
    g = hq // hkv
    scale = d ** -0.5

    def run():
        grouped = g > 1 and not expand
        kk, vv = k, v
        if g > 1 and expand:
            kk, vv = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
        if grouped:  # a group's query heads are adjacent in memory: one (g*Nq x D) matrix
            s = q.view(b, hkv, g * nq, d) @ kk.transpose(-2, -1)
        else:
            s = q @ kk.transpose(-2, -1)
        s = (s * scale).view(b, hq, nq, nk)
        if causal_mask is not None:
            s = s.masked_fill(causal_mask, float("-inf"))
        p = torch.softmax(s, dim=-1)
        if grouped:
            return (p.view(b, hkv, g * nq, nk) @ vv).view(b, hq, nq, -1)
        return p @ vv

    return run


def sdpa_fn(q, k, v, causal, backend):
    gqa = q.shape[1] != k.shape[1]

    def run():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    return run


def intermediate_bytes(name, scores, esize, causal):
    if name.startswith("naive"):
        return scores * esize * (4 if causal else 3)  # S, S * scale, (masked), P
    if name == "sdpa.math":
        return scores * (4 + 4 + 4 + 1 + esize)  # fp32 S, P, where(), eq() mask, P in dtype
    return 0


def record(out, row):
    out.write(json.dumps(row) + "\n")
    out.flush()
    return row


def measure_ceilings(out):
    rows = []
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = bench_ms(lambda: a @ b)
    rows.append(record(out, {"name": "gemm.bf16", "group": "ceilings",
                             "shape": {"m": n, "n": n, "k": n}, "median_ms": ms,
                             "tflops": 2 * n ** 3 / ms / 1e9}))
    del a, b
    elems = (2 << 30) // 4  # 2 GiB of fp32
    src = torch.randn(elems, device="cuda")
    dst = torch.empty_like(src)
    ms = bench_ms(lambda: dst.copy_(src))
    nbytes = 2 * src.numel() * src.element_size()  # read + write
    rows.append(record(out, {"name": "copy.d2d", "group": "ceilings",
                             "shape": {"bytes_each_way": nbytes // 2}, "median_ms": ms,
                             "tbps": nbytes / ms / 1e9}))
    del src, dst
    return rows


def measure_attention(out, shape):
    preset, b, hq, hkv, nq, nk, d, dtype_name, mask = shape
    dtype = DTYPES[dtype_name]
    causal = mask == "causal"
    esize = torch.tensor([], dtype=dtype).element_size()
    shape_d = {"B": b, "Hq": hq, "Hkv": hkv, "Nq": nq, "Nk": nk, "D": d, "dtype": dtype_name,
               "mask": mask}
    flops = 4.0 * d * visible_pairs(nq, nk, mask) * b * hq
    nbytes = esize * (2 * b * hkv * nk * d + 2 * b * hq * nq * d)
    q = torch.randn(b, hq, nq, d, device="cuda", dtype=dtype)
    k = torch.randn(b, hkv, nk, d, device="cuda", dtype=dtype)
    v = torch.randn(b, hkv, nk, d, device="cuda", dtype=dtype)
    causal_mask = torch.triu(torch.ones(nq, nk, device="cuda", dtype=torch.bool), 1) \
        if causal else None  # built once: a real model caches it too

    impls = [("naive", naive_fn(q, k, v, causal_mask, expand=False))]
    if hq != hkv:
        impls.append(("naive.expand", naive_fn(q, k, v, causal_mask, expand=True)))
    # decode's bottom-right mask with one query sees every key: no mask to pass
    impls += [(name, sdpa_fn(q, k, v, causal, be)) for name, be in BACKENDS.items()]

    rows = []
    scores = b * hq * nq * nk
    for name, fn in impls:
        row = {"name": name, "group": preset, "shape": shape_d, "flops": flops, "bytes": nbytes,
               "flop_convention": "4*D*visible_pairs*B*Hq"}
        need = intermediate_bytes(name, scores, esize, causal)
        if need > MAX_INTERMEDIATE_BYTES:
            row["skipped"] = f"N x N intermediates ~{need / 1e9:.0f} GB > 40 GB"
            rows.append(record(out, row))
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with torch.no_grad():
                    ms = bench_ms(fn)
                    row["peak_extra_mb"] = peak_extra_mb(fn)
                row["median_ms"] = ms
                row["tflops"] = flops / ms / 1e9
                row["tbps"] = nbytes / ms / 1e9
            except torch.cuda.OutOfMemoryError as e:
                row["error"] = "oom: " + str(e).splitlines()[0]
            except RuntimeError as e:  # no kernel of this backend for the shape: say why
                why = "; ".join(str(w.message).splitlines()[0] for w in caught[:3])
                row["error"] = (str(e).splitlines()[0] + (" " + why if why else ""))[:400]
        torch.cuda.empty_cache()
        rows.append(record(out, row))
    return rows


def environment():
    p = torch.cuda.get_device_properties(0)
    import triton
    return {"name": "env", "gpu": p.name, "sm_count": p.multi_processor_count,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "triton": triton.__version__,
            "allow_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
            "timer": f"triton.testing.do_bench(warmup={BENCH['warmup']}, rep={BENCH['rep']}, "
                     "median), L2 flushed per call",
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def print_table(rows):
    print(f"{'name':<16} {'group':<9} {'shape':<44} {'ms':>9} {'TFLOP/s':>8} {'TB/s':>6}")
    for r in rows:
        s = r["shape"]
        if "B" in s:
            shape = (f"B{s['B']} H{s['Hq']}/{s['Hkv']} {s['Nq']}x{s['Nk']} D{s['D']} "
                     f"{s['dtype']} {s['mask']}")
        else:
            shape = " ".join(f"{k}={v}" for k, v in s.items())
        if "median_ms" not in r:
            why = r.get("skipped") or r.get("error", "")
            print(f"{r['name']:<16} {r['group']:<9} {shape:<44} {'-':>9}  {why[:60]}")
            continue
        tf = f"{r['tflops']:.1f}" if "tflops" in r else ""
        tb = f"{r['tbps']:.2f}" if "tbps" in r else ""
        print(f"{r['name']:<16} {r['group']:<9} {shape:<44} {r['median_ms']:>9.4f} {tf:>8} {tb:>6}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="JSON lines, one per measurement")
    ap.add_argument("--only", default="ceilings,seed-000,seed-003,fa-bench,decode",
                    help="comma-separated groups to run, in this order")
    ap.add_argument("--warmup-ms", type=float, default=25, help="do_bench warm-up (25)")
    ap.add_argument("--rep-ms", type=float, default=100, help="do_bench repetition time (100)")
    args = ap.parse_args()
    groups = args.only.split(",")
    BENCH.update(warmup=args.warmup_ms, rep=args.rep_ms)
    if not torch.cuda.is_available():
        sys.exit("torch_crosscheck: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default, stated
    torch.manual_seed(0)
    start = time.time()
    rows = []
    with open(args.out, "w") as out:
        record(out, environment())
        for group in groups:
            if group == "ceilings":
                rows += measure_ceilings(out)
            for shape in preset_shapes():
                if shape[0] == group:
                    rows += measure_attention(out, shape)
    print_table(rows)
    print(f"torch_crosscheck: {len(rows)} rows in {time.time() - start:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
