// cuda.flash.sm90's backward (flash_sm90.cpp, modes bwd and fwd_bwd): flash_bwd_kernel.cuh's
// three steps, its step 2 (the key blocks) on Hopper's warpgroup products (wgmma, sm_90a):
//
//   a CTA per block of kFlashBwdKeys keys of one KV head, two warpgroups of 64 keys each, K and V
//   held in 128-byte-swizzled shared memory; for each query head of the group and each block of
//   flash_sm90_bwd_step_queries(D) queries that sees the keys (Q, dO, their LSE and D copied in,
//   double-buffered): S^T = K Q^T and dP^T = V dO^T (wgmma from shared memory), P^T and dS^T in
//   registers, dV += P^T dO and dK += dS^T Q (A from registers), dS^T to shared memory, and dQ
//   += dS K (A and B read MN-major) added to the fp32 accumulator by four-float atomics.
//
// Under the deterministic option (a.dq_acc null) dQ is left to flash_bwd_kernel.cu's kernel of
// its own. Head dims 64 and 128; the masks, shapes and limits of flash_bwd_kernel.cuh.
#pragma once

#include <cuda_runtime.h>

#include "providers/cuda/flash_bwd_kernel.cuh"

namespace attnprof::cuda {

// The head dims the backward is instantiated for (fp16 and bf16 each).
using FlashSm90BwdHeadDims = HeadDims<64, 128>;

// Queries per step: 128 at D 64, 64 at D 128.
int flash_sm90_bwd_step_queries(int head_dim);
// Bytes of dynamic shared memory a CTA asks for.
int flash_sm90_bwd_smem_bytes(int head_dim);

// Step 2 of launch_flash_bwd (a FlashBwdKeyBlocks) on sm_90a.
void launch_flash_sm90_bwd_key_blocks(const FlashBwdArgs& a, cudaStream_t stream);

}  // namespace attnprof::cuda
