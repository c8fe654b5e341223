// cuda.decode's tensor-core kernel (decode_kernel.cuh): up to 16 query rows of one KV head
// (G query heads x the sequence's query tokens, zero-padded to the 16 rows of an mma tile) at
// head dim 64 or 128, bf16 or fp16.
//
// Each of the CTA's four warps takes every fourth tile of 16 keys of the CTA's chunk and keeps
// its own pipeline, three stages deep: K and V rows land in its shared memory by cp.async
// (16-byte copies, rows padded by 16 bytes so ldmatrix reads no bank twice), S = Q K^T comes
// from mma.sync m16n8k16 with Q's fragments held in registers and K's read by ldmatrix, the
// online softmax runs on the accumulator fragments (each row's max and sum across the quad that
// holds it), P is rounded to the dtype as the A operand of O += P V, whose B operand is V read
// by ldmatrix.trans. No barrier in the loop: the warps meet once, at the end, to combine their
// sums (decode_common.cuh emit_row). How the tiles are copied is DecodeCopy: cp.async from every
// lane into the padded rows, or, on sm_90, the tensor memory accelerator: lane 0 asks for the
// tile's boxes of 64 columns x 16 keys (K's and V's, 128-byte swizzled, 1024-byte aligned; the
// ldmatrix addresses undo the swizzle) and the warp waits on its stage's mbarrier.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/decode_common.cuh"
#include "providers/cuda/tensor_map.hpp"
#include "providers/cuda/tma.cuh"
#include "providers/cuda/wgmma.cuh"

namespace attnprof::cuda::decode {

namespace {

constexpr int kTile = kMmaKeyTile;  // keys per warp tile (the mma's k for P.V)

template <int D>
constexpr int staged_row() {
  return D + 8;  // elements: 16 bytes of padding
}
template <int D>
constexpr int warp_stage_elems() {
  return 2 * kTile * staged_row<D>();  // K and V
}
// The tensor memory accelerator's boxes: 64 columns (128 bytes) x a tile's keys.
constexpr int kBoxBytes = 64 * kTile * 2;
constexpr int kSwizzleAlign = 1024;

// Bytes of the stages: the padded rows of cp.async, or the boxes (and the slack that aligns them
// to 1024 bytes), whichever is larger, so both copies run at the same occupancy.
constexpr int stage_bytes(int head_dim, int warps, int stages) {
  const int padded = warps * stages * 2 * kTile * (head_dim + 8) * 2;
  const int boxes = warps * stages * 2 * (head_dim / 64) * kBoxBytes + kSwizzleAlign;
  return padded > boxes ? padded : boxes;
}
constexpr int combine_bytes(int head_dim, int warps) {
  return (warps * 16 * head_dim + 2 * warps * 16) * 4;
}
// Bytes before the tensor copies' mbarriers: the stages, or the warps' combine area if larger.
constexpr int barrier_offset(int head_dim, int warps, int stages) {
  const int a = stage_bytes(head_dim, warps, stages), b = combine_bytes(head_dim, warps);
  return ((a > b ? a : b) + 15) / 16 * 16;
}

// The tensor copies exist on sm_90 alone: elsewhere the host never launches that form.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool kTmaBuilt = true;
#else
constexpr bool kTmaBuilt = false;
#endif

// Element offset of row r's 16-byte chunk c (of D / 8) in a stage's K or V boxes: box c / 8, its
// 128-byte row r, the chunk's place swizzled by the row (Hopper's 128-byte swizzle).
__device__ __forceinline__ int swizzled(int r, int c) {
  return ((c >> 3) * kBoxBytes + r * 128 + (((c & 7) ^ (r & 7)) << 4)) / 2;
}

// kWarps warps per CTA, each kStages tiles deep.
template <class T, int D, int kWarps, int kStages, DecodeCopy kCopy>
__global__ void __launch_bounds__(kWarps * 32)
    attention_mma_kernel(const __grid_constant__ DecodeArgs a) {
  constexpr int KS = D / 16;  // k-steps of Q.K^T
  constexpr int NB = D / 8;   // n-blocks of P.V
  constexpr int CH = D / 8;   // 16-byte chunks per row
  constexpr int ROW = staged_row<D>();
  constexpr bool kTma = kCopy == DecodeCopy::tma && kTmaBuilt;
  constexpr int kBoxes = D / 64;
  static_assert(sizeof(T) == 2, "the boxes' offsets count 16-bit elements");
  extern __shared__ __align__(16) unsigned char smem_raw[];

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
  const int G = a.q_heads / a.kv_heads;
  const Seq sq = seq_of(a, b);
  const int R = G * sq.nq;  // row r: head kvh * G + r / nq, query r % nq
  const KeyRange kr = key_range(a, sq, split, kTile);
  // This warp's tiles: w, w + 4, ... of the CTA's.
  const int my_tiles = kr.tiles > warp ? (kr.tiles - 1 - warp) / kWarps + 1 : 0;
  // The warp's stages: padded rows (cp.async), or K's then V's boxes (the tensor copies).
  T* stages = reinterpret_cast<T*>(smem_raw) + warp * kStages * warp_stage_elems<D>();
  if constexpr (kTma) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(smem_raw);
    const uintptr_t aligned = (base + kSwizzleAlign - 1) / kSwizzleAlign * kSwizzleAlign;
    stages = reinterpret_cast<T*>(smem_raw + (aligned - base)) +
             warp * kStages * 2 * kBoxes * kBoxBytes / int(sizeof(T));
  }
  constexpr int kStageElems = kTma ? 2 * kBoxes * kBoxBytes / 2 : warp_stage_elems<D>();
  constexpr int kVOffset = kTma ? kBoxes * kBoxBytes / 2 : kTile * ROW;  // V after K
  // The tensor copies: the warp's stages each complete on an mbarrier (one arrival: lane 0's,
  // with the stage's bytes).
  uint64_t* bars =
      reinterpret_cast<uint64_t*>(smem_raw + barrier_offset(D, kWarps, kStages)) + warp * kStages;
  if constexpr (kTma) {
    if (lane == 0) {
#pragma unroll
      for (int st = 0; st < kStages; ++st) mbar_init(&bars[st], 1);
      mbar_init_fence();
    }
    __syncwarp();
  }
  const T* k = static_cast<const T*>(a.k);
  const T* v = static_cast<const T*>(a.v);

