// The absorbed-MLA decode kernel behind cuda.mla.decode (mla_decode.cpp): DeepSeek-V3's decode
// step with the projections absorbed, so that every query head attends one shared latent KV head
// with d_qk 576 (512 latent + 64 rope) and d_v 512. With 128 query heads a token's K and V feed
// 128 rows: the work is near the balance of compute and memory, and it runs on Hopper's
// warpgroup MMA (wgmma, sm_90a only).
//
//   grid (row blocks x kv_heads, splits, batch), 256 threads (two warpgroups): one CTA per 64
//   query rows (heads x query tokens) of a KV head and one chunk of its keys; the row blocks of a
//   chunk are neighbours in the grid, so the second reads the latent mostly from L2. Q's 64 x 576
//   block stays in shared memory; the latent (K, whose first 512 columns are V: the spec's
//   shared_latent) streams through shared memory (cp.async; MlaPipeline). Warpgroup 0 computes
//   S = Q K^T (wgmma, both operands in shared memory) and the online softmax, and hands P and
//   each row's rescale to warpgroup 1 through shared memory; each warpgroup adds P V for its half
//   of the 512 value columns (wgmma, P from registers, V MN-major in shared memory). One split
//   writes O and the LSE; several write fp32 partial sums that cuda.decode's merge kernel combines.
//
// Masks none, causal and window (per query token), ragged batches, contiguous or paged K and V, a
// logit softcap, sinks; bf16 and fp16.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/decode_kernel.cuh"

namespace attnprof::cuda {

inline constexpr int kMlaQkDim = 576;
inline constexpr int kMlaVDim = 512;
inline constexpr int kMlaRows = 64;  // query rows per CTA
inline constexpr int kMlaThreads = 256;
// How the latent streams (bench/results/h200/2026-12-02-mla-decode, calls 4 and 5): tiles of 64
// keys in two stages, scores, softmax and P V one after the other (the default: 608 us at B 64,
// KV 16k); or tiles of 32 in four stages with P V a tile behind the scores, the softmax under it
// (715 us: Q K^T at 32 keys reads Q from shared memory twice as often per key).
enum class MlaPipeline { serial64, overlap32 };

struct MlaDecodeArgs : DecodeArgs {
  int row_blocks = 1;  // CTAs per (KV head, chunk)
  MlaPipeline pipeline = MlaPipeline::serial64;
};

// CTAs per (KV head, chunk): the KV head's query rows (group x q_len) in blocks of kMlaRows.
int mla_row_blocks(int group, int q_len);
// Keys per tile, stages, and bytes of dynamic shared memory one CTA takes.
int mla_key_tile(MlaPipeline p);
int mla_stages(MlaPipeline p);
int mla_decode_smem_bytes(MlaPipeline p);

// Enqueues the decode (and, with several splits, the merge) on `stream`. head_dim 576, v_head_dim
// 512, a shared latent (V is never read: K's first 512 columns are), bf16 or fp16; sm_90.
void launch_mla_decode(const MlaDecodeArgs& a, cudaStream_t stream);

}  // namespace attnprof::cuda
