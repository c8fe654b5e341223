#!/usr/bin/env python3
"""Where do_bench and attnprof part on decode: the same SDPA call timed four ways in one process.

Outside the C++ product (like torch_crosscheck.py): run it on the GPU machine in the same device
call as `attnprof run` and `attnprof trace --ncu` at the same points (scripts/device/
decode_arbiter.sh), so that Nsight Compute's kernel time can arbitrate. For B 64, 32/8 heads,
D 128, bf16, one query token (no mask: one token sees every key, as bottom-right causal), KV 1k,
8k and 32k, and PyTorch's cuDNN and
flash SDPA backends (enable_gqa), it records:

  do_bench_median / do_bench_mean
        triton.testing.do_bench(fn) with return_mode "median" and "mean" (its default): the L2 is
        cleared by zeroing a 256 MB buffer before each call, CUDA events around each call
  graph_median
        triton.testing.do_bench_cudagraph(fn): the calls replayed from a CUDA graph (no Python
        or launch gap between the start event and the kernel)
  kernels_median
        the kernels' own GPU time (torch.profiler, CUPTI) of the same loop do_bench runs (clear,
        call): per call, the sum of its kernels' durations, without the clearing kernel
  event_minus_kernels_median
        per call, the event interval do_bench would read minus that call's kernel time: what the
        events count that is not the attention's kernels (launch gap, clearing tail)

  kernels_after_read_median_ms
        the same with the L2 cleared by reading the 256 MB buffer (a sum) instead of zeroing it:
        no dirty lines for the attention's kernels to write back

One JSON object per (point, backend) to --out; a table at the end. With --ncu-target it only
calls each backend's function --calls times per point, for Nsight Compute to time the kernels:

  python3 bench/decode_arbiter.py --out $OUT/decode_arbiter.jsonl
  ncu --clock-control none -k regex:'flash|sdpa' --metrics gpu__time_duration.sum \
      python3 bench/decode_arbiter.py --ncu-target
"""

import argparse
import json
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile
from triton.testing import do_bench, do_bench_cudagraph

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
B, HQ, HKV, D = 64, 32, 8, 128
PROFILED_CALLS = 30


def make_fn(nk, backend):
    g = torch.Generator(device="cuda").manual_seed(nk)
    q = torch.randn(B, HQ, 1, D, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(B, HKV, nk, D, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(B, HKV, nk, D, device="cuda", dtype=torch.bfloat16, generator=g)

    def fn():
        # One query token against the whole KV: bottom-right causal sees every key, as no mask.
        with sdpa_kernel(BACKENDS[backend]):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    # Minimum traffic: Q, K and V read once, O (Q's size) written once; 2 bytes an element.
    return fn, 2 * (2 * q.numel() + k.numel() + v.numel())


def own_kernels(fn):
    """The names of the kernels fn itself launches (one call under the profiler)."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}


def profiled(fn, clear):
    """Kernel time per call and event interval per call, over the loop do_bench runs."""
    names = own_kernels(fn)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(PROFILED_CALLS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(PROFILED_CALLS)]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(PROFILED_CALLS):
            clear()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
    events_ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    kernels = [
        e for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA and e.name in names
    ]
    # Kernels in launch order: each call launches the same number of them.
    kernels.sort(key=lambda e: e.time_range.start)
    per_call = len(kernels) // PROFILED_CALLS if PROFILED_CALLS else 0
    sums_ms = []
    for i in range(PROFILED_CALLS):
        chunk = kernels[i * per_call:(i + 1) * per_call]
        sums_ms.append(sum(e.time_range.elapsed_us() for e in chunk) / 1e3)
    return sums_ms, events_ms, per_call, sorted(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--kv", default="1024,8192,32768")
    ap.add_argument("--ncu-target", action="store_true", help="only call each function")
    ap.add_argument("--calls", type=int, default=3)
    args = ap.parse_args()
    if args.ncu_target:
        for nk in (int(x) for x in args.kv.split(",")):
            for backend in BACKENDS:
                fn, _ = make_fn(nk, backend)
                for _ in range(args.calls):
                    fn()
                torch.cuda.synchronize()
                print(f"called {backend} at KV {nk} {args.calls} times", flush=True)
        return
    if not args.out:
        ap.error("--out is required (or --ncu-target)")
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
    rows = []
    with open(args.out, "w") as out:
        for nk in (int(x) for x in args.kv.split(",")):
            for backend in BACKENDS:
                fn, nbytes = make_fn(nk, backend)
                fn()
                torch.cuda.synchronize()
                row = {
                    "shape": f"B{B} H{HQ}/{HKV} Nq1 Nk{nk} D{D} bf16 none",
                    "backend": backend,
                    "bytes": nbytes,
                    "do_bench_median_ms": do_bench(fn, return_mode="median"),
                    "do_bench_mean_ms": do_bench(fn, return_mode="mean"),
                    "graph_median_ms": do_bench_cudagraph(fn, return_mode="median"),
                }
                kernels_ms, events_ms, per_call, names = profiled(fn, cache.zero_)
                read_ms, _, _, _ = profiled(fn, lambda: cache.sum())
                row["kernels_after_read_median_ms"] = statistics.median(read_ms)
                row["kernels_median_ms"] = statistics.median(kernels_ms)
                row["profiled_events_median_ms"] = statistics.median(events_ms)
                row["event_minus_kernels_median_ms"] = statistics.median(
                    e - k for e, k in zip(events_ms, kernels_ms))
                row["kernels_per_call"] = per_call
                row["kernels"] = names
                out.write(json.dumps(row) + "\n")
                out.flush()
                rows.append(row)
    cols = ("do_bench_median_ms", "do_bench_mean_ms", "graph_median_ms", "kernels_median_ms",
            "kernels_after_read_median_ms", "event_minus_kernels_median_ms")
    print("| shape | backend | " + " | ".join(cols) + " | TB/s by kernels |")
    for r in rows:
        tbps = r["bytes"] / (r["kernels_median_ms"] * 1e-3) / 1e12 if r["kernels_median_ms"] else 0
        print(f"| {r['shape']} | {r['backend']} | " + " | ".join(f"{r[c]:.4f}" for c in cols) +
              f" | {tbps:.2f} |")


if __name__ == "__main__":
    main()
