// cuda.decode's tensor-core kernel with a producer warp (sm_90; decode_kernel.cuh
// DecodePipeline producer*): the same rows and tile arithmetic as decode_mma.cu
// (decode_mma_tile.cuh), with the keys streamed CTA-wide instead of per warp.
//
// The CTA's chunk of keys is cut into stages of kStageKeys (64 or 128) consecutive keys. A fifth
// warp, the producer, asks the tensor memory accelerator for each stage's K and V as boxes of 64
// columns by the stage's keys (by 16 keys, a tile, when the cache is paged: a tile lies on one
// page): a few large requests where decode_mma.cu's warps make many of 16 keys each. The stage
// completes on its `full` mbarrier. Each of the four consumer warps takes a quarter of the stage
// (one or two tiles of 16 keys), adds it to its sums, and arrives on the stage's `empty`
// mbarrier; the producer refills a stage once all four have arrived. kStages stages are in
// flight, so the copies run ahead of the mma by kStages - 1 stages.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/decode_mma_tile.cuh"
#include "providers/cuda/tensor_map.hpp"
#include "providers/cuda/tma.cuh"
#include "providers/cuda/wgmma.cuh"

namespace attnprof::cuda::decode {

namespace {

constexpr int kConsumers = 4;  // consumer warps (the producer is warp 4)

// Bytes of one stage: K's and V's boxes of 64 columns x the stage's keys.
constexpr int producer_stage_bytes(int head_dim, int keys) {
  return 2 * (head_dim / 64) * keys * 128;
}
// Bytes before the mbarriers: the stages and the slack that aligns them to 1024 bytes.
constexpr int producer_barrier_offset(int head_dim, int keys, int stages) {
  return barrier_offset_past(stages * producer_stage_bytes(head_dim, keys) + kSwizzleAlign,
                             head_dim, kConsumers);
}

// kRows: the boxes hold whole rows (tensor_map.hpp row_tensor_map) instead of 64 columns.
template <class T, int D, int kStageKeys, int kStages, bool kRows>
__global__ void __launch_bounds__((kConsumers + 1) * 32)
    attention_producer_kernel(const __grid_constant__ DecodeArgs a) {
  constexpr int kSub = kStageKeys / (kConsumers * kTile);  // tiles per consumer warp and stage
  constexpr int kBoxes = D / 64;
  constexpr int kBoxElems = kStageKeys * 64;  // one box: 64 columns x the stage's keys
  constexpr int kStageElems = 2 * kBoxes * kBoxElems;
  static_assert(sizeof(T) == 2, "the boxes' offsets count 16-bit elements");
  static_assert(kSub >= 1 && kSub * kConsumers * kTile == kStageKeys, "whole tiles per warp");
  extern __shared__ __align__(16) unsigned char smem_raw[];

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const Seq sq = seq_of(a, b);
  const KeyRange kr = key_range(a, sq, split, kTile);
  const int n_stages = (kr.tiles + kConsumers * kSub - 1) / (kConsumers * kSub);

  const uintptr_t base = reinterpret_cast<uintptr_t>(smem_raw);
  T* stages = reinterpret_cast<T*>(
      smem_raw + ((base + kSwizzleAlign - 1) / kSwizzleAlign * kSwizzleAlign - base));
  uint64_t* full =
      reinterpret_cast<uint64_t*>(smem_raw + producer_barrier_offset(D, kStageKeys, kStages));
  uint64_t* empty = full + kStages;
  WarpSums<D> w;
  if constexpr (kTmaBuilt) {
    if (threadIdx.x == 0) {
#pragma unroll
      for (int st = 0; st < kStages; ++st) {
        mbar_init(&full[st], 1);
        mbar_init(&empty[st], kConsumers);
      }
      mbar_init_fence();
    }
    __syncthreads();
    if (warp == kConsumers) {
      // The producer. A stage's boxes: each 64-column box of K and of V (or each box of whole
      // rows), over the stage's keys, or (a paged cache) over each tile of 16 keys, which lies
      // on one page: lane i asks for box i. A paged cache's page ids are read a stage ahead of
      // the copies that need them.
      const bool paged = a.k_pages.table != nullptr;
      const int rows = paged ? kTile : kStageKeys;
      constexpr int kPer = kRows ? 1 : kBoxes;  // boxes of K (or V) per row block
      const int boxes = kStageKeys / rows * 2 * kPer;
      const int rb = lane / (2 * kPer), is_v = (lane / kPer) & 1, x = lane % kPer;
      const CUtensorMap* map = is_v ? &a.v_map : &a.k_map;
      const PageMap& pages = is_v ? a.v_pages : a.k_pages;
      auto seq_of_box = [&](int n) {  // the box's sequence (contiguous) or page
        if (!paged || lane >= boxes || n >= n_stages) return b;
        return int(pages.page(b, min(kr.t0 + n * kStageKeys + rb * rows, kr.hi)));
      };
      int seq = seq_of_box(0);
      for (int n = 0; n < n_stages; ++n) {
        const int st = n % kStages;
        if (n >= kStages) mbar_wait(&empty[st], uint32_t(n / kStages - 1) & 1u);
        if (lane == 0) mbar_expect_bytes(&full[st], kStageElems * int(sizeof(T)));
        __syncwarp();
        if (lane < boxes) {
          const int key = kr.t0 + n * kStageKeys + rb * rows;
          const int k0 = paged ? key & int(a.k_pages.page_size - 1) : key;
          T* dst = stages + st * kStageElems + is_v * kBoxes * kBoxElems;
          if constexpr (kRows) {
            tma_load_5d(dst + rb * rows * D, map, &full[st], 0, 0, k0, kvh, seq);
          } else {
            tma_load_4d(dst + x * kBoxElems + rb * rows * 64, map, &full[st], 64 * x, k0, kvh, seq);
          }
        }
        seq = seq_of_box(n + 1);
      }
    } else {
      // A consumer: tiles warp * kSub .. + kSub - 1 of each stage.
      uint32_t qf[D / 16][4];
      start_rows<T, D>(a, sq, kr, b, kvh, lane, qf, w);
      for (int n = 0; n < n_stages; ++n) {
        const int st = n % kStages;
        T* ks = stages + st * kStageElems;
        T* vs = ks + kBoxes * kBoxElems;
        mbar_wait(&full[st], uint32_t(n / kStages) & 1u);
#pragma unroll
        for (int j = 0; j < kSub; ++j) {
          const int tile = (n * kConsumers + warp) * kSub + j;  // of the CTA's
          if (tile >= kr.tiles) break;
          const int start = kr.t0 + tile * kTile, row = (warp * kSub + j) * kTile;
          const int valid = kr.hi - start + 1;
          const int at = row * (kRows ? D : 64);  // the tile's first row
          if (valid < kTile) {
            zero_rows_past<D, kStageKeys, kRows>(vs + at, valid, lane);
            __syncwarp();
          }
          add_tile<T, D, kStageKeys, kRows>(a, qf, ks + at, vs + at, start, lane, w);
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(&empty[st]);
      }
    }
  }
  allow_dependent_grid();  // past the keys: the merge may start once every CTA is here
  combine_warps<T, D, kConsumers>(a, sq, b, kvh, split, smem_raw, (kConsumers + 1) * 32, w);
}

template <class T, int D, int kStageKeys, int kStages, bool kRows>
void launch_stages(const DecodeArgs& args, cudaStream_t stream) {
  DecodeArgs a = args;
  const int rows = a.k_pages.table != nullptr ? kTile : kStageKeys;
  a.k_map = kv_map(a, a.k, a.k_pages, rows, kRows);
  a.v_map = kv_map(a, a.v, a.v_pages, rows, kRows);
  const int smem = producer_smem_bytes(D, a.pipeline);
  static const cudaError_t set =
      cudaFuncSetAttribute(attention_producer_kernel<T, D, kStageKeys, kStages, kRows>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  ATTNPROF_CUDA(set);
  const dim3 grid(unsigned(a.splits), unsigned(a.kv_heads), unsigned(a.batch));
  attention_producer_kernel<T, D, kStageKeys, kStages, kRows>
      <<<grid, (kConsumers + 1) * 32, smem, stream>>>(a);
  ATTNPROF_CUDA(cudaGetLastError());
}

template <class T, int D>
void launch_typed(const DecodeArgs& a, cudaStream_t stream) {
  switch (a.pipeline) {
    case DecodePipeline::producer128_stages3:
      return launch_stages<T, D, 128, 3, false>(a, stream);
    case DecodePipeline::producer64_stages6:
      return launch_stages<T, D, 64, 6, false>(a, stream);
    case DecodePipeline::producer64_stages3_rows:
      return launch_stages<T, D, 64, 3, true>(a, stream);
    default:  // producer64_stages3
      return launch_stages<T, D, 64, 3, false>(a, stream);
  }
}

}  // namespace

int producer_smem_bytes(int head_dim, DecodePipeline p) {
  const int stages = pipeline_stages(p);
  return producer_barrier_offset(head_dim, pipeline_stage_keys(p), stages) + 2 * stages * 8;
}

void launch_producer(const DecodeArgs& a, cudaStream_t stream) {
  dispatch_dtype<__half, __nv_bfloat16>(a.dtype, "cuda.decode", [&](auto t) {
    DecodeMmaHeadDims::dispatch(a.head_dim, "cuda.decode's tensor-core kernel", [&](auto d) {
      launch_typed<decltype(t), decltype(d)::value>(a, stream);
    });
  });
}

}  // namespace attnprof::cuda::decode
