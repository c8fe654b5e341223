#!/usr/bin/env python3
"""Joins attnprof JSONL journals with bench/torch_crosscheck.py's output of the same device call
and prints a Markdown table: the same recipe timed by both tools, and their ratio.

    python3 bench/side_by_side.py bench/results/h200/torch_crosscheck.jsonl bench/results/h200/*.jsonl

Pairs: cuda.naive ~ naive, cuda.naive.expand ~ naive.expand, cuda.math ~ sdpa.math,
cudnn.sdpa and cudnn.sdpa.infer ~ sdpa.cudnn, and each LibTorch provider with the recipe it runs (torch.naive ~ naive,
torch.sdpa.X ~ sdpa.X). Both tools count FLOPs as 4*D per visible pair. A last table gives the
range of the time ratio per provider and preset.
"""
import gzip
import json
import sys


def _open(path):
    """A journal, gzip-compressed where its name ends in .gz (bench/results keeps large ones so)."""
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)

PAIRS = {"cuda.naive": "naive", "cuda.naive.expand": "naive.expand", "cuda.math": "sdpa.math",
         "cudnn.sdpa": "sdpa.cudnn", "cudnn.sdpa.infer": "sdpa.cudnn", "torch.naive": "naive", "torch.sdpa.flash": "sdpa.flash",
         "torch.sdpa.efficient": "sdpa.efficient", "torch.sdpa.cudnn": "sdpa.cudnn",
         "torch.sdpa.math": "sdpa.math"}


def key(b, hq, hkv, nq, nk, d, dtype, mask):
    return (b, hq, hkv, nq, nk, d, dtype, mask)


def main(torch_path, journals):
    torch = {}
    for line in _open(torch_path):
        r = json.loads(line)
        s = r.get("shape")
        if not s or "B" not in s or "median_ms" not in r:
            continue
        k = key(s["B"], s["Hq"], s["Hkv"], s["Nq"], s["Nk"], s["D"], s["dtype"], s["mask"])
        torch[(r["name"], k)] = r
    print("| preset | provider | shape | attnprof median | torch median | attnprof / torch time | attnprof TFLOP/s |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    ratios = {}
    for path in journals:
        preset = path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        for line in _open(path):
            r = json.loads(line)
            if r["status"] != "passed" or r["provider"] not in PAIRS:
                continue
            s = r["spec"]
            k = key(s["batch"], s["q_heads"], s["kv_heads"], s["q_len"], s["kv_len"], s["head_dim"],
                    s["dtype"], s["mask"])
            t = torch.get((PAIRS[r["provider"]], k))
            if t is None:
                continue
            ours = r["timing"]["median_us"] / 1000
            label = f"B{k[0]} H{k[1]}/{k[2]} Nq{k[3]} Nk{k[4]} D{k[5]} {k[6]} {k[7]}"
            ratio = ours / t["median_ms"]
            ratios.setdefault((preset, r["provider"]), []).append((ratio, ours))
            print(f"| {preset} | {r['provider']} | {label} | {ours:.4g} ms | {t['median_ms']:.4g} ms "
                  f"| {ratio:.3f} | {r['tflops']:.1f} |")
    print()
    print("| preset | provider | points | time ratio min | median | max | max over kernels > 100 us |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (preset, provider), vals in sorted(ratios.items()):
        rs = sorted(v for v, _ in vals)
        long = [v for v, ours in vals if ours > 0.1]
        worst_long = f"{max(long):.3f}" if long else "-"
        print(f"| {preset} | {provider} | {len(rs)} | {rs[0]:.3f} | {rs[len(rs) // 2]:.3f} | "
              f"{rs[-1]:.3f} | {worst_long} |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: side_by_side.py torch_crosscheck.jsonl attnprof.jsonl...")
    main(sys.argv[1], sys.argv[2:])
