// cuda.math's separate masking step: S += mask in place, where the mask is 0 on visible keys
// and -inf elsewhere, as PyTorch's math backend adds its additive float mask to the fp32 scores
// (attn.add_(attn_mask)) before the softmax. The mask is computed from RowMask, not read from a
// materialized (q_len x kv_len) tensor.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/softmax.cuh"

namespace attnprof::cuda {

// s: rows x kv_len fp32 scores, row r being query r % q_len. Enqueued on `stream`.
void launch_mask_scores(float* s, int64_t rows, int64_t q_len, int64_t kv_len, RowMask mask,
                        cudaStream_t stream);

}  // namespace attnprof::cuda
