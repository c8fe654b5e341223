// K/V head expansion (repeat_kv.cuh). Host reference: the definition of repeat_interleave, checked
// end to end by verify_outputs() on cuda.naive.expand and cuda.math with GQA shapes.
#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/repeat_kv.cuh"

namespace attnprof::cuda {

HeadBlocks head_blocks(Layout layout, int64_t batch, int64_t heads, int64_t len, int64_t dim,
                       DType dtype) {
  const auto bytes = static_cast<int64_t>(dtype_bytes(dtype));
  if (layout == Layout::bhsd) return {batch, heads, len * dim * bytes};
  return {batch * len, heads, dim * bytes};
}

namespace {

struct alignas(16) Bytes16 {
  uint4 v;
};

// One thread per Unit of the destination (grid-stride): dst[o][h][x] = src[o][h / group][x],
// with x counted in Units of sizeof(Unit) bytes. 64-bit indices throughout.
template <class Unit>
__global__ void repeat_kv_kernel(const Unit* __restrict__ src, Unit* __restrict__ dst,
                                 int64_t outer, int64_t kv_heads, int64_t group, int64_t inner) {
  const int64_t q_heads = kv_heads * group;
  const int64_t total = outer * q_heads * inner;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t x = e % inner;
    const int64_t t = e / inner;
    const int64_t h = t % q_heads, o = t / q_heads;
    dst[e] = src[(o * kv_heads + h / group) * inner + x];
  }
}

template <class Unit>
void launch_units(const void* src, void* dst, const HeadBlocks& b, int64_t group,
                  cudaStream_t stream) {
  const int64_t inner = b.inner_bytes / static_cast<int64_t>(sizeof(Unit));
  const int64_t total = b.outer * b.heads * group * inner;
  if (total <= 0) return;
  constexpr int kThreads = 256;
  // Enough blocks to fill any current GPU several times over; the loop covers the rest.
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  repeat_kv_kernel<Unit><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const Unit*>(src), static_cast<Unit*>(dst), b.outer, b.heads, group, inner);
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace

void launch_repeat_kv(const void* src, void* dst, const HeadBlocks& b, int64_t group,
                      cudaStream_t stream) {
  // The widest unit that divides a head block (buffers come from cudaMalloc: 256-byte aligned).
  if (b.inner_bytes % 16 == 0) return launch_units<Bytes16>(src, dst, b, group, stream);
  if (b.inner_bytes % 8 == 0) return launch_units<uint2>(src, dst, b, group, stream);
  if (b.inner_bytes % 4 == 0) return launch_units<uint32_t>(src, dst, b, group, stream);
  return launch_units<uint16_t>(src, dst, b, group, stream);  // fp16/bf16, odd length
}

}  // namespace attnprof::cuda
