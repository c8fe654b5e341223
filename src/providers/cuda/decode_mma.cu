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
#include "providers/cuda/decode_mma_tile.cuh"
#include "providers/cuda/tensor_map.hpp"
#include "providers/cuda/tma.cuh"
#include "providers/cuda/wgmma.cuh"

namespace attnprof::cuda::decode {

namespace {

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

// Bytes of the stages: the padded rows of cp.async, or the boxes (and the slack that aligns them
// to 1024 bytes), whichever is larger, so both copies run at the same occupancy.
constexpr int stage_bytes(int head_dim, int warps, int stages) {
  const int padded = warps * stages * 2 * kTile * (head_dim + 8) * 2;
  const int boxes = warps * stages * 2 * (head_dim / 64) * kBoxBytes + kSwizzleAlign;
  return padded > boxes ? padded : boxes;
}
// Bytes before the tensor copies' mbarriers.
constexpr int barrier_offset(int head_dim, int warps, int stages) {
  return barrier_offset_past(stage_bytes(head_dim, warps, stages), head_dim, warps);
}

// kWarps warps per CTA, each kStages tiles deep.
template <class T, int D, int kWarps, int kStages, DecodeCopy kCopy>
__global__ void __launch_bounds__(kWarps * 32)
    attention_mma_kernel(const __grid_constant__ DecodeArgs a) {
  constexpr int CH = D / 8;  // 16-byte chunks per row
  constexpr int ROW = staged_row<D>();
  constexpr bool kTma = kCopy == DecodeCopy::tma && kTmaBuilt;
  constexpr int kBoxes = D / 64;
  static_assert(sizeof(T) == 2, "the boxes' offsets count 16-bit elements");
  extern __shared__ __align__(16) unsigned char smem_raw[];

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const Seq sq = seq_of(a, b);
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

  uint32_t qf[D / 16][4];
  WarpSums<D> w;
  start_rows<T, D>(a, sq, kr, b, kvh, lane, qf, w);

  constexpr int kRows = kTma ? kTile : 0;  // the tiles' layout: boxes of 16 keys, or padded
  for (int n = 0; n < my_tiles; ++n) {
    const T* ks_ = stages + (n % kStages) * kStageElems;
    const T* vs_ = ks_ + kVOffset;
    const int start = tile_start(n);
    if constexpr (kTma) {
      mbar_wait(&bars[n % kStages], uint32_t(n / kStages) & 1u);
      // V's rows past the range zeroed (before a later tensor copy into this stage).
      const int valid = kr.hi - start + 1;
      if (valid < kTile) zero_rows_past<D, kTile>(const_cast<T*>(vs_), valid, lane);
    } else {
      wait_copies<kStages - 2>();
    }
    __syncwarp();  // tile n has landed for every lane, and tile n - 1's stage is free
    // Tiles n + 1 and n + 2 in flight while this one is computed.
    if (n + kStages - 1 < my_tiles) load(n + kStages - 1);
    commit_copies();
    fetch_pages(n + kStages);
    add_tile<T, D, kRows>(a, qf, ks_, vs_, start, lane, w);
  }
  wait_copies<0>();
  allow_dependent_grid();  // past the keys: the merge may start once every CTA is here
  combine_warps<T, D, kWarps>(a, sq, b, kvh, split, smem_raw, kWarps * 32, w);
}

template <class T, int D, int kWarps, int kStages, DecodeCopy kCopy>
void launch_pipeline(const DecodeArgs& args, cudaStream_t stream) {
  DecodeArgs a = args;
  if constexpr (kCopy == DecodeCopy::tma) {
    a.k_map = kv_map(a, a.k, a.k_pages, kTile);
    a.v_map = kv_map(a, a.v, a.v_pages, kTile);
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
    default:  // 4x3; the producer forms are decode_producer.cu's
      break;
  }
  launch_copy<T, D, 4, 3>(a, stream);
}

}  // namespace

CUtensorMap kv_map(const DecodeArgs& a, const void* data, const PageMap& pages, int rows,
                   bool whole_rows) {
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
  return whole_rows ? row_tensor_map(t, a.dtype, rows, a.l2_promotion)
                    : swizzled_tensor_map(t, a.dtype, rows, a.l2_promotion);
}

int mma_smem_bytes(int head_dim, int kWarps, int kStages) {
  // The tensor copies' mbarriers (8 bytes a stage of each warp) after everything else.
  return barrier_offset(head_dim, kWarps, kStages) + kWarps * kStages * 8;
}

void launch_mma(const DecodeArgs& a, cudaStream_t stream) {
  dispatch_dtype<__half, __nv_bfloat16>(a.dtype, "cuda.decode", [&](auto t) {
    DecodeMmaHeadDims::dispatch(a.head_dim, "cuda.decode's tensor-core kernel", [&](auto d) {
      launch_typed<decltype(t), decltype(d)::value>(a, stream);
    });
  });
}

}  // namespace attnprof::cuda::decode
