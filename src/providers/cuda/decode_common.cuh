// What cuda.decode's two kernels share (decode_kernel.cu: CUDA cores, any query rows up to
// kMaxDecodeRows; decode_mma.cu: tensor cores, up to 16 rows): element conversions, the
// asynchronous copies, one sequence's lengths and mask, where a K/V row lies, and how a CTA's
// sums for one output row become O and the LSE (one split) or a partial sum (several).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "providers/cuda/decode_kernel.cuh"

namespace attnprof::cuda::decode {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

template <class T>
__device__ __forceinline__ void widen8(const uint4& raw, float* f) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 x = __bfloat1622float2(h[i]);
      f[2 * i] = x.x;
      f[2 * i + 1] = x.y;
    }
  } else {
    const auto* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 x = __half22float2(h[i]);
      f[2 * i] = x.x;
      f[2 * i + 1] = x.y;
    }
  }
}

template <class T>
__device__ __forceinline__ T narrow(float x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(x);
  } else {
    return __float2half_rn(x);
  }
}

// 16 bytes global -> shared, asynchronously; `valid` false zero-fills without reading.
__device__ __forceinline__ void copy16(void* smem, const void* gmem, bool valid) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int n = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n));
}
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// One sequence's lengths and its mask's diagonal offset (spec.hpp Mask, per sequence).
struct Seq {
  int nq, nk, off;
};
__device__ __forceinline__ Seq seq_of(const DecodeArgs& a, int b) {
  Seq s{a.q_len, a.kv_len, 0};
  if (a.seq_q != nullptr) {
    s.nq = a.seq_q[b];
    s.nk = a.seq_kv[b];
  }
  s.off = a.mask == MaskKind::causal_tl ? 0 : s.nk - s.nq;
  return s;
}
__device__ __forceinline__ int first_key(const DecodeArgs& a, const Seq& s, int i) {
  return a.mask == MaskKind::window ? max(0, i + s.off - a.window + 1) : 0;
}
__device__ __forceinline__ int last_key(const DecodeArgs& a, const Seq& s, int i) {
  return a.mask == MaskKind::none ? s.nk - 1 : min(s.nk - 1, i + s.off);
}

// A CTA's keys: its split's chunk cut to those some row of the sequence sees ([lo, hi]; none
// when hi < lo), from `t0`, the first tile's start (a multiple of `tile` past the chunk's).
struct KeyRange {
  int lo, hi, t0, tiles;
};
__device__ __forceinline__ KeyRange key_range(const DecodeArgs& a, const Seq& s, int split,
                                              int tile) {
  const int kstart = split * a.chunk;
  const int kend = min(kstart + a.chunk, s.nk);
  KeyRange r;
  r.lo = max(kstart, first_key(a, s, 0));
  r.hi = min(kend - 1, last_key(a, s, s.nq - 1));
  r.t0 = r.hi >= r.lo ? kstart + (r.lo - kstart) / tile * tile : 0;
  r.tiles = r.hi >= r.lo ? (r.hi - r.t0) / tile + 1 : 0;
  return r;
}

// Whether key `pos` counts for query `i`: seen by its mask and inside the CTA's range.
__device__ __forceinline__ bool key_seen(const DecodeArgs& a, const Seq& s, const KeyRange& k,
                                         int i, int pos) {
  return pos >= first_key(a, s, i) && pos <= last_key(a, s, i) && pos <= k.hi;
}

// A scaled score in base 2, after the softcap (natural units in, base 2 out).
__device__ __forceinline__ float score2(const DecodeArgs& a, float dot) {
  float s = dot * a.scale;
  if (a.softcap > 0) s = a.softcap * tanhf(s / a.softcap);
  return s * kLog2e;
}

// Element offset of K/V row (b, h, pos) (the row's first element).
__device__ __forceinline__ int64_t kv_row(const DecodeArgs& a, const PageMap& pages, int b, int h,
                                          int pos, int d) {
  if (pages.table == nullptr) return b * a.kv_sb + h * a.kv_sh + pos * a.kv_ss;
  return pages.row(b, h, pos) * d;
}

// The sink logit of query head h in base 2 (-inf: none).
__device__ __forceinline__ float sink2(const DecodeArgs& a, int h) {
  return a.sink != nullptr ? a.sink[h] * kLog2e : -INFINITY;
}

// 8 output columns (from `col`) of row (b, h, i), from the CTA's sums over its keys: `m` the
// max (base 2), `l` the sum of 2^(s - m), `o` the unnormalized P.V. One split: O and (col 0) the
// LSE, the sink joining the max and the sum. Several: the partial sum of this split, for the
// merge.
template <class T, int D>
__device__ __forceinline__ void emit_row(const DecodeArgs& a, int b, int h, int i, int split,
                                         float m, float l, const float* o, int col) {
  const int64_t row = (int64_t(b) * a.q_heads + h) * a.q_len + i;
  if (a.splits > 1) {
    float* p = a.partial + (row * a.splits + split) * partial_stride(D);
    reinterpret_cast<float4*>(p + col)[0] = make_float4(o[0], o[1], o[2], o[3]);
    reinterpret_cast<float4*>(p + col)[1] = make_float4(o[4], o[5], o[6], o[7]);
    if (col == 0) {
      p[D] = m;
      p[D + 1] = l;
    }
    return;
  }
  const float s2 = sink2(a, h), top = fmaxf(m, s2);
  const float w = m == -INFINITY ? 0.f : exp2f(m - top);
  const float total = l * w + (s2 == -INFINITY ? 0.f : exp2f(s2 - top));
  const float f = total > 0 ? w / total : 0.f;
  T* out = static_cast<T*>(a.o) + b * a.o_sb + h * a.o_sh + i * a.o_ss + col;
  alignas(16) T v[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = narrow<T>(o[e] * f);
  *reinterpret_cast<uint4*>(out) = *reinterpret_cast<const uint4*>(v);
  if (col == 0 && a.lse != nullptr)
    a.lse[row] = total > 0 ? (top + log2f(total)) * kLn2 : -INFINITY;
}

// The tensor-core kernel (decode_mma.cu): its launch and its shared memory.
void launch_mma(const DecodeArgs& a, cudaStream_t stream);
int mma_smem_bytes(int head_dim, int warps, int stages);

}  // namespace attnprof::cuda::decode
