// What cuda.decode's two tensor-core kernels share (decode_mma.cu: each warp its own pipeline of
// 16-key tiles; decode_producer.cu: a producer warp filling CTA-wide stages for four consumer
// warps): a warp's 16 query rows of one KV head (G query heads x the sequence's query tokens,
// zero-padded), Q's mma fragments held in registers, one 16-key tile of K and V in shared memory
// turned into the online softmax's sums, and the warps' sums combined into O (or a split's
// partial sums) at the end.
//
// A tile's rows lie in shared memory either padded (rows of D + 8 elements, so that ldmatrix
// reads no bank twice) or as the tensor memory accelerator lands them: boxes of 64 columns
// (128 bytes a row) by kBoxRows rows, 128-byte swizzled, the boxes of a row's columns one after
// another.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "providers/cuda/decode_common.cuh"
#include "providers/cuda/wgmma.cuh"

namespace attnprof::cuda::decode {

constexpr int kTile = kMmaKeyTile;  // keys per tile (the mma's k for P.V)
constexpr int kSwizzleAlign = 1024;

// Bytes of the warps' combine area (combine_warps).
constexpr int combine_bytes(int head_dim, int warps) {
  return (warps * 16 * head_dim + 2 * warps * 16) * 4;
}
// Bytes before a kernel's mbarriers: its stages (`stage_bytes`), or the combine area of its
// `warps` warps where larger (it reuses the stages), rounded up to 16.
constexpr int barrier_offset_past(int stage_bytes, int head_dim, int warps) {
  const int b = combine_bytes(head_dim, warps);
  return ((stage_bytes > b ? stage_bytes : b) + 15) / 16 * 16;
}

// The tensor copies exist on sm_90 alone: elsewhere the host never launches a form using them.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool kTmaBuilt = true;
#else
constexpr bool kTmaBuilt = false;
#endif

// Element offset of row r's 16-byte chunk c (of D / 8) in a tile laid out
//  - kBoxRows 0: in padded rows of D + 8 elements;
//  - kBoxRows > 0: in boxes of 64 columns x kBoxRows rows, one after another (wgmma.cuh
//    swizzled_offset);
//  - kWholeRows: in boxes of whole rows (tensor_map.hpp row_tensor_map): block j of row r is the
//    128-byte line (D / 64) r + j, its chunks swizzled by the line.
// A tile that starts a multiple of 8 rows into a box keeps the swizzle's phase, so its rows may
// be counted from the tile.
template <int D, int kBoxRows, bool kWholeRows = false>
__device__ __forceinline__ int tile_offset(int r, int c) {
  if constexpr (kWholeRows) {
    const int line = (D / 64) * r + (c >> 3);
    return (line * 128 + (((c & 7) ^ (line & 7)) << 4)) / 2;
  } else if constexpr (kBoxRows == 0) {
    return r * (D + 8) + c * 8;
  } else {
    return swizzled_offset(r, c * 8, kBoxRows) / 2;
  }
}

// One warp's running sums over the tiles it has seen: O (unnormalized, mma accumulators of rows
// g and g + 8, n-blocks of 8 columns), each row's max (base 2) and sum, and the keys each row
// sees within the CTA's range.
template <int D>
struct WarpSums {
  float o[D / 8][4];
  float m[2], l[2];
  int first[2], last[2];
};

// Q's A fragments (rows g and g + 8, columns 16 ks + 2 t4 (+1) and + 8; rows past R are 0) and
// the warp's sums, empty.
template <class T, int D>
__device__ __forceinline__ void start_rows(const DecodeArgs& a, const Seq& sq, const KeyRange& kr,
                                           int b, int kvh, int lane, uint32_t (&qf)[D / 16][4],
                                           WarpSums<D>& w) {
  const int g = lane >> 2, t4 = lane & 3;
  const int G = a.q_heads / a.kv_heads;
  const int R = G * sq.nq;  // row r: head kvh * G + r / nq, query r % nq
  const T* q = static_cast<const T*>(a.q);
  const T* qrow[2] = {nullptr, nullptr};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = g + 8 * h;
    if (r < R) qrow[h] = q + b * a.q_sb + (kvh * G + r / sq.nq) * a.q_sh + (r % sq.nq) * a.q_ss;
  }
#pragma unroll
  for (int ks = 0; ks < D / 16; ++ks)
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const T* row = qrow[x & 1];
      const int col = 16 * ks + 2 * t4 + 8 * (x >> 1);
      qf[ks][x] = row != nullptr ? *reinterpret_cast<const uint32_t*>(row + col) : 0u;
    }
