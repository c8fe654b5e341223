#!/usr/bin/env python3
"""fp64 emulation of an fp8 attention backward's roundings: where the fp8 gradient bounds of
src/core/verify.cpp come from (docs/method.md, "fp8").

Inputs are unit-variance normals rounded to fp8 at the harness's per-tensor scale (inputs.hpp
fp8_tensor_scale: 2^3 e4m3, 2^10 e5m2). The emulated kernel rounds what cuDNN's fp8 backward
rounds: O to fp8 (D_i = dO_i . O_i is computed from it), P to fp8 at 2^8 before dV = P^T dO,
scale * P o (dP - D) (cuDNN's "dP", the gradient of Q K^T) to fp8 at the provider's dP scale before dQ = dS K and dK = dS^T Q, and each
gradient to fp8. Every other step is exact. Each row's relative L2 error is measured as the
harness does: against the largest of its norm, the RMS row norm of its tensor (dK, dV: of its
head) and, for dQ, its D floor (scale * |sum_j P_ij k_j| * sum_c |dO_ic O_ic|).

  python3 scripts/fp8_bwd_emulation.py            # prints the worst row per gradient
Needs numpy. Takes about a minute.
"""
import numpy as np

FORMATS = {"e4m3": (3, -6, 448.0, 8.0, 256.0), "e5m2": (2, -14, 57344.0, 1024.0, 16384.0)}


def to_fp8(x, scale, fmt):
    """x rounded to the format at `scale` (round to nearest even, saturating), as a real value."""
    mant, emin, largest = FORMATS[fmt][:3]
    y = np.abs(x * scale)
    e = np.maximum(np.floor(np.log2(np.maximum(y, 1e-300))), emin)
    step = 2.0 ** (e - mant)
    return np.sign(x) * np.minimum(np.round(y / step) * step, largest) / scale


def rel_rows(got, ref, floor=None):
    rms = np.sqrt((ref**2).sum(1).mean())
    den = np.maximum(np.linalg.norm(ref, axis=1), rms)
    if floor is not None:
        den = np.maximum(den, floor)
    return (np.linalg.norm(got - ref, axis=1) / den).max()


def head(rng, fmt, n, d, causal):
    x_scale, dp_scale = FORMATS[fmt][3], FORMATS[fmt][4]
    q, k, v, do = (to_fp8(rng.standard_normal((n, d)), x_scale, fmt) for _ in range(4))
    sc = 1 / np.sqrt(d)
    s = q @ k.T * sc
    if causal:
        s = np.where(np.tril(np.ones((n, n))) > 0, s, -np.inf)
    p = np.exp(s - s.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    o = p @ v
    dp = do @ v.T
    ds = p * (dp - (do * o).sum(1, keepdims=True))
    dq, dk, dv = ds @ k * sc, ds.T @ q * sc, p.T @ do
    d8 = (do * to_fp8(o, x_scale, fmt)).sum(1, keepdims=True)
    dv8 = to_fp8(to_fp8(p, 256.0, fmt).T @ do, x_scale, fmt)
    ds8 = to_fp8(sc * p * (dp - d8), dp_scale, fmt) / sc  # cuDNN's dP: the gradient of Q K^T
    dq8, dk8 = to_fp8(ds8 @ k * sc, x_scale, fmt), to_fp8(ds8.T @ q * sc, x_scale, fmt)
    floor = sc * np.linalg.norm(p @ k, axis=1) * np.abs(do * o).sum(1)
    return rel_rows(dq8, dq, floor), rel_rows(dk8, dk), rel_rows(dv8, dv), np.abs(sc * ds).max()


def main():
    rng = np.random.default_rng(2)
    for fmt in FORMATS:
        for n, causal, heads in ((512, True, 64), (2048, False, 4), (2048, True, 4)):
            worst = np.max([head(rng, fmt, n, 128, causal) for _ in range(heads)], axis=0)
            print(f"{fmt} N {n} {'causal' if causal else 'no mask'} x {heads} heads, D 128: "
                  f"dQ {worst[0]:.3f} dK {worst[1]:.3f} dV {worst[2]:.3f} (max |dP| {worst[3]:.2f})")


if __name__ == "__main__":
    main()
