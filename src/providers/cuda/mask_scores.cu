// The additive mask of cuda.math (mask_scores.cuh). Host reference: Mask::visible()
// (include/attnprof/spec.hpp) through reference_row(); RowMask is tested against it.
#include <algorithm>
#include <cmath>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/mask_scores.cuh"

namespace attnprof::cuda {
namespace {

// Every element is read and written, as an add of a float mask would: the step costs what
// PyTorch's costs in traffic on S, minus the (L2-resident) reads of the mask itself.
__global__ void mask_scores_kernel(float* __restrict__ s, int64_t rows, int64_t q_len,
                                   int64_t kv_len, RowMask mask) {
  const int64_t total = rows * kv_len;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t j = e % kv_len;
    const int64_t i = (e / kv_len) % q_len;
    const bool visible = j >= mask.first(i) && j <= mask.last(i, kv_len);
    s[e] += visible ? 0.f : -INFINITY;
  }
}

}  // namespace

void launch_mask_scores(float* s, int64_t rows, int64_t q_len, int64_t kv_len, RowMask mask,
                        cudaStream_t stream) {
  const int64_t total = rows * kv_len;
  if (total <= 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  mask_scores_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(s, rows, q_len, kv_len,
                                                                             mask);
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace attnprof::cuda