  auto tile_start = [&](int n) { return kr.t0 + (warp + n * kWarps) * kTile; };
  // The lane's rows of a tile: ci = lane + 32 it, row ci / CH, chunk ci % CH. A paged cache's
  // page ids are read a tile ahead of the copies that need them, so no copy waits on the table.
  constexpr int IT = kTile * CH / 32;
  const bool paged = a.k_pages.table != nullptr;
  const int64_t bh = int64_t(b) * a.kv_sb + int64_t(kvh) * a.kv_sh;
  // Pages of 16 keys or more hold a whole tile (tiles start at multiples of 16): one id a tile.
  const bool page_per_tile = paged && a.k_pages.page_size >= kTile;
  int32_t kp[IT] = {}, vp[IT] = {};
  auto fetch_pages = [&](int n) {
    if (!paged || n >= my_tiles) return;
    const int start = tile_start(n);
    if (page_per_tile) {
      kp[0] = a.k_pages.page(b, start);
      vp[0] = a.v_pages.page(b, start);
      return;
    }
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int pos = min(start + (lane + 32 * it) / CH, kr.hi);
      kp[it] = a.k_pages.page(b, pos);
      vp[it] = a.v_pages.page(b, pos);
    }
  };
  // Contiguous, or pages that hold whole tiles: a tile's rows are one base and a stride apart,
  // so each lane's copies are one address each plus a constant (no per-copy page arithmetic).
  const int j0 = lane / CH, c8 = (lane % CH) * 8;
  constexpr int JS = 32 / CH;  // rows between a lane's copies
  const int64_t page_step = (a.k_pages.bshd ? a.k_pages.heads : 1) * D;
  auto load = [&](int n) {
    T* ks = stages + (n % kStages) * kStageElems;
    T* vs = ks + kVOffset;
    const int start = tile_start(n);
    if constexpr (kTma) {
      // Lane 0 asks for K's and V's boxes of the tile: (column, key, KV head, sequence) of the
      // cache, or (column, key on the page, KV head, page) of the page pool. Keys past the
      // cache are zero-filled; those past the range are zeroed once the tile lands.
      if (lane == 0) {
        uint64_t* bar = &bars[n % kStages];
        mbar_expect_bytes(bar, 2 * kBoxes * kBoxBytes);
        fence_async_shared();
        const int key = paged ? start & int(a.k_pages.page_size - 1) : start;
        const int kseq = paged ? kp[0] : b, vseq = paged ? vp[0] : b;
#pragma unroll
        for (int x = 0; x < kBoxes; ++x) {
          tma_load_4d(ks + x * kBoxBytes / 2, &a.k_map, bar, 64 * x, key, kvh, kseq);
          tma_load_4d(vs + x * kBoxBytes / 2, &a.v_map, bar, 64 * x, key, kvh, vseq);
        }
      }
      return;
    }
    if (!paged || page_per_tile) {
      const int64_t step = paged ? page_step : a.kv_ss;
      const int64_t kb =
          paged ? a.k_pages.row_on_page(kp[0], kvh, start) * D : bh + start * a.kv_ss;
      const int64_t vb = paged ? a.v_pages.row_on_page(vp[0], kvh, start) * D : kb;
      const T* kfrom = k + kb + j0 * step + c8;
      const T* vfrom = v + vb + j0 * step + c8;
#pragma unroll
      for (int it = 0; it < IT; ++it) {
        const int jr = j0 + JS * it;
        const bool valid = start + jr <= kr.hi;
        copy16(ks + jr * ROW + c8, valid ? kfrom + it * JS * step : k, valid);
        copy16(vs + jr * ROW + c8, valid ? vfrom + it * JS * step : v, valid);
      }
      return;
    }
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      const int ci = lane + 32 * it, jr = ci / CH, cc = ci % CH, pos = start + jr;
      const bool valid = pos <= kr.hi;
      const int64_t ko = a.k_pages.row_on_page(kp[it], kvh, pos) * D;
      const int64_t vo = a.v_pages.row_on_page(vp[it], kvh, pos) * D;
      copy16(ks + jr * ROW + cc * 8, valid ? k + ko + cc * 8 : k, valid);
      copy16(vs + jr * ROW + cc * 8, valid ? v + vo + cc * 8 : v, valid);
    }
  };