#pragma unroll
  for (int nb = 0; nb < D / 8; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) w.o[nb][e] = 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = g + 8 * h;
    w.m[h] = -INFINITY;
    w.l[h] = 0;
    w.first[h] = r < R ? first_key(a, sq, r % sq.nq) : 1;
    w.last[h] = r < R ? min(last_key(a, sq, r % sq.nq), kr.hi) : 0;
  }
}

// The tile of keys start..start + 15, its K rows at `ks` and V rows at `vs`, into the warp's
// sums: S = Q K^T (mma.sync m16n8k16, K by ldmatrix), scaled, capped and masked; the online
// softmax of rows g (e 0, 1) and g + 8 (e 2, 3), each row's max and sum across the quad that
// holds it; P rounded to the dtype as the A operand of O += P V, V by ldmatrix.trans.
template <class T, int D, int kBoxRows, bool kWholeRows = false>
__device__ __forceinline__ void add_tile(const DecodeArgs& a, const uint32_t (&qf)[D / 16][4],
                                         const T* ks, const T* vs, int start, int lane,
                                         WarpSums<D>& w) {
  constexpr int KS = D / 16;  // k-steps of Q.K^T
  constexpr int NB = D / 8;   // n-blocks of P.V
  const int t4 = lane & 3;
  const int mi = lane >> 3, ri = lane & 7;  // ldmatrix: this lane's matrix and row
  float s[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
#pragma unroll
  for (int nb = 0; nb < 2; ++nb)
#pragma unroll
    for (int kk = 0; kk < KS; kk += 2) {
      uint32_t bf[4];
      ldmatrix4(bf, ks + tile_offset<D, kBoxRows, kWholeRows>(nb * 8 + ri, 2 * kk + mi));
      mma<T>(s[nb], qf[kk], bf[0], bf[1]);
      mma<T>(s[nb], qf[kk + 1], bf[2], bf[3]);
    }
#pragma unroll
  for (int nb = 0; nb < 2; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int h = e >> 1, pos = start + nb * 8 + 2 * t4 + (e & 1);
      s[nb][e] = pos >= w.first[h] && pos <= w.last[h] ? score2(a, s[nb][e]) : -INFINITY;
    }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float mx =
        quad_max(fmaxf(fmaxf(s[0][2 * h], s[0][2 * h + 1]), fmaxf(s[1][2 * h], s[1][2 * h + 1])));
    const float m_new = fmaxf(w.m[h], mx);
    const float alpha = w.m[h] == -INFINITY ? 0.f : exp2f(w.m[h] - m_new);
    float sum = 0;
#pragma unroll
    for (int nb = 0; nb < 2; ++nb)
#pragma unroll
      for (int e = 2 * h; e < 2 * h + 2; ++e) {
        const float p = s[nb][e] == -INFINITY ? 0.f : exp2f(s[nb][e] - m_new);
        s[nb][e] = p;
        sum += p;
      }
    w.l[h] = w.l[h] * alpha + sum;
    w.m[h] = m_new;
    // Once a row's max settles most tiles leave it: then the warp skips the rescale.
    if (__any_sync(0xffffffffu, alpha != 1.f)) {
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        w.o[nb][2 * h] *= alpha;
        w.o[nb][2 * h + 1] *= alpha;
      }
    }
  }
  uint32_t pa[4];
  a_fragment<T>(pa, s, 0);
