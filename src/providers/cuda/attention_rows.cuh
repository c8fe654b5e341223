// What attnprof's own attention kernels (decode_*.cu, flash_kernel.cu) mean by a query row: its
// sequence's lengths (uniform, or a ragged batch's), the keys its mask lets it see, its scaled
// score in base 2 (after the logit softcap), its sink, and how its running max and sum become
// the factor O is scaled by and the log-sum-exp. `Args` is a kernel's argument struct: it has
// q_len, kv_len, seq_q, seq_kv (null: uniform), mask, window, scale, softcap and sink.
#pragma once

#include <cuda_runtime.h>

#include "attnprof/spec.hpp"
#include "providers/cuda/warp_mma.cuh"

namespace attnprof::cuda {

// One sequence's lengths and its mask's diagonal offset (spec.hpp Mask, per sequence).
struct Seq {
  int nq, nk, off;
};
template <class Args>
__device__ __forceinline__ Seq seq_of(const Args& a, int b) {
  Seq s{a.q_len, a.kv_len, 0};
  if (a.seq_q != nullptr) {
    s.nq = a.seq_q[b];
    s.nk = a.seq_kv[b];
  }
  s.off = a.mask == MaskKind::causal_tl ? 0 : s.nk - s.nq;
  return s;
}
// The first and last keys query `i` sees (last < first: none).
template <class Args>
__device__ __forceinline__ int first_key(const Args& a, const Seq& s, int i) {
  return a.mask == MaskKind::window ? max(0, i + s.off - a.window + 1) : 0;
}
template <class Args>
__device__ __forceinline__ int last_key(const Args& a, const Seq& s, int i) {
  return a.mask == MaskKind::none ? s.nk - 1 : min(s.nk - 1, i + s.off);
}

// A scaled score in base 2, after the softcap (natural units in, base 2 out).
template <class Args>
__device__ __forceinline__ float score2(const Args& a, float dot) {
  float s = dot * a.scale;
  if (a.softcap > 0) s = a.softcap * tanhf(s / a.softcap);
  return s * kLog2e;
}

// The sink logit of query head h in base 2 (-inf: none).
template <class Args>
__device__ __forceinline__ float sink2(const Args& a, int h) {
  return a.sink != nullptr ? a.sink[h] * kLog2e : -INFINITY;
}

// A row's end: from its max `m` (base 2; -inf: no key seen) and its sum `l` of 2^(s - m), with
// the sink `s2` (base 2; -inf: none) joining both, the factor its unnormalized P.V is scaled by
// and its log-sum-exp (natural units; -inf where the row sees nothing at all).
struct RowEnd {
  float factor, lse;
};
__device__ __forceinline__ RowEnd end_row(float m, float l, float s2) {
  const float top = fmaxf(m, s2);
  const float w = m == -INFINITY ? 0.f : exp2f(m - top);
  const float total = l * w + (s2 == -INFINITY ? 0.f : exp2f(s2 - top));
  if (!(total > 0)) return {0.f, -INFINITY};
  return {w / total, (top + log2f(total)) * kLn2};
}

}  // namespace attnprof::cuda