#pragma unroll
  for (int n = 0; n < kStages - 1; ++n) {
    fetch_pages(n);
    if (n < my_tiles) load(n);
    commit_copies();
  }
  fetch_pages(kStages - 1);

  // Q's A fragments: rows g and g + 8, columns 16 ks + 2 t4 (+1) and + 8; rows past R are 0.
  uint32_t qf[KS][4];
  {
    const T* q = static_cast<const T*>(a.q);
    const T* qrow[2] = {nullptr, nullptr};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = g + 8 * h;
      if (r < R) qrow[h] = q + b * a.q_sb + (kvh * G + r / sq.nq) * a.q_sh + (r % sq.nq) * a.q_ss;
    }
#pragma unroll
    for (int ks = 0; ks < KS; ++ks)
#pragma unroll
      for (int x = 0; x < 4; ++x) {
        const T* row = qrow[x & 1];
        const int col = 16 * ks + 2 * t4 + 8 * (x >> 1);
        qf[ks][x] = row != nullptr ? *reinterpret_cast<const uint32_t*>(row + col) : 0u;
      }
  }

  float o[NB][4];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[nb][e] = 0;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0, 0};  // rows g and g + 8
  const int mi = lane >> 3, ri = lane & 7;             // ldmatrix: this lane's matrix and row

  // Each row's visible keys within the CTA's range (rows g and g + 8; none past R).
  int first[2], last[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = g + 8 * h;
    first[h] = r < R ? first_key(a, sq, r % sq.nq) : 1;
    last[h] = r < R ? min(last_key(a, sq, r % sq.nq), kr.hi) : 0;
  }

  for (int n = 0; n < my_tiles; ++n) {
    const T* ks_ = stages + (n % kStages) * kStageElems;
    const T* vs_ = ks_ + kVOffset;
    const int start = tile_start(n);
    if constexpr (kTma) {
      mbar_wait(&bars[n % kStages], uint32_t(n / kStages) & 1u);
      // V's rows past the range (the next sequence's or head's keys, or a ragged batch's
      // padding) are zeroed: P is 0 there, and 0 x V must be 0.
      const int valid = kr.hi - start + 1;
      if (valid < kTile) {
        T* vz = const_cast<T*>(vs_);
        for (int i = lane; i < (kTile - valid) * kBoxes * 8; i += 32) {
          const int r = valid + i / (kBoxes * 8), x = i % (kBoxes * 8);
          reinterpret_cast<uint4*>(vz + (x >> 3) * kBoxBytes / 2 + r * 64)[x & 7] =
              make_uint4(0, 0, 0, 0);
        }
        fence_async_shared();  // before a later tensor copy into this stage
      }
    } else {
      wait_copies<kStages - 2>();
    }
    __syncwarp();  // tile n has landed for every lane, and tile n - 1's stage is free
    // Tiles n + 1 and n + 2 in flight while this one is computed.
    if (n + kStages - 1 < my_tiles) load(n + kStages - 1);
    commit_copies();
    fetch_pages(n + kStages);
    // S = Q K^T: n-blocks of keys 0-7 and 8-15.
    float s[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
#pragma unroll
    for (int nb = 0; nb < 2; ++nb)
#pragma unroll
      for (int kk = 0; kk < KS; kk += 2) {
        uint32_t bf[4];
        const int r = nb * 8 + ri, c = 2 * kk + mi;
        ldmatrix4(bf, ks_ + (kTma ? swizzled(r, c) : r * ROW + c * 8));
        mma<T>(s[nb], qf[kk], bf[0], bf[1]);
        mma<T>(s[nb], qf[kk + 1], bf[2], bf[3]);
      }
      // Scale, cap and mask; then the online softmax of rows g (e 0, 1) and g + 8 (e 2, 3).
#pragma unroll
    for (int nb = 0; nb < 2; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e >> 1, pos = start + nb * 8 + 2 * t4 + (e & 1);
        s[nb][e] = pos >= first[h] && pos <= last[h] ? score2(a, s[nb][e]) : -INFINITY;
      }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float mx =
          quad_max(fmaxf(fmaxf(s[0][2 * h], s[0][2 * h + 1]), fmaxf(s[1][2 * h], s[1][2 * h + 1])));
      const float m_new = fmaxf(m[h], mx);
      const float alpha = m[h] == -INFINITY ? 0.f : exp2f(m[h] - m_new);
      float sum = 0;
#pragma unroll
      for (int nb = 0; nb < 2; ++nb)
#pragma unroll
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const float p = s[nb][e] == -INFINITY ? 0.f : exp2f(s[nb][e] - m_new);
          s[nb][e] = p;
          sum += p;
        }
      l[h] = l[h] * alpha + sum;
      m[h] = m_new;
      // Once a row's max settles most tiles leave it: then the warp skips the rescale.
      if (__any_sync(0xffffffffu, alpha != 1.f)) {
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
          o[nb][2 * h] *= alpha;
          o[nb][2 * h + 1] *= alpha;
        }
      }
    }
    // O += P V: P's A fragment from the two score n-blocks, V's B fragments by ldmatrix.trans.
    const uint32_t pa[4] = {pack2<T>(s[0][0], s[0][1]), pack2<T>(s[0][2], s[0][3]),
                            pack2<T>(s[1][0], s[1][1]), pack2<T>(s[1][2], s[1][3])};
