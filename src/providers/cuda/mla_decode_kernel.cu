// cuda.mla.decode's kernel (mla_decode_kernel.cuh). Verified end to end: every row of O and the
// LSE against the fp64 reference on the host and on the device (tests/gpu/test_mla_decode.cpp).
//
// The latent (K; V is its first 512 columns) streams through shared memory in one of two
// pipelines (MlaPipeline). serial64, tiles of 64 keys in two stages; iteration t:
//   all     wait for tile t's copies, fence them to the async proxy, __syncthreads (P V of tile
//           t - 1 is done, so its stage takes tile t + 1), copy tile t + 1
//   wg 0    S = Q K^T of tile t: 9 column blocks x 4 k-steps of wgmma m64n64k16; scale (cap),
//           mask, the online softmax on the fragments; P rounded to the dtype as A fragments,
//           and the rows' rescale, to shared memory
//   all     __syncthreads; wg 1 takes P and the rescale
//   both    O *= the rescale; O += P V of tile t (each its 256 columns of V: 4 k-steps of wgmma
//           m64n256k16, P from registers)
// overlap32, tiles of 32 keys in four stages, two ahead: wg 0 issues the scores of tile t (m64n32)
// and both issue P V of tile t - 1 before wg 0 waits for the scores, so that the softmax of tile
// t runs under P V of tile t - 1.
// At the end warpgroup 0's row max and sum go through shared memory to both, and each writes its
// 256 columns (or the split's partial sums).
#include "providers/cuda/mla_decode_kernel.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/attention_rows.cuh"
#include "providers/cuda/decode_common.cuh"
#include "providers/cuda/tma.cuh"
#include "providers/cuda/warp_mma.cuh"
#include "providers/cuda/wgmma.cuh"
#include "providers/cuda/wgmma_fragments.cuh"

