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

// How much the L2 fetches from memory on a miss of a box's row (0: the row alone; 64, 128 or
// 256 bytes).
enum class L2Promotion { none = 0, b64 = 64, b128 = 128, b256 = 256 };

// Throws std::runtime_error (one line: what the accelerator needs) for a view it cannot map: a
// base not 16-byte aligned, a stride not a multiple of 16 bytes, or a dtype not 16-bit.
CUtensorMap swizzled_tensor_map(const TensorView4& t, DType dtype, int box_rows,
                                L2Promotion promotion = L2Promotion::b256);
// The same view read in boxes of whole rows: the row's D columns as D / 64 blocks of 64 (a 5-d
// map: 64 columns, block, row, head, batch), a box holding `box_rows` rows of every block, so
// one request asks for whole rows. A box lands as 128-byte lines in the order (row, block),
// 128-byte swizzled by the line: block j of row r is line (D / 64) r + j.
CUtensorMap row_tensor_map(const TensorView4& t, DType dtype, int box_rows,
                           L2Promotion promotion = L2Promotion::b256);

}  // namespace attnprof::cuda