#pragma unroll
    for (int nb = 0; nb < NB; nb += 2) {
      uint32_t bf[4];
      const int r = ri + (mi & 1) * 8, c = nb + (mi >> 1);
      ldmatrix4_trans(bf, vs_ + (kTma ? swizzled(r, c) : r * ROW + c * 8));
      mma<T>(o[nb], pa, bf[0], bf[1]);
      mma<T>(o[nb + 1], pa, bf[2], bf[3]);
    }
  }
  wait_copies<0>();
  allow_dependent_grid();  // past the keys: the merge may start once every CTA is here
#pragma unroll
  for (int h = 0; h < 2; ++h) l[h] = quad_sum(l[h]);

  // The warps' sums, combined: each warp's O, max and sum through shared memory.
  __syncthreads();
  float* red_o = reinterpret_cast<float*>(smem_raw);  // [warp][16 rows][D]
  float* red_m = red_o + kWarps * 16 * D;             // [warp][16]
  float* red_l = red_m + kWarps * 16;
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      red_o[(warp * 16 + g + 8 * (e >> 1)) * D + nb * 8 + 2 * t4 + (e & 1)] = o[nb][e];
  if (t4 == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      red_m[warp * 16 + g + 8 * h] = m[h];
      red_l[warp * 16 + g + 8 * h] = l[h];
    }
  }
  __syncthreads();
  for (int item = threadIdx.x; item < R * CH; item += kWarps * 32) {
    const int r = item / CH, col = (item % CH) * 8;
    float top = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) top = fmaxf(top, red_m[w * 16 + r]);
    float sum = 0, out[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float mw = red_m[w * 16 + r];
      if (mw == -INFINITY) continue;
      const float f = exp2f(mw - top);
      sum += red_l[w * 16 + r] * f;
#pragma unroll
      for (int e = 0; e < 8; ++e) out[e] += red_o[(w * 16 + r) * D + col + e] * f;
    }
    emit_row<T, D>(a, b, kvh * G + r / sq.nq, r % sq.nq, split, top, sum, out, col);
  }
}