namespace attnprof::cuda {

namespace {

constexpr int D = kMlaQkDim, ROWS = kMlaRows;
constexpr int kQBytes = ROWS * D * 2;
constexpr int kAlphaBytes = 128 * 2 * 4;  // each thread's two rows' rescale
constexpr int kRowBytes = ROWS * 2 * 4;   // the rows' max and sum at the end

// The two pipelines (mla_decode_kernel.cuh MlaPipeline): tiles of 64 keys in two stages, one
// after the other; or tiles of 32 in four stages, P V a tile behind the scores.
template <bool OVERLAP>
struct Cfg {
  static constexpr int KT = OVERLAP ? 32 : 64;    // keys per tile
  static constexpr int STAGES = OVERLAP ? 4 : 2;  // tiles of shared memory
  static constexpr int KSTEPS = KT / 16;          // k-steps of P V
  static constexpr int kStageBytes = KT * D * 2;
  static constexpr int kPBytes = KSTEPS * 4 * 128 * 4;  // P's A fragments of warpgroup 0
  static constexpr int kSmemBytes =
      1024 + kQBytes + STAGES * kStageBytes + kPBytes + kAlphaBytes + kRowBytes;
};
static_assert(Cfg<false>::kSmemBytes <= 227 * 1024 && Cfg<true>::kSmemBytes <= 227 * 1024);

template <class T, bool OVERLAP>
__global__ void __launch_bounds__(kMlaThreads, 1) mla_decode_kernel(const MlaDecodeArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = Cfg<OVERLAP>;
  constexpr int KT = C::KT, STAGES = C::STAGES, KSTEPS = C::KSTEPS;
  constexpr int AHEAD = STAGES / 2;  // tiles in flight beyond the one computed
  constexpr int kStageBytes = C::kStageBytes;
  constexpr int DV = kMlaVDim;
  constexpr int SREGS = KT / 2;      // S accumulators per thread (64 x KT / 128)
  constexpr int OREGS = DV / 2 / 2;  // O accumulators per thread (64 x 256 / 128)
  extern __shared__ unsigned char smem_raw[];
  // The swizzle is of address bits: every tile starts 1024-byte aligned.
  const auto raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  unsigned char* base = smem_raw + ((1024 - (raw & 1023)) & 1023);
  unsigned char* qs = base;
  unsigned char* stages = qs + kQBytes;
  auto* xp = reinterpret_cast<uint32_t*>(stages + STAGES * kStageBytes);
  auto* xalpha = reinterpret_cast<float*>(xp + KSTEPS * 4 * 128);
  auto* xrow = xalpha + 256;

  const int kvh = int(blockIdx.x) / a.row_blocks, rb = int(blockIdx.x) % a.row_blocks;
  const int split = int(blockIdx.y), b = int(blockIdx.z);
  // The warpgroup, warp-uniform to the compiler (a shuffle's value): code that branches on it
  // is not divergent, and wgmma need not be serialized around it.
  const int tid = threadIdx.x, wg = __shfl_sync(0xffffffffu, tid >> 7, 0);
  const int wt = tid & 127, warp = wt >> 5;
  const int lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const Seq sq = seq_of(a, b);
  const int G = a.q_heads / a.kv_heads;
  const int R = G * sq.nq, r0 = rb * ROWS;
  if (r0 >= R) return;  // a ragged batch's shorter sequence: no rows here
  const decode::KeyRange kr = decode::key_range(a, sq, split, KT);
  const int tiles = kr.tiles;

  const T* qg = static_cast<const T*>(a.q);
  const T* kg = static_cast<const T*>(a.k);

  // Tile t of the latent into its stage, swizzled: thread tid copies chunk tid % 8 of each
  // 64-column block of key tid / 8 (one row address per tile, the blocks at fixed offsets);
  // keys past the CTA's range zero-filled. Past the last tile, nothing (the group stays empty).
  const int ck = tid & 7, ckey = tid >> 3;
  const int cdst = ckey * 128 + ((ck ^ (ckey & 7)) << 4);
  auto load_tile = [&](int t) {
    if (t >= tiles) return;
#pragma unroll
    for (int part = 0; part < KT / 32; ++part) {  // keys tid / 8 + 32 part: the same swizzle
      const int pos = kr.t0 + t * KT + ckey + 32 * part;
      unsigned char* ks = stages + (t % STAGES) * kStageBytes + part * 32 * 128 + cdst;
      const bool valid = pos <= kr.hi;
      const T* src = kg + ck * 8;
      if (valid) src += decode::kv_row(a, a.k_pages, b, kvh, pos, D);
#pragma unroll
      for (int blk = 0; blk < D / 64; ++blk) copy16(ks + blk * KT * 128, src + blk * 64, valid);
    }
  };
  auto stage = [&](int t) -> const unsigned char* { return stages + (t % STAGES) * kStageBytes; };

  // This thread's two rows (of warpgroup 0's S, and of both warpgroups' O): r0 + 16 warp + g
  // and + 8; their query head and token, and the keys each sees (an absent row: none).
  int head[2], tok[2], first[2], last[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = r0 + 16 * warp + g + 8 * h;
    head[h] = kvh * G + r / sq.nq;
    tok[h] = r % sq.nq;
    first[h] = r < R ? max(kr.lo, first_key(a, sq, tok[h])) : 1;
    last[h] = r < R ? min(kr.hi, last_key(a, sq, tok[h])) : 0;
  }

  float o[OREGS];
#pragma unroll
  for (int i = 0; i < OREGS; ++i) o[i] = 0;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0, 0};
  const float scale2 = a.scale * kLog2e;
  uint32_t pa[KSTEPS][4];       // P of the tile whose P V is next, as A fragments
  float alpha[2] = {1.f, 1.f};  // and the rescale of O that goes before it
  float sacc[SREGS];

  // O *= alpha, then O += P V of tile t (this warpgroup's 256 columns), issued, not waited.
  auto issue_pv = [&](int t) {
    if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f))  // warp-uniform
      scale_rows(o, alpha);
    wgmma_fence();
    const unsigned char* vs = stage(t) + 4 * wg * KT * 128;  // V: the latent's column blocks
#pragma unroll
    for (int k = 0; k < KSTEPS; ++k)
      wgmma_rs_n256<T>(o, pa[k], mnmajor_descriptor(vs + k * 16 * 128, KT), 1);
    wgmma_commit();
  };

  if (tiles > 0) {
    // Q's block (rows past the KV head's zero-filled) with tile 0, then tile 1: rows tid / 8
    // and tid / 8 + 32, chunk tid % 8 of each column block.
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = ckey + 32 * half, r = r0 + row;
      const bool valid = r < R;
      const T* src = qg + ck * 8;
      if (valid) src += b * a.q_sb + (kvh * G + r / sq.nq) * a.q_sh + (r % sq.nq) * a.q_ss;
      unsigned char* dst = qs + row * 128 + ((ck ^ (row & 7)) << 4);
#pragma unroll
      for (int blk = 0; blk < D / 64; ++blk) copy16(dst + blk * ROWS * 128, src + blk * 64, valid);
    }
