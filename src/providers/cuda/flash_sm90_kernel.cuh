// The fused prefill kernel behind cuda.flash.sm90 (flash_sm90.cpp): attention's forward for
// Hopper (sm_90a) on wgmma, the tensor memory accelerator and mbarriers, with the warps
// specialized.
//
//   persistent: one CTA of 384 threads per SM, each walking work items (a block of
//   kFlashSm90Rows query rows of one head; GQA and MQA read the KV head in place). A producer
//   warpgroup issues the tensor copies: each item's Q block, then K and V tiles of 128 keys (64
//   at head dim 256, where shared memory holds no more) into
//   two stages each, every stage (and Q) behind a full and an empty mbarrier, running ahead into
//   the next item while the consumers finish one. Two consumer warpgroups of 64 rows each compute
//   S = Q K^T (wgmma, both operands in shared memory) and O += P V (P from registers), the
//   softmax of tile t under P V of tile t - 1, and take turns at the tensor cores (named
//   barriers) so that one warpgroup's softmax runs under the other's GEMMs.
//
// Masks none, causal (both alignments) and window, masked tiles skipped and the longest blocks
// first; Nq != Nk; ragged batches; the logit softcap; sinks. O and the LSE are written.
#pragma once

#include <cuda_runtime.h>

#include "providers/cuda/attention_args.hpp"
#include "providers/cuda/kernel_dispatch.hpp"

namespace attnprof::cuda {

// The head dims the forward is instantiated for (fp16 and bf16 each).
using FlashSm90HeadDims = HeadDims<64, 128, 256>;

inline constexpr int kFlashSm90Rows = 128;     // query rows per CTA: two warpgroups of 64
inline constexpr int kFlashSm90Threads = 384;  // two consumer warpgroups and a producer
inline constexpr int kFlashSm90Stages = 2;     // tiles of K (and of V) in flight

struct FlashSm90Args : AttentionArgs {
  // Whether the two consumer warpgroups take turns at the tensor cores (ATTNPROF_FLASH_SM90=
  // nopingpong turns it off, for comparing on a device).
  bool pingpong = true;
  // The order of the work items: a head's blocks together (true), or each block of every head
  // together (flash_sm90.cpp chooses by the mask).
  bool heads_major = true;
  // Persistent CTAs to launch: the work items (blocks of query rows x q_heads x batch), at most
  // one per SM (flash_sm90.cpp).
  int ctas = 0;
};

// Keys per K and V tile at a head dim: 128, or 64 at 256.
constexpr int flash_sm90_key_tile(int head_dim) {
  return head_dim == 256 ? 64 : 128;
}
// Bytes of dynamic shared memory one CTA takes at a head dim (64, 128 or 256).
int flash_sm90_smem_bytes(int head_dim);

// Enqueues the forward on `stream`. head_dim 64, 128 or 256; bf16 or fp16; a device of compute
// capability 9.0. Throws std::runtime_error where the tensors cannot be mapped (tensor_map.hpp).
void launch_flash_sm90(const FlashSm90Args& a, cudaStream_t stream);

}  // namespace attnprof::cuda
