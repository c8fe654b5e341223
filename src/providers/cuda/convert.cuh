// Element-wise conversion of a (batch, heads, len, dim) tensor: dst = factor * src, with a dtype
// cast and a layout change in one pass. cuda.math runs it as PyTorch's math backend runs its
// element-wise ops, one launch each: the fp32 upcast of Q, K, V, the sqrt(scale) multiplies of
// Q and K, and the casts of O and of the attention weights back to the input dtype.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "attnprof/spec.hpp"

namespace attnprof::cuda {

struct TensorRef {
  void* data = nullptr;
  DType dtype = DType::fp32;
  Layout layout = Layout::bhsd;
};

struct Dims4 {
  int64_t batch = 0, heads = 0, len = 0, dim = 0;
  int64_t elems() const { return batch * heads * len * dim; }
};

// Enqueued on `stream`; throws CudaError if the launch fails. src and dst may not overlap.
void launch_convert(const TensorRef& src, const TensorRef& dst, const Dims4& dims, float factor,
                    cudaStream_t stream);

}  // namespace attnprof::cuda
