"""A user's numpy attention (B, H, N, D float32, no mask): the function bench/cpu_timeit.sh times
twice, through `attnprof run --py-provider` and with timeit in a fresh Python process."""
import numpy as np

import attnprof


def attention_fn(q, k, v):
    s = np.matmul(q, k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(q.shape[-1]))
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.matmul(p, v) / p.sum(axis=-1, keepdims=True)


attention = attnprof.provider(name="py.bench.numpy", device="cpu", framework="numpy",
                              requires=("numpy",), family="naive", fused=False)(attention_fn)
