"""GPU test: the torch cheats (torch_cheats.py) through `attnprof run`, at a small shape and at
B64 H16 N8192 D128 bf16 (the shape an H200 check once let a lazy provider pass at, with 8 ns a
launch): each must end with the status and fault that say what it did, and the honest one pass.
Exit 77 (ctest: skipped) without a CUDA PyTorch or an attnprof binary; 1 on any wrong row.

  ATTNPROF_BIN=build/attnprof python3 tests/python_gpu/test_cheats.py [small|large]...
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import torch
except ImportError:
    print("skipped: no torch in", sys.executable)
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: torch sees no CUDA device")
    sys.exit(77)
BIN = os.environ.get("ATTNPROF_BIN", os.path.join(HERE, "..", "..", "build", "attnprof"))
if not os.access(BIN, os.X_OK):
    print("skipped: no attnprof binary at", BIN, "(set ATTNPROF_BIN)")
    sys.exit(77)

# status, fault, words of the reason; (status, fault) alternatives where either is right.
EXPECT = {
    "honest": [("passed", "none", "")],
    "lazy": [("incorrect", "unwritten", "timed sample 1")],
    "memoize": [("incorrect", "stale", "new input values"),
                ("incorrect", "implausible", "more than this device can")],
    "zero_q": [("failed", "modified_inputs", "input q")],
    "toggle_q": [("failed", "modified_inputs", "input q")],
    "past_end": [("failed", "out_of_bounds", "past the end of o")],
    "default_stream": [("failed", "off_stream", "the timed stream does not wait for")],
    "side_stream": [("failed", "off_stream", "the timed stream does not wait for")],
    "nan": [("incorrect", "none", "1 non-finite")],
    "wrong_shape": [("failed", "provider", "")],
    "raises": [("failed", "provider", "the user's kernel is broken")],
    "exits": [("failed", "crash", "exited with status 3")],
    "sleeps": [("timeout", "timeout", "hang limit")],
}
SHAPES = {
    "small": "--batch 1 --heads 4 --kv-heads 2 --seq 256 --head-dim 64",
    "large": "--batch 64 --heads 16 --seq 8192 --head-dim 128",
}


def run(shape, cheats):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rows.jsonl")
        providers = ",".join("test.torch.cheat." + c for c in cheats)
        cmd = [BIN, "run", "--py-provider", os.path.join(HERE, "torch_cheats.py"),
               "--providers", providers, *SHAPES[shape].split(), "--dtype", "bf16",
               "--mask", "causal", "--hang-timeout", "30s", "--no-history", "--out", out]
        print("$", " ".join(cmd), flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if not os.path.exists(out):
            print(proc.stdout[-3000:], proc.stderr[-3000:])
            return None
        with open(out) as f:
            return [json.loads(line) for line in f if line.strip() and '"provider"' in line]


def main(shapes):
    wrong = 0
    for shape in shapes:
        rows = run(shape, EXPECT)
        if rows is None:
            print(f"FAILED {shape}: no journal")
            wrong += 1
            continue
        seen = {r["provider"].removeprefix("test.torch.cheat."): r for r in rows}
        for cheat, allowed in EXPECT.items():
            r = seen.get(cheat)
            if r is None:
                print(f"FAILED {shape} {cheat}: no row")
                wrong += 1
                continue
            ok = any(r["status"] == s and r["fault"] == f and words in r["reason"]
                     for s, f, words in allowed)
            figures = r.get("tflops", 0) if r["status"] != "passed" else 0
            verdict = "ok" if ok and not figures else "FAILED"
            wrong += verdict != "ok"
            print(f"{verdict} {shape} {cheat}: {r['status']} {r['fault']}: {r['reason'][:160]}"
                  f" (median {r['timing']['median_us']} us, {r.get('tflops', 0)} TFLOP/s)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or list(SHAPES)))
