// Paged K/V to contiguous (gather_pages.cuh). Checked end to end: cuda.naive on paged specs is
// verified against the fp64 reference of the contiguous tensor's values.
#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/gather_pages.cuh"

namespace attnprof::cuda {

namespace {

struct alignas(16) Bytes16 {
  uint4 v;
};

// Where rows go and come from, in Units: row (b, h, pos) of `units` Units.
struct Rows {
  int64_t batch, heads, len, units;
  PageMap pages;
};

// One thread per Unit of the destination (grid-stride), 64-bit indices.
template <class Unit>
__global__ void gather_kernel(const Unit* __restrict__ src, Unit* __restrict__ dst, Rows r) {
  const int64_t total = r.batch * r.heads * r.len * r.units;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t x = e % r.units, row = e / r.units;
    // The destination's row order: bhsd (b, h, pos), bshd (b, pos, h).
    const bool bshd = r.pages.bshd;
    const int64_t h = bshd ? row % r.heads : (row / r.len) % r.heads;
    const int64_t pos = bshd ? (row / r.heads) % r.len : row % r.len;
    dst[e] = src[r.pages.row(row / (r.heads * r.len), h, pos) * r.units + x];
  }
}

template <class Unit>
void launch_units(const TensorView& t, void* dst, cudaStream_t stream) {
  const int64_t row_bytes = t.dim * static_cast<int64_t>(dtype_bytes(t.storage));
  const Rows r{t.batch, t.heads, t.len, row_bytes / static_cast<int64_t>(sizeof(Unit)),
               t.page_map()};
  const int64_t total = r.batch * r.heads * r.len * r.units;
  if (total <= 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  gather_kernel<Unit><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const Unit*>(t.data), static_cast<Unit*>(dst), r);
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace

void launch_gather_pages(const TensorView& src, void* dst, cudaStream_t stream) {
  // The widest unit that divides a row (buffers come from cudaMalloc: 256-byte aligned, and
  // every row starts at a multiple of the row's bytes).
  const int64_t row_bytes = src.dim * static_cast<int64_t>(dtype_bytes(src.storage));
  if (row_bytes % 16 == 0) return launch_units<Bytes16>(src, dst, stream);
  if (row_bytes % 8 == 0) return launch_units<uint2>(src, dst, stream);
  if (row_bytes % 4 == 0) return launch_units<uint32_t>(src, dst, stream);
  return launch_units<uint16_t>(src, dst, stream);
}

}  // namespace attnprof::cuda
