#!/usr/bin/env python3
"""The verification evidence of journals (docs/method.md, "Verification"): per provider and dtype,
the worst row error of every checked point against its bound, the worst LSE error, how many points
had every row checked, the device reference's largest disagreement with the host's fp64, and what
verifying cost. Prints a markdown table.

    python3 bench/verify_summary.py bench/results/h200/<run>/*.jsonl
"""
import gzip
import json
import statistics
import sys
from collections import defaultdict


def _open(path):
    """A journal, gzip-compressed where its name ends in .gz (bench/results keeps large ones so)."""
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)


def number(x):
    if isinstance(x, str):
        return float(x)  # "inf", "nan", "-inf"
    return float(x)


def main(paths):
    groups = defaultdict(list)
    for path in paths:
        with _open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if r["status"] not in ("passed", "incorrect"):
                    continue
                key = (r["provider"], r["spec"]["dtype"], r["spec"]["mode"])
                groups[key].append(r)
    print("| provider | dtype | mode | points | incorrect | all rows checked | worst row error / bound "
          "| worst row error | worst LSE error / bound | reference disagreement | verify s (median, max) |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst_by_dtype = {}
    for (provider, dtype, mode), rows in sorted(groups.items()):
        v = [r["verify"] for r in rows]
        ratio = max(number(x["rel_l2_err"]) / number(x["tolerance"]) for x in v)
        worst = max(number(x["rel_l2_err"]) for x in v)
        lse = [number(x["lse_max_abs_err"]) / number(x["lse_tolerance"]) for x in v
               if number(x["lse_max_abs_err"]) >= 0]
        dis = [number(x.get("reference_disagreement", -1)) for x in v]
        dis = [d for d in dis if d >= 0]
        secs = [number(x.get("seconds", 0)) for x in v]
        full = sum(1 for x in v if x["rows_checked"] == x["rows_total"])
        bad = sum(1 for r in rows if r["status"] == "incorrect")
        print(f"| {provider} | {dtype} | {mode} | {len(rows)} | {bad} | {full} | {ratio:.3f} "
              f"| {worst:.3g} | {max(lse):.3f} | " if lse else
              f"| {provider} | {dtype} | {mode} | {len(rows)} | {bad} | {full} | {ratio:.3f} "
              f"| {worst:.3g} | - | ", end="")
        print(f"{max(dis):.2g} | " if dis else "- | ", end="")
        print(f"{statistics.median(secs):.3f}, {max(secs):.3f} |")
        w = worst_by_dtype.setdefault((dtype, mode), (0.0, ""))
        if ratio > w[0]:
            worst_by_dtype[(dtype, mode)] = (ratio, provider)
    print()
    print("| dtype | mode | worst row error / bound | provider |")
    print("| --- | --- | ---: | --- |")
    for (dtype, mode), (ratio, provider) in sorted(worst_by_dtype.items()):
        print(f"| {dtype} | {mode} | {ratio:.3f} | {provider} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