// The tensor maps of K and V: the cache as (B, Hkv, N, D) at its strides, or the page pool as
// (pages, Hkv, page size, D) in its pages' layout; boxes of 64 columns x a tile's keys.
CUtensorMap kv_map(const DecodeArgs& a, const void* data, const PageMap& pages) {
  TensorView4 t;
  t.data = data;
  t.dim = a.head_dim;
  t.heads = a.kv_heads;
  if (pages.table == nullptr) {
    t.batch = a.batch;
    t.seq = a.kv_len;
    t.sb = a.kv_sb;
    t.sh = a.kv_sh;
    t.ss = a.kv_ss;
  } else {
    t.batch = int64_t(a.batch) * pages.pages_per_seq;
    t.seq = pages.page_size;
    t.sb = pages.page_size * pages.heads * a.head_dim;
    t.sh = pages.bshd ? a.head_dim : pages.page_size * a.head_dim;
    t.ss = pages.bshd ? pages.heads * a.head_dim : a.head_dim;
  }
  return swizzled_tensor_map(t, a.dtype, kTile);
}

template <class T, int D, int kWarps, int kStages, DecodeCopy kCopy>
void launch_pipeline(const DecodeArgs& args, cudaStream_t stream) {
  DecodeArgs a = args;
  if constexpr (kCopy == DecodeCopy::tma) {
    a.k_map = kv_map(a, a.k, a.k_pages);
    a.v_map = kv_map(a, a.v, a.v_pages);
  }
  const int smem = mma_smem_bytes(D, kWarps, kStages);
  static const cudaError_t set =
      cudaFuncSetAttribute(attention_mma_kernel<T, D, kWarps, kStages, kCopy>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  ATTNPROF_CUDA(set);
  const dim3 grid(unsigned(a.splits), unsigned(a.kv_heads), unsigned(a.batch));
  attention_mma_kernel<T, D, kWarps, kStages, kCopy><<<grid, kWarps * 32, smem, stream>>>(a);
  ATTNPROF_CUDA(cudaGetLastError());
}

template <class T, int D, int kWarps, int kStages>
void launch_copy(const DecodeArgs& a, cudaStream_t stream) {
  switch (decode_copy_used(a.copy, a.k_pages.table != nullptr ? a.k_pages.page_size : 0)) {
    case DecodeCopy::tma:
      return launch_pipeline<T, D, kWarps, kStages, DecodeCopy::tma>(a, stream);
    case DecodeCopy::cp_async:
      return launch_pipeline<T, D, kWarps, kStages, DecodeCopy::cp_async>(a, stream);
  }
}

template <class T, int D>
void launch_typed(const DecodeArgs& a, cudaStream_t stream) {
  switch (a.pipeline) {
    case DecodePipeline::warps8_stages3:
      return launch_copy<T, D, 8, 3>(a, stream);
    case DecodePipeline::warps4_stages2:
      return launch_copy<T, D, 4, 2>(a, stream);
    case DecodePipeline::warps4_stages3:
      break;
  }
  launch_copy<T, D, 4, 3>(a, stream);
}

}  // namespace

int mma_smem_bytes(int head_dim, int kWarps, int kStages) {
  // The tensor copies' mbarriers (8 bytes a stage of each warp) after everything else.
  return barrier_offset(head_dim, kWarps, kStages) + kWarps * kStages * 8;
}

void launch_mma(const DecodeArgs& a, cudaStream_t stream) {
  const bool bf16 = a.dtype == DType::bf16;
  if (a.head_dim == 64)
    return bf16 ? launch_typed<__nv_bfloat16, 64>(a, stream) : launch_typed<__half, 64>(a, stream);
  return bf16 ? launch_typed<__nv_bfloat16, 128>(a, stream) : launch_typed<__half, 128>(a, stream);
}

}  // namespace attnprof::cuda::decode
