import atexit, json, os, resource, time
import numpy as np
import attnprof
log = []
def attention_fn(q, k, v):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt; t0 = time.perf_counter()
    s = np.matmul(q, k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(q.shape[-1]))
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    o = np.matmul(p, v) / p.sum(axis=-1, keepdims=True)
    log.append((time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))
    return o
@atexit.register
def _dump():
    if log:
        ts = sorted(x[0] for x in log); fs = sorted(x[1] for x in log)
        with open(os.environ.get("TM_OUT", "/tmp/tm/prov.out"), "a") as f:
            f.write(f"calls {len(log)} median {ts[len(ts)//2]*1e3:.2f} ms faults/call median {fs[len(fs)//2]} flags {q_flags}\n")
q_flags = {}
attention = attnprof.provider(name="py.tm.numpy", device="cpu", framework="numpy", requires=("numpy",), family="naive", fused=False)(attention_fn)
