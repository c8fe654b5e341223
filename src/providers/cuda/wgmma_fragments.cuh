// What attnprof's Hopper kernels (flash_sm90_kernel.cu, mla_decode_kernel.cu) do to wgmma's fp32
// accumulator fragments of m64nN (wgmma.cuh's layout: a thread holds two rows, its `h` 0 and 1,
// and element e of n-block j sits at row h = e / 2, column 8 j + 2 t4 + e % 2): mask the keys a
// row does not see, scale each row, round P to the dtype as wgmma's A fragments from
// registers, and store a row.
#pragma once

#include <cstdint>

#include "providers/cuda/warp_mma.cuh"

namespace attnprof::cuda {

// Scores of keys k0 + column outside [first[h], last[h]] to -inf.
template <int N>
__device__ __forceinline__ void mask_keys(float (&s)[N], int k0, int t4, const int (&first)[2],
                                          const int (&last)[2]) {
#pragma unroll
  for (int j = 0; j < N / 4; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int h = e >> 1, pos = k0 + 8 * j + 2 * t4 + (e & 1);
      if (pos < first[h] || pos > last[h]) s[4 * j + e] = -INFINITY;
    }
}

// Row h of the fragments times f[h].
template <int N>
__device__ __forceinline__ void scale_rows(float (&o)[N], const float (&f)[2]) {
#pragma unroll
  for (int j = 0; j < N / 4; ++j) {
    o[4 * j] *= f[0];
    o[4 * j + 1] *= f[0];
    o[4 * j + 2] *= f[1];
    o[4 * j + 3] *= f[1];
  }
}

// P's A fragments (m64k16), one per k-step k of P V: the n-blocks 2 k and 2 k + 1 of the score
// fragments, rounded to T.
template <class T, int N>
__device__ __forceinline__ void pack_a_fragments(const float (&s)[N], uint32_t (&pa)[N / 8][4]) {
#pragma unroll
  for (int k = 0; k < N / 8; ++k) {
    const float* s8 = s + 8 * k;
    pa[k][0] = pack2<T>(s8[0], s8[1]);
    pa[k][1] = pack2<T>(s8[2], s8[3]);
    pa[k][2] = pack2<T>(s8[4], s8[5]);
    pa[k][3] = pack2<T>(s8[6], s8[7]);
  }
}

// Row h of the fragments times `factor`, rounded to T, to `out` (this thread's first column, 2 t4,
// of the row): columns 8 j + 2 t4 and + 1 as one 4-byte store per n-block j.
template <class T, int N>
__device__ __forceinline__ void store_row(T* out, const float (&o)[N], int h, float factor) {
#pragma unroll
  for (int j = 0; j < N / 4; ++j)
    *reinterpret_cast<uint32_t*>(out + 8 * j) =
        pack2<T>(o[4 * j + 2 * h] * factor, o[4 * j + 2 * h + 1] * factor);
}

}  // namespace attnprof::cuda
