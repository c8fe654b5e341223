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


def _noisy(q, k, v, spec, share):
    """The exact attention with every output element off by `share` of itself (alternating sign):
    a row's relative L2 error is exactly `share`."""
    o = attention.fn(q, k, v, spec)  # the decorated function underneath
    signs = np.where(np.arange(o.shape[-1]) % 2 == 0, 1.0, -1.0)
    return o * (1 + share * signs)


@attnprof.provider(name="py.user.quantized", device="cpu", framework="numpy", requires=("numpy",),
                   quantization="test: every element off by 1%", output_tolerance=0.05)
def quantized(q, k, v, spec):
    """1% off: within the bound it declares, outside fp32's."""
    return _noisy(q, k, v, spec, 0.01)


@attnprof.provider(name="py.user.overclaimed", device="cpu", framework="numpy",
                   requires=("numpy",), quantization="test: every element off by 20%",
                   output_tolerance=0.5)
def overclaimed(q, k, v, spec):
    """20% off, declaring 50%: no declared bound goes above 10%."""
    return _noisy(q, k, v, spec, 0.2)


if __name__ == "__main__":
    rows = attnprof.profile(attention, compare="cpu.naive", device="cpu", heads=2, seq=64,
                            head_dim=16, dtype="fp32")
    print(len(rows))
