#!/usr/bin/env python3
"""The main loop of one kernel in a `cuobjdump -sass` listing: its instruction mix and its order.

    cuobjdump -sass -arch sm_90a build-gpu/.../flash_bwd_kernel.cu.o > ours.sass
    python3 scripts/sass_loop.py ours.sass 'kv_kernelI13__nv_bfloat16Li128ELb1'

Every loop (a backward branch) of the first function whose name contains the given text is
listed; the one detailed holds the most tensor-core instructions (the shortest of those: an outer
loop holds the same and more). Printed for it: its address range and instruction count, the count
of each opcode (without modifiers), and its order, every instruction other than the tensor-core,
shared-memory, copy, barrier, atomic and branch ones shown as `.` (runs collapsed: `HMMAx4`).
How bench/results/h200/2026-12-03-flash-bwd compares cuda.flash's backward with FA2's.
"""
import re
import sys
from collections import Counter

SHOWN = {"HMMA", "HGMMA", "LDSM", "LDS", "STS", "BAR", "MUFU", "REDG", "LDGSTS", "DEPBAR", "BRA"}


def instructions(path, name):
    """(address, text) of each instruction of the first function whose name contains `name`."""
    found, out = None, []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.search(r"Function : (\S+)", line)
        if m:
            if found is not None:
                break
            found = m.group(1) if name in m.group(1) else None
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m and found is not None:
            out.append((int(m.group(1), 16), m.group(2)))
    if found is None:
        sys.exit(f"sass_loop: no function containing {name!r} in {path}")
    return out


def opcode(text):
    word = text.split()[1] if text.startswith("@") else text.split()[0]
    return word.split(".")[0]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: sass_loop.py LISTING.sass FUNCTION-NAME-PART")
    ins = instructions(sys.argv[1], sys.argv[2])
    loops = []  # (first address, last address, instructions, tensor-core instructions)
    for addr, text in ins:
        m = re.search(r"BRA (?:`\(\.L_x_\d+\) )?0x([0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr:
            lo = int(m.group(1), 16)
            inside = [t for a, t in ins if lo <= a <= addr]
            mma = sum(opcode(t) in ("HMMA", "HGMMA") for t in inside)
            loops.append((lo, addr, len(inside), mma))
            print(f"a loop {lo:#x}-{addr:#x}: {len(inside)} instructions, {mma} HMMA/HGMMA")
    if not loops:
        sys.exit("sass_loop: the function has no loop")
    # The step loop: the most tensor-core instructions, and of those the shortest (an outer loop
    # around it holds the same ones and more).
    loop = min(loops, key=lambda l: (-l[3], l[2]))
    body = [text for addr, text in ins if loop[0] <= addr <= loop[1]]
    print(f"loop {loop[0]:#x}-{loop[1]:#x}: {len(body)} instructions")
    print(" ".join(f"{op} {n}" for op, n in Counter(map(opcode, body)).most_common()))
    runs, prev, count = [], None, 0
    for text in body:
        op = opcode(text)
        op = op if op in SHOWN else "."
        if op == prev:
            count += 1
            continue
        if prev is not None:
            runs.append(prev if count == 1 else f"{prev}x{count}")
        prev, count = op, 1
    runs.append(prev if count == 1 else f"{prev}x{count}")
    print(" ".join(runs))


if __name__ == "__main__":
    main()
