// cuda.flash's backward (flash.cpp, mode bwd): FlashAttention-2's backward written for sm80 and
// newer (mma.sync, ldmatrix, cp.async). From Q, K, V, O, dO and the forward's log-sum-exp it
// writes dQ, dK and dV without materializing the scores:
//
//   1. delta: D_i = sum_d dO[i, d] O[i, d] per query row (fp32), and dQ's fp32 accumulator
//      zeroed;
//   2. the key blocks: grid (key blocks of kFlashBwdKeys, kv_heads, batch), 256 threads, one CTA
//      per block of keys of one KV head, its K and V held in shared memory. For each query head
//      of the group and each block of flash_bwd_step_queries(D) queries that sees the keys, with Q
//      and dO copied in: S^T = K Q^T and P^T = exp(scale S^T - LSE) (each warp 32 keys x half the
//      step; the mask tested only on tiles it cuts), dP^T = V dO^T, dS^T = P^T (dP^T - D); P^T and
//      dS^T through shared memory, then dV += P^T dO and dK += dS^T Q (each warp 32 keys x
//      half of D) and dQ += dS K (32 queries x 32 columns) added to the fp32 accumulator
//      (atomic adds, four floats each on sm_90: the order of the key blocks' additions varies,
//      so dQ's last bits may vary between launches). dK (x scale) and dV are written once per
//      CTA: a KV head's gradients sum over its query heads in place (GQA);
//   3. dQ = scale x the accumulator, in the dtype.
//
// The deterministic option (FlashBwdArgs::dq_acc null) replaces dQ's atomics: step 2 leaves
// dQ out, and a kernel per block of kFlashBwdQueries queries computes S and dP again for the
// key tiles its rows see and sums dQ += dS K in registers, in key order (two more products per
// score: about 1.4x the backward's FLOPs, the same bits every launch).
//
// Masks none, causal (top-left and bottom-right) and window; Nq != Nk; head dims 64 and 128;
// bf16 and fp16. Not the logit softcap, sinks or a ragged batch (flash.cpp refuses them).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/attention_args.hpp"
#include "providers/cuda/kernel_dispatch.hpp"

namespace attnprof::cuda {

// Keys per CTA of the key-block kernel (eight warps), and queries per CTA of the deterministic
// option's dQ kernel.
// The head dims the backward is instantiated for (fp16 and bf16 each).
using FlashBwdHeadDims = HeadDims<64, 128>;

inline constexpr int kFlashBwdKeys = 128;
inline constexpr int kFlashBwdQueries = 64;

struct FlashBwdArgs : AttentionArgs {
  const void* d_o = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  // Element strides (b, h, s) of dO and dQ (as Q's shape), and of dK and dV (as K's).
  int64_t do_sb = 0, do_sh = 0, do_ss = 0;
  int64_t dq_sb = 0, dq_sh = 0, dq_ss = 0;
  int64_t dkv_sb = 0, dkv_sh = 0, dkv_ss = 0;
  float* delta = nullptr;   // B*Hq*Nq fp32 (workspace)
  float* dq_acc = nullptr;  // B*Hq*Nq*D fp32 (workspace); null: the deterministic option
};

// Floats of the workspace: dQ's accumulator unless deterministic, and D.
int64_t flash_bwd_workspace_floats(int64_t batch, int64_t q_heads, int64_t q_len, int64_t head_dim,
                                   bool deterministic);
// Points a.dq_acc (null when deterministic) and a.delta into `workspace`: a's shape's
// flash_bwd_workspace_floats, 16-byte aligned. dQ's accumulator comes first, so that its
// four-float atomics stay aligned whatever B*Hq*Nq is.
void place_flash_bwd_workspace(FlashBwdArgs& a, float* workspace, bool deterministic);
// Bytes of dynamic shared memory of the key-block kernel, and its queries per step.
int flash_bwd_smem_bytes(int head_dim);
int flash_bwd_step_queries(int head_dim);

// Step 2 in another form: a kernel (or kernels) enqueued on the stream that computes dK and dV
// and, when a.dq_acc is not null, adds dQ to the accumulator (flash_sm90_bwd_kernel.cuh).
using FlashBwdKeyBlocks = void (*)(const FlashBwdArgs& a, cudaStream_t stream);

// Enqueues the three kernels on `stream` (a.lse: the forward's, natural units), step 2 by
// `key_blocks` where given. head_dim 64 or 128; bf16 or fp16; uniform batch.
void launch_flash_bwd(const FlashBwdArgs& a, cudaStream_t stream,
                      FlashBwdKeyBlocks key_blocks = nullptr);

}  // namespace attnprof::cuda
