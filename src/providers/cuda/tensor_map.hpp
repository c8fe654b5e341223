// Tensor maps of the tensor memory accelerator for attnprof's Hopper kernels: a (B, H, S, D)
// tensor of 16-bit elements at any element strides, read in boxes of 64 columns (128 bytes, the
// 128-byte swizzle's row) by `box_rows` rows, out-of-bounds rows zero-filled. The driver's
// encoder is reached through the runtime (cudaGetDriverEntryPointByVersion), so nothing links
// libcuda.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "attnprof/spec.hpp"

namespace attnprof::cuda {

struct TensorView4 {
  const void* data = nullptr;
  int64_t batch = 0, heads = 0, seq = 0, dim = 0;  // sizes
  int64_t sb = 0, sh = 0, ss = 0;                  // element strides (the last dim is dense)
};

// Throws std::runtime_error (one line: what the accelerator needs) for a view it cannot map: a
// base not 16-byte aligned, a stride not a multiple of 16 bytes, or a dtype not 16-bit.
CUtensorMap swizzled_tensor_map(const TensorView4& t, DType dtype, int box_rows);

}  // namespace attnprof::cuda
