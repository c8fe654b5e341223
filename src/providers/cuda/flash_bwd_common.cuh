// What both key-block kernels of the backward share (flash_bwd_kernel.cu's mma.sync one,
// flash_sm90_bwd_kernel.cu's wgmma one): which query blocks see a block of keys, and how dQ's
// share of a key block reaches the fp32 accumulator (atomics from each warp's tile of mma's, or
// wgmma's, accumulator layout: per warp the same).
#pragma once

#include <cuda_runtime.h>

#include "providers/cuda/attention_rows.cuh"

namespace attnprof::cuda {

// The blocks of `qs` queries of one head that see a key of keys k0... k1 (last_key(i) = i + off
// >= k0 under a mask, first_key(i) = i + off - window + 1 <= k1 under a window): the first, and
// how many (0: none).
struct QueryBlocks {
  int first, count;
};
template <class Args>
__device__ __forceinline__ QueryBlocks query_blocks(const Args& a, const Seq& sq, int k0, int k1,
                                                    int qs) {
  int lo = 0, hi = sq.nq - 1;
  if (a.mask != MaskKind::none) lo = max(0, k0 - sq.off);
  if (a.mask == MaskKind::window) hi = min(hi, k1 - sq.off + a.window - 1);
  return {lo / qs, hi >= lo ? hi / qs - lo / qs + 1 : 0};
}

// Adds a warp's 16 x (8 NB) tile of dQ (mma accumulator layout) to rows row0... of the fp32
// accumulator (rows of D floats) at column col0, rows at or past `rows` left out. On sm_90 four
// columns an atomic: each lane trades half its values with its neighbour so that it holds four
// consecutive columns of one row (and a lane past the rows adds zeros to `spare`).
template <int D, int NB>
__device__ __forceinline__ void add_dq(float* acc_rows, int rows, int col0, const float (&c)[NB][4],
                                       float* spare) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const bool odd = t4 & 1;
  const int r = odd ? g + 8 : g;
  float4 v[NB];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    const float s0 = odd ? c[nb][0] : c[nb][2], s1 = odd ? c[nb][1] : c[nb][3];
    const float r0 = __shfl_xor_sync(0xffffffffu, s0, 1), r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
    v[nb] = odd ? make_float4(r0, r1, c[nb][2], c[nb][3]) : make_float4(c[nb][0], c[nb][1], r0, r1);
  }
  // No branch around the adds, so that they issue among the next product's mma: a lane whose
  // row is past the end adds zeros to `spare` (a row that exists) instead.
  const bool in = r < rows;
  float4* p = reinterpret_cast<float4*>(in ? acc_rows + r * D + col0 + 4 * (t4 >> 1) : spare);
  const float4 zero4 = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) atomicAdd(in ? p + 2 * nb : p, in ? v[nb] : zero4);
#else
  (void)spare;
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = g + 8 * (e >> 1);
      if (r < rows)
        atomicAdd(acc_rows + int64_t(r) * D + col0 + nb * 8 + 2 * t4 + (e & 1), c[nb][e]);
    }
#endif
}

}  // namespace attnprof::cuda
