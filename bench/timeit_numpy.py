"""timeit of bench/numpy_attention.py's function in this (fresh) process: B 1, H 8, N, D 64 float32
inputs of the same distribution as attnprof's, one warm-up call, then REPEATS calls, each timed
alone. Prints the median and the minimum in ms. Usage: timeit_numpy.py N REPEATS"""
import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_attention import attention_fn  # noqa: E402

n, repeats = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
q, k, v = (rng.uniform(-1, 1, (1, 8, n, 64)).astype(np.float32) for _ in range(3))
attention_fn(q, k, v)
times = sorted(timeit.repeat(lambda: attention_fn(q, k, v), number=1, repeat=repeats))
print(f"median {1e3 * times[len(times) // 2]:.3f} ms, min {1e3 * times[0]:.3f} ms")