#pragma unroll
    for (int t = 0; t < AHEAD; ++t) {
      load_tile(t);
      commit_copies();
    }
  }

  // Tile t's copies landed and visible (tile t + 1 may still be on its way), P V of tile t - 2
  // done by both warpgroups, so its stage takes tile t + 2.
  auto next_tile = [&](int t) {
    wait_copies<AHEAD - 1>();
    fence_async_shared();
    __syncthreads();
    load_tile(t + AHEAD);
    commit_copies();
  };
  // Warpgroup 0: S = Q K^T of tile t, issued.
  auto issue_scores = [&](int t) {
#pragma unroll
    for (int i = 0; i < SREGS; ++i) sacc[i] = 0;
    wgmma_fence();
    const unsigned char* ks = stage(t);
#pragma unroll
    for (int blk = 0; blk < D / 64; ++blk)
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if constexpr (OVERLAP) {
          wgmma_ss_n32<T>(sacc, kmajor_descriptor(qs + blk * ROWS * 128 + k * 32),
                          kmajor_descriptor(ks + blk * KT * 128 + k * 32), blk + k > 0);
        } else {
          wgmma_ss_n64<T>(sacc, kmajor_descriptor(qs + blk * ROWS * 128 + k * 32),
                          kmajor_descriptor(ks + blk * KT * 128 + k * 32), blk + k > 0);
        }
    wgmma_commit();
  };
  // Warpgroup 0, S of tile t complete: scale (cap) and mask (element e of n-block j is row
  // e >= 2, key k0 + 8 j + 2 t4 + e % 2), the online softmax: P in sacc, each row's max and sum
  // updated, `next` the rescale of O that goes before P V.
  auto softmax = [&](int t, float(&next)[2]) {
    pin(sacc);
    const int k0 = kr.t0 + t * KT;
    const bool whole = __all_sync(
        0xffffffffu, k0 >= max(first[0], first[1]) && k0 + KT - 1 <= min(last[0], last[1]));
    if (a.softcap > 0) {
#pragma unroll
      for (int i = 0; i < SREGS; ++i) sacc[i] = score2(a, sacc[i]);
    } else {
#pragma unroll
      for (int i = 0; i < SREGS; ++i) sacc[i] *= scale2;
    }
    if (!whole) mask_keys(sacc, k0, t4, first, last);
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int i = 0; i < SREGS; ++i) mx[(i >> 1) & 1] = fmaxf(mx[(i >> 1) & 1], sacc[i]);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float mnew = fmaxf(m[h], quad_max(mx[h]));
      next[h] = mnew == -INFINITY ? 1.f : fast_exp2(m[h] - mnew);
      m[h] = mnew;
    }
    const float use[2] = {m[0] == -INFINITY ? 0.f : m[0], m[1] == -INFINITY ? 0.f : m[1]};
    float sum[2] = {0, 0};