#pragma unroll
  for (int nb = 0; nb < NB; nb += 2) {
    uint32_t bf[4];
    ldmatrix4_trans(bf,
                    vs + tile_offset<D, kBoxRows, kWholeRows>(ri + (mi & 1) * 8, nb + (mi >> 1)));
    mma<T>(w.o[nb], pa, bf[0], bf[1]);
    mma<T>(w.o[nb + 1], pa, bf[2], bf[3]);
  }
}

// Zeroes V's rows `valid`..15 of a tile that landed as boxes of kBoxRows rows, or of whole rows
// (the keys past the CTA's range: the next sequence's or head's, or a ragged batch's padding; P
// is 0 there, and 0 x V must be 0), then fences them from a later tensor copy into the same
// place.
template <int D, int kBoxRows, bool kWholeRows = false, class T>
__device__ __forceinline__ void zero_rows_past(T* vs, int valid, int lane) {
  constexpr int kBoxes = D / 64;
  for (int i = lane; i < (kTile - valid) * kBoxes * 8; i += 32) {
    const int r = valid + i / (kBoxes * 8), x = i % (kBoxes * 8);
    T* line = kWholeRows ? vs + r * D + (x >> 3) * 64 : vs + (x >> 3) * kBoxRows * 64 + r * 64;
    reinterpret_cast<uint4*>(line)[x & 7] = make_uint4(0, 0, 0, 0);
  }
  fence_async_shared();
}

// The warps' sums, combined: each of kWarps warps' O, max and sum through shared memory (`smem`,
// combine_bytes; free of tiles by now), then every thread of the CTA (`threads`) emits rows'
// columns (decode_common.cuh emit_row). Warps numbered kWarps and up (a producer) have no sums
// but take part. Every thread of the CTA calls it.
template <class T, int D, int kWarps>
__device__ __forceinline__ void combine_warps(const DecodeArgs& a, const Seq& sq, int b, int kvh,
                                              int split, unsigned char* smem, int threads,
                                              WarpSums<D>& w) {
  constexpr int NB = D / 8, CH = D / 8;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
  const int G = a.q_heads / a.kv_heads;
  const int R = G * sq.nq;
  __syncthreads();
  float* red_o = reinterpret_cast<float*>(smem);  // [warp][16 rows][D]
  float* red_m = red_o + kWarps * 16 * D;         // [warp][16]
  float* red_l = red_m + kWarps * 16;
  if (warp < kWarps) {
#pragma unroll
    for (int h = 0; h < 2; ++h) w.l[h] = quad_sum(w.l[h]);
#pragma unroll
    for (int nb = 0; nb < NB; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        red_o[(warp * 16 + g + 8 * (e >> 1)) * D + nb * 8 + 2 * t4 + (e & 1)] = w.o[nb][e];
    if (t4 == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        red_m[warp * 16 + g + 8 * h] = w.m[h];
        red_l[warp * 16 + g + 8 * h] = w.l[h];
      }
    }
  }
  __syncthreads();
  for (int item = threadIdx.x; item < R * CH; item += threads) {
    const int r = item / CH, col = (item % CH) * 8;
    float top = -INFINITY;
#pragma unroll
    for (int x = 0; x < kWarps; ++x) top = fmaxf(top, red_m[x * 16 + r]);
    float sum = 0, out[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int x = 0; x < kWarps; ++x) {
      const float mw = red_m[x * 16 + r];
      if (mw == -INFINITY) continue;
      const float f = exp2f(mw - top);
      sum += red_l[x * 16 + r] * f;
#pragma unroll
      for (int e = 0; e < 8; ++e) out[e] += red_o[(x * 16 + r) * D + col + e] * f;
    }
    emit_row<T, D>(a, b, kvh * G + r / sq.nq, r % sq.nq, split, top, sum, out, col);
  }
}

}  // namespace attnprof::cuda::decode
