// K/V head expansion for grouped-query attention: torch.repeat_interleave(x, group, dim=heads).
// cuda.naive.expand runs it before attention (so the cost of materializing the expanded K and V
// is measured), cuda.math runs it on its fp32 copies (as PyTorch's math backend does with
// enable_gqa). A byte copy: any dtype, either layout.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "attnprof/spec.hpp"

namespace attnprof::cuda {

// A (batch, heads, len, dim) tensor viewed as outer x heads x inner bytes:
//   bhsd: outer = batch,       inner = len * dim * element bytes
//   bshd: outer = batch * len, inner = dim * element bytes
struct HeadBlocks {
  int64_t outer = 0;
  int64_t heads = 0;
  int64_t inner_bytes = 0;
};
HeadBlocks head_blocks(Layout layout, int64_t batch, int64_t heads, int64_t len, int64_t dim,
                       DType dtype);

// dst head h of each outer block = src head h / group; dst holds src.heads * group heads.
// Enqueued on `stream`; throws CudaError if the launch fails.
void launch_repeat_kv(const void* src, void* dst, const HeadBlocks& src_blocks, int64_t group,
                      cudaStream_t stream);

}  // namespace attnprof::cuda
