// The masked row softmax of the CUDA naive and math providers: P = softmax(S) over each row's
// visible keys, fp32 arithmetic, S and P stored in the point's dtype (naive) or fp32 (math).
//
// Host reference: reference_row() in src/core/reference.cpp (include/attnprof/reference.hpp),
// which every run of these providers is checked against by verify_outputs()
// (src/core/verify.cpp); the visibility rule is Mask::visible() of include/attnprof/spec.hpp.
// RowMask below is that rule as one interval per row, and tests/gpu/test_cuda_providers.cpp
// checks it against Mask::first_visible/last_visible on the host.
//
// Conventions (the reference's): a row with no visible key (bottom-right or window masks with
// q_len > kv_len) gets P = 0, so O = 0; so does a row whose every score is -inf (the math
// provider masks with -inf before the softmax, as PyTorch's _safe_softmax does).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "attnprof/inputs.hpp"  // ATTNPROF_HD
#include "attnprof/spec.hpp"

namespace attnprof::cuda {

// The visible keys of query row i form [first(i), last(i)] (empty when first > last):
//   causal:  j <= i + offset;   window W: also j > i + offset - W.
struct RowMask {
  int64_t offset = 0;  // diagonal offset: 0 top-left, kv_len - q_len bottom-right and windows
  int64_t window = 0;  // keys per window, 0 for no window
  bool causal = false;
  // A ragged batch (Spec::seqlens): per sequence its query rows and keys (device memory, io.hpp
  // Io::seq_q, seq_kv; null: uniform), each sequence rows_per_seq = q_heads * q_len rows. A row
  // past its sequence's queries sees no key; the others see the mask at their sequence's lengths
  // (the offset recomputed for bottom-right alignment).
  const int32_t* seq_q = nullptr;
  const int32_t* seq_kv = nullptr;
  int64_t rows_per_seq = 0;
  bool bottom_right = false;

  ATTNPROF_HD int64_t first(int64_t i) const {
    const int64_t f = i + offset - window + 1;
    return window > 0 && f > 0 ? f : 0;
  }
  ATTNPROF_HD int64_t last(int64_t i, int64_t kv_len) const {
    return causal && i + offset < kv_len - 1 ? i + offset : kv_len - 1;
  }
};

// The RowMask of `mask` for a (q_len, kv_len) problem (host only; uses Mask's own offset rule).
RowMask row_mask(const Mask& mask, int64_t q_len, int64_t kv_len);
// The same for a ragged batch of `q_heads` heads whose lengths are `seq_q` and `seq_kv` (device).
RowMask ragged_row_mask(const Mask& mask, int64_t q_heads, int64_t q_len, int64_t kv_len,
                        const int32_t* seq_q, const int32_t* seq_kv);

struct SoftmaxArgs {
  const void* s = nullptr;    // rows x kv_len scores, contiguous
  void* p = nullptr;          // rows x kv_len probabilities, contiguous (may not alias s)
  DType dtype = DType::fp32;  // storage of both s and p
  int64_t rows = 0;           // batch * q_heads * q_len; row r is query r % q_len
  int64_t q_len = 1;
  int64_t kv_len = 1;
  RowMask mask{};
  // Score modifiers (Spec::softcap, Spec::sinks): each visible score s becomes
  // softcap * tanh(s / softcap) (0: none), and the sink logit of the row's query head (row / q_len
  // % q_heads; null: none) joins the row's maximum and sum with no probability written for it.
  float softcap = 0;
  const float* sink = nullptr;
  int64_t q_heads = 1;
};

// How launch_masked_softmax covers a row (host only; exposed for
// tests/gpu/test_cuda_providers.cpp).
//   Warp kernel (rows of at most kWarpRowPacks 16-byte packs): `row_threads` lanes (a power of
//   two <= 32) per row, `packs_per_thread` packs each, the row held in fp32 registers;
//   kWarpBlockThreads / row_threads rows per block.
//   Block kernel (longer rows, or rows not made of whole aligned packs: `elems` == 1): one block
//   of `block_threads` threads per row, `packs_per_thread` packs of `elems` keys cached in
//   registers per thread; keys beyond block_threads * packs_per_thread * elems are re-read.
struct SoftmaxPlan {
  bool warp = false;         // warp kernel, else block kernel
  int elems = 1;             // keys per load/store: 16 / sizeof(dtype), or 1 (scalar)
  int packs_per_thread = 1;  // compile-time per kernel instantiation
  int row_threads = 32;      // threads per row (warp kernel), = block_threads (block kernel)
  int block_threads = 32;
  int64_t rows_per_block = 1;
};
inline constexpr int kWarpBlockThreads = 256;
inline constexpr int kWarpRowPacks = 128;  // 1024 keys in fp16/bf16, 512 in fp32
SoftmaxPlan softmax_plan(DType dtype, int64_t kv_len, bool aligned);

// Enqueues the softmax on `stream`; throws CudaError if the launch fails, std::invalid_argument
// if kv_len >= 2^30.
void launch_masked_softmax(const SoftmaxArgs& args, cudaStream_t stream);

}  // namespace attnprof::cuda
