// What cuda.decode's two kernels share (decode_kernel.cu: CUDA cores, any query rows up to
// kMaxDecodeRows; decode_mma.cu: tensor cores, up to 16 rows) besides what every attnprof
// kernel shares (warp_mma.cuh, attention_rows.cuh): eight elements widened to floats, a CTA's
// range of keys, where a K/V row lies, and how a CTA's sums for one output row become O and the
// LSE (one split) or a partial sum (several).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "providers/cuda/attention_rows.cuh"
#include "providers/cuda/decode_kernel.cuh"
#include "providers/cuda/warp_mma.cuh"

namespace attnprof::cuda::decode {

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

// Element offset of K/V row (b, h, pos) (the row's first element).
__device__ __forceinline__ int64_t kv_row(const DecodeArgs& a, const PageMap& pages, int b, int h,
                                          int pos, int d) {
  if (pages.table == nullptr) return b * a.kv_sb + h * a.kv_sh + pos * a.kv_ss;
  return pages.row(b, h, pos) * d;
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
  const RowEnd end = end_row(m, l, sink2(a, h));
  T* out = static_cast<T*>(a.o) + b * a.o_sb + h * a.o_sh + i * a.o_ss + col;
  alignas(16) T v[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = narrow<T>(o[e] * end.factor);
  *reinterpret_cast<uint4*>(out) = *reinterpret_cast<const uint4*>(v);
  if (col == 0 && a.lse != nullptr) a.lse[row] = end.lse;
}

// The tensor-core kernel (decode_mma.cu): its launch and its shared memory.
void launch_mma(const DecodeArgs& a, cudaStream_t stream);
int mma_smem_bytes(int head_dim, int warps, int stages);
// The tensor-core kernel with a producer warp (decode_producer.cu; sm_90, the tensor copies).
void launch_producer(const DecodeArgs& a, cudaStream_t stream);
int producer_smem_bytes(int head_dim, DecodePipeline pipeline);
// The tensor maps of K and V for the tensor copies (decode_mma.cu): the cache as (B, Hkv, N, D)
// at its strides, or the page pool as (pages, Hkv, page size, D) in its pages' layout; boxes of
// 64 columns (or whole rows) x `rows` keys; the L2 promotion `a.l2_promotion`.
CUtensorMap kv_map(const DecodeArgs& a, const void* data, const PageMap& pages, int rows,
                   bool whole_rows = false);

}  // namespace attnprof::cuda::decode
