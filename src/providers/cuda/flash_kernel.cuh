// The fused prefill kernel behind cuda.flash (flash.cpp): FlashAttention-2's forward written
// for sm80 and newer (mma.sync, ldmatrix, cp.async), compute-bound, so it is written to keep
// the tensor cores fed and never to materialize the scores.
//
//   grid (query blocks, q_heads, batch), 128 threads: one CTA per block of kFlashRows query rows
//   of one head (a query head's KV head is q_head / group: GQA and MQA read K and V in place).
//   Q's block stays in shared memory; K and V stream through it a tile of keys at a time, K's
//   next tile copied while P V runs and V's while Q K^T runs (cp.async). Each warp owns 32 rows:
//   S = Q K^T and O += P V on mma.sync m16n8k16 in fp32, an online softmax in base 2 on the
//   accumulator fragments, P rounded to the dtype. Tiles no row of the block sees are skipped
//   (causal and window masks), tiles every row sees in full are not masked, and under a causal
//   mask the longest blocks start first.
//
// Masks none, causal (top-left and bottom-right) and window; Nq != Nk; a ragged batch's lengths
// (seq_q, seq_kv) bound each sequence's rows and keys; a logit softcap is applied to each scaled
// score, a sink logit joins each row's max and sum at the end. O and the LSE are written.
#pragma once

#include <cuda_runtime.h>

#include "providers/cuda/attention_args.hpp"
#include "providers/cuda/kernel_dispatch.hpp"

namespace attnprof::cuda {

// Query rows per CTA (4 warps of 32) and its threads.
inline constexpr int kFlashRows = 128;
inline constexpr int kFlashThreads = 128;

// Nothing beyond what every attnprof kernel is told.
using FlashArgs = AttentionArgs;

// The head dims the kernel is instantiated for (fp16 and bf16 each).
using FlashHeadDims = HeadDims<64, 128>;

// Keys per tile at a head dim (64 or 128).
int flash_key_tile(int head_dim);
// Bytes of dynamic shared memory one CTA takes (Q's block, one K tile, one V tile).
int flash_smem_bytes(int head_dim);

// Enqueues the forward on `stream`. head_dim 64 or 128; bf16 or fp16.
void launch_flash(const FlashArgs& a, cudaStream_t stream);

}  // namespace attnprof::cuda
