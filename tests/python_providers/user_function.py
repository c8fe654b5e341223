"""A user's attention function, made a provider with the decorator: numpy on the CPU, every
mask through the spec (what a 15-line user file looks like)."""
import numpy as np

import attnprof
from attnprof.masks import numpy_mask


@attnprof.provider(name="py.user.softmax", device="cpu", framework="numpy", requires=("numpy",),
                   family="naive", fused=False)
def attention(q, k, v, spec):
    k = np.repeat(k, spec.group_size, axis=1)
    v = np.repeat(v, spec.group_size, axis=1)
    s = (q @ k.transpose(0, 1, 3, 2)).astype(np.float64) * spec.softmax_scale
    mask = numpy_mask(spec)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = p.sum(axis=-1, keepdims=True)
    return (p @ v) / np.where(total > 0, total, 1)


@attnprof.provider(name="py.user.wrong", device="cpu", framework="numpy", requires=("numpy",))
def wrong(q, k, v):
    """No spec parameter: runs only unmasked points with the default scale; and it is wrong."""
    return q * 0.5


if __name__ == "__main__":
    rows = attnprof.profile(attention, compare="cpu.naive", device="cpu", heads=2, seq=64,
                            head_dim=16, dtype="fp32")
    print(len(rows))