#pragma unroll
    for (int i = 0; i < SREGS; ++i) {
      const int h = (i >> 1) & 1;
      sacc[i] = fast_exp2(sacc[i] - use[h]);
      sum[h] += sacc[i];
    }
    l[0] = l[0] * next[0] + sum[0];
    l[1] = l[1] * next[1] + sum[1];
  };
  // P (and its rescale `next`) from warpgroup 0's scores to both warpgroups' A fragments: P V's
  // registers must be free (its wgmma waited for).
  auto hand_over = [&](const float(&next)[2]) {
    if (wg == 0) {
      pack_a_fragments<T>(sacc, pa);
#pragma unroll
      for (int k = 0; k < KSTEPS; ++k)
#pragma unroll
        for (int q = 0; q < 4; ++q) xp[(k * 4 + q) * 128 + wt] = pa[k][q];
      alpha[0] = next[0];
      alpha[1] = next[1];
      xalpha[2 * wt] = alpha[0];
      xalpha[2 * wt + 1] = alpha[1];
    }
    __syncthreads();
    if (wg == 1) {
#pragma unroll
      for (int k = 0; k < KSTEPS; ++k)
#pragma unroll
        for (int q = 0; q < 4; ++q) pa[k][q] = xp[(k * 4 + q) * 128 + wt];
      alpha[0] = xalpha[2 * wt];
      alpha[1] = xalpha[2 * wt + 1];
    }
  };

  float next[2] = {1.f, 1.f};
  if constexpr (!OVERLAP) {
    // Iteration t: the scores of tile t, its softmax, P handed over, P V of tile t.
    for (int t = 0; t < tiles; ++t) {
      next_tile(t);
      if (wg == 0) {
        issue_scores(t);
        wgmma_wait<0>();
        softmax(t, next);
      }
      hand_over(next);
      issue_pv(t);
      wgmma_wait<0>();
      pin(o);
    }
  } else {
    // Tile 0's scores alone; then iteration t: Q K^T of tile t runs beside P V of tile t - 1,
    // and the softmax of tile t under that P V; then P V of the last tile.
    if (tiles > 0) {
      next_tile(0);
      if (wg == 0) {
        issue_scores(0);
        wgmma_wait<0>();
        softmax(0, next);
      }
      hand_over(next);
    }
    for (int t = 1; t < tiles; ++t) {
      next_tile(t);
      if (wg == 0) {
        // One branch per warpgroup from issue to wait: ptxas serializes wgmma when it cannot
        // see that the scores' wait covers them on every path.
        issue_scores(t);
        issue_pv(t - 1);
        wgmma_wait<1>();  // the scores; P V may still run
        softmax(t, next);
      } else {
        issue_pv(t - 1);
      }
      wgmma_wait<0>();
      pin(o);
      hand_over(next);
    }
    if (tiles > 0) {
      issue_pv(tiles - 1);
      wgmma_wait<0>();
      pin(o);
    }
  }

  allow_dependent_grid();  // past the keys: the merge may start once every CTA is here
  // The rows' max and sum, from warpgroup 0 to both.
  if (wg == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l[h] = quad_sum(l[h]);
      if (t4 == 0) {
        xrow[2 * (16 * warp + g + 8 * h)] = m[h];
        xrow[2 * (16 * warp + g + 8 * h) + 1] = l[h];
      }
    }
  }
  __syncthreads();

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int lr = 16 * warp + g + 8 * h;
    if (r0 + lr >= R) continue;
    const float rm = xrow[2 * lr], rl = xrow[2 * lr + 1];
    const int64_t row = (int64_t(b) * a.q_heads + head[h]) * a.q_len + tok[h];
    const int col0 = 256 * wg + 2 * t4;
    if (a.splits > 1) {
      float* p = a.partial + (row * a.splits + split) * partial_stride(DV);
#pragma unroll
      for (int j = 0; j < OREGS / 4; ++j)
        *reinterpret_cast<float2*>(p + col0 + 8 * j) =
            make_float2(o[4 * j + 2 * h], o[4 * j + 2 * h + 1]);
      if (wg == 0 && t4 == 0) {
        p[DV] = rm;
        p[DV + 1] = rl;
      }
      continue;
    }
    const RowEnd end = end_row(rm, rl, sink2(a, head[h]));
    store_row<T>(static_cast<T*>(a.o) + b * a.o_sb + head[h] * a.o_sh + tok[h] * a.o_ss + col0, o,
                 h, end.factor);
    if (wg == 0 && t4 == 0 && a.lse != nullptr) a.lse[row] = end.lse;
  }
#else
  __trap();  // built for sm_90a only (the provider refuses other devices)
#endif
}

template <class T, bool OVERLAP>
void launch_typed(const MlaDecodeArgs& a, cudaStream_t stream) {
  constexpr int smem = Cfg<OVERLAP>::kSmemBytes;
  static const cudaError_t set = cudaFuncSetAttribute(
      mla_decode_kernel<T, OVERLAP>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  ATTNPROF_CUDA(set);
  const dim3 grid(unsigned(a.row_blocks * a.kv_heads), unsigned(a.splits), unsigned(a.batch));
  mla_decode_kernel<T, OVERLAP><<<grid, kMlaThreads, smem, stream>>>(a);
  ATTNPROF_CUDA(cudaGetLastError());
}

template <class T>
void launch_pipeline(const MlaDecodeArgs& a, cudaStream_t stream) {
  if (a.pipeline == MlaPipeline::overlap32) {
    launch_typed<T, true>(a, stream);
  } else {
    launch_typed<T, false>(a, stream);
  }
}

}  // namespace

int mla_row_blocks(int group, int q_len) {
  return (group * q_len + kMlaRows - 1) / kMlaRows;
}

int mla_key_tile(MlaPipeline p) {
  return p == MlaPipeline::overlap32 ? Cfg<true>::KT : Cfg<false>::KT;
}

int mla_stages(MlaPipeline p) {
  return p == MlaPipeline::overlap32 ? Cfg<true>::STAGES : Cfg<false>::STAGES;
}

int mla_decode_smem_bytes(MlaPipeline p) {
  return p == MlaPipeline::overlap32 ? Cfg<true>::kSmemBytes : Cfg<false>::kSmemBytes;
}

void launch_mla_decode(const MlaDecodeArgs& a, cudaStream_t stream) {
  if (a.dtype == DType::bf16) {
    launch_pipeline<__nv_bfloat16>(a, stream);
  } else {
    launch_pipeline<__half>(a, stream);
  }
  if (a.splits > 1) launch_decode_merge(a, kMlaVDim, stream);
}

}  // namespace attnprof::cuda
