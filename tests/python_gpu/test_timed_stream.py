"""GPU test: every available CUDA Python provider runs its kernels on the stream the instrument
times (the worker's Host puts a torch provider on it with torch.cuda.ExternalStream; ONNX Runtime
gets it as `user_compute_stream`).

For each provider: the harness's calls (Host.prepare, bind, launch) with a stream made here as the
instrument's, under the PyTorch profiler (CUPTI): every kernel a launch ran must carry the CUPTI
stream id of a marker kernel enqueued on that stream, and none the default stream's. Exit 77
(ctest: skipped) without a CUDA PyTorch; 1 when a provider's kernels ran elsewhere or none ran.

  python3 tests/python_gpu/test_timed_stream.py [PROVIDER...]   (default: every available one)
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

try:
    import torch
except ImportError:
    print("skipped: no torch in", sys.executable)
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: torch sees no CUDA device")
    sys.exit(77)

from attnprof import _abi, _loader  # noqa: E402
from attnprof._host import Host  # noqa: E402

SPEC = {"batch": 2, "q_heads": 8, "kv_heads": 8, "q_len": 512, "kv_len": 512, "head_dim": 64,
        "v_head_dim": 0, "dtype": "fp16", "mask": "causal", "mode": "fwd", "layout": "bhsd",
        "scale": 0.0}


def io_struct(tensors):
    """The C struct the library hands the worker, over tensors allocated here (bhsd, fp16)."""
    io = _abi.IoStruct()
    for i, role in enumerate(_abi.ROLES):
        t = tensors.get(role)
        if t is None:
            continue
        c = io.t[i]
        c.data = t.data_ptr()
        c.dtype = _abi.DTYPES.index("fp32" if t.dtype == torch.float32 else "fp16")
        c.layout = 0
        c.batch, c.heads, c.len = t.shape[0], t.shape[1], t.shape[2]
        c.dim = t.shape[3] if t.dim() == 4 else 1
    return io


def kernel_streams(trace_path):
    """(name, CUPTI stream id, start us, end us) of every kernel, in start order."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    out = [(e["name"], e["args"].get("stream"), float(e["ts"]), float(e["ts"]) + float(e["dur"]))
           for e in events if e.get("cat") == "kernel" and "args" in e]
    return sorted(out, key=lambda k: k[2])


def check(host, index, provider, timed):
    s = SPEC
    g = torch.Generator(device="cuda").manual_seed(1)
    shape = (s["batch"], s["q_heads"], s["q_len"], s["head_dim"])
    tensors = {r: torch.randn(shape, device="cuda", dtype=torch.float16, generator=g) * 0.5
               for r in ("q", "k", "v")}
    tensors["o"] = torch.full(shape, float("nan"), device="cuda", dtype=torch.float16)
    if provider.writes_lse:
        tensors["lse"] = torch.zeros(shape[:3], device="cuda", dtype=torch.float32)
    sets = (_abi.IoStruct * 1)(io_struct(tensors))
    reason = host.supports(index, {"spec": s})["reason"]
    if reason:
        return f"skipped ({reason})"
    pointer = timed.cuda_stream
    handle = host.prepare(index, {"spec": s, "threads": 0}, sets, pointer)["run"]
    host.bind(handle, sets, 1)
    host.launch(handle, 0, pointer)  # once untraced: lazy initialization
    torch.cuda.synchronize()
    own = getattr(provider, "own_streams", False)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            with torch.cuda.stream(timed):
                marker = torch.ones(1, device="cuda")  # a kernel on the timed stream
            torch.cuda.synchronize()
            torch.ones(1, device="cuda")  # one on the default stream
            torch.cuda.synchronize()
            if own:  # what the launch must wait for, and what must wait for the launch
                with torch.cuda.stream(timed):
                    torch.cuda._sleep(20_000_000)
            host.launch(handle, 0, pointer)
            if own:
                with torch.cuda.stream(timed):
                    after = torch.ones(1, device="cuda")
            torch.cuda.synchronize()
        prof.export_chrome_trace(trace)
        kernels = kernel_streams(trace)
    host.publish(handle, 0, pointer)
    torch.cuda.synchronize()
    host.release(handle)
    del marker
    if len(kernels) < 3 and not own:
        return f"FAILED: {len(kernels)} kernels traced, at least 3 expected"
    timed_id, default_id = kernels[0][1], kernels[1][1]
    launched = kernels[2:]
    if timed_id == default_id:
        return f"FAILED: the timed stream and the default stream share CUPTI id {timed_id}"
    if own:
        return check_ordered(kernels[2:], timed_id, tensors)
    elsewhere = [(n, st) for n, st, _, _ in launched if st != timed_id]
    if elsewhere:
        return (f"FAILED: {len(elsewhere)} of {len(launched)} kernels off the timed stream "
                f"{timed_id}: {elsewhere[:3]}")
    if not torch.isfinite(tensors["o"].float()).all():
        return "FAILED: the output was not written"
    if not launched:
        return "FAILED: no kernel ran"
    return f"ok ({len(launched)} kernels on stream {timed_id}: {launched[0][0][:60]})"


def check_ordered(kernels, timed_id, tensors):
    """A provider on streams of its own: its kernels start after the spin on the timed stream
    ends and end before the timed stream's next kernel starts."""
    on_timed = [k for k in kernels if k[1] == timed_id]
    theirs = [k for k in kernels if k[1] != timed_id]
    if len(on_timed) < 2 or not theirs:
        return f"FAILED: {len(on_timed)} timed-stream and {len(theirs)} provider kernels traced"
    spin, after = on_timed[0], on_timed[-1]
    early = [k[0][:50] for k in theirs if k[2] < spin[3]]
    late = [k[0][:50] for k in theirs if k[3] > after[2]]
    if early or late:
        return (f"FAILED: kernels before the timed stream's spin ended {early[:2]} or after its "
                f"next kernel began {late[:2]}")
    if not torch.isfinite(tensors["o"].float()).all():
        return "FAILED: the output was not written"
    return (f"ok ({len(theirs)} kernels on its own streams, all inside the timed stream's window: "
            f"{theirs[0][0][:50]})")


def main(names):
    providers = [p for p in _loader.builtin() if p.device == "cuda"]
    if names:
        providers = [p for p in providers if p.name in names]
    host = Host(providers)
    timed = torch.cuda.Stream()
    failed = ran = 0
    for index, p in enumerate(providers):
        why = p.availability()
        if why:
            print(f"{p.name}: skipped (unavailable: {why})")
            continue
        try:
            verdict = check(host, index, p, timed)
        except Exception as e:  # a provider that cannot run here says why; not a stream failure
            verdict = f"FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(f"{p.name}: {verdict}", flush=True)
        failed += verdict.startswith("FAILED")
        ran += verdict.startswith("ok")
    print(f"{ran} providers ran on the timed stream, {failed} failed")
    return 1 if failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
