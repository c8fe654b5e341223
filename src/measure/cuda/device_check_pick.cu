// The verdict's rows of a forward check, found on the device (device_check_pick.hpp): one
// grid-stride pass keeps, per thread, the best (value, row) of each kind; warps and blocks reduce
// them; the host reduces the blocks' (at most kBlocks) picks.
#include "measure/cuda/device_check_pick.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "measure/cuda/check_common.cuh"

namespace attnprof::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;
constexpr int64_t kNoRow = std::numeric_limits<int64_t>::max();

struct Pick {
  double value;
  int64_t row;
};
// What any row beats (values are >= 0).
__host__ __device__ constexpr Pick none() {
  return {-1.0, kNoRow};
}

// Whether `a` beats `b`: larger, or as large and on a lower row.
__host__ __device__ bool beats(const Pick& a, const Pick& b) {
  return a.value > b.value || (a.value == b.value && a.row < b.row);
}

__device__ Pick warp_best(Pick p) {
  for (int o = 16; o > 0; o /= 2) {
    Pick other = p;
    other.value = __shfl_xor_sync(0xffffffffu, p.value, o);
    other.row = __shfl_xor_sync(0xffffffffu, p.row, o);
    if (beats(other, p)) p = other;
  }
  return p;
}

// verify.cpp's rel_error for an O row (no tensor floor): the relative L2 error against the larger
// of the row's norm and its own floor, the absolute one where both are 0, inf for a NaN. Written
// with the host's comparisons (std::max) so that a NaN takes the same branch.
__device__ double rel_error(double err2, double ref2, double floor) {
  const double f = 0.0 < floor ? floor : 0.0;
  const double denom2 = ref2 < f * f ? f * f : ref2;
  const double e = denom2 > 0 ? sqrt(err2 / denom2) : sqrt(err2);
  return nan_as_inf(e);
}

// picks[3 * block + k]: the block's best of kind k (worst O, largest max_abs, worst LSE).
__global__ void pick_kernel(ForwardSums s, int64_t rows, Pick* picks) {
  Pick best[3] = {none(), none(), none()};
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    Pick p[3] = {none(), none(), none()};
    if (s.err2) {
      p[0] = {rel_error(s.err2[r], s.ref2[r], s.floor ? s.floor[r] : 0.0), r};
      p[1] = {s.max_abs[r], r};
    }
    if (s.lse_err) p[2] = {nan_as_inf(s.lse_err[r]), r};
    for (int k = 0; k < 3; ++k) {
      if (beats(p[k], best[k])) best[k] = p[k];
    }
  }
  __shared__ Pick warps[3][kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int k = 0; k < 3; ++k) {
    const Pick w = warp_best(best[k]);
    if (lane == 0) warps[k][warp] = w;
  }
  __syncthreads();
  if (warp != 0) return;
  for (int k = 0; k < 3; ++k) {
    const Pick w = warp_best(lane < kThreads / 32 ? warps[k][lane] : none());
    if (lane == 0) picks[3 * blockIdx.x + k] = w;
  }
}

__global__ void gather_kernel(const double* src, const int64_t* rows, double* out, int64_t n) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) out[t] = src[rows[t]];
}

}  // namespace

ForwardPicks pick_forward_rows(const ForwardSums& sums, int64_t rows, cudaStream_t stream) {
  ForwardPicks out;
  if (rows <= 0 || (!sums.err2 && !sums.lse_err)) return out;
  const int blocks = int(std::clamp<int64_t>((rows + kThreads - 1) / kThreads, 1, kBlocks));
  DeviceBuffer buf(int64_t(3 * blocks * sizeof(Pick)), nullptr);
  pick_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(sums, rows, buf.as<Pick>());
  ATTNPROF_CUDA(cudaGetLastError());
  std::vector<Pick> picks(size_t(3 * blocks));
  ATTNPROF_CUDA(cudaMemcpyAsync(picks.data(), buf.data(), picks.size() * sizeof(Pick),
                                cudaMemcpyDeviceToHost, stream));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  Pick best[3] = {none(), none(), none()};
  for (int b = 0; b < blocks; ++b) {
    for (int k = 0; k < 3; ++k) {
      if (beats(picks[size_t(3 * b + k)], best[k])) best[k] = picks[size_t(3 * b + k)];
    }
  }
  auto row_of = [](const Pick& p) { return p.row == kNoRow ? int64_t{-1} : p.row; };
  if (sums.err2) {
    out.worst_o = row_of(best[0]);
    out.largest_abs = row_of(best[1]);
  }
  if (sums.lse_err) out.worst_lse = row_of(best[2]);
  return out;
}

std::vector<std::vector<double>> gather_rows(const std::vector<const double*>& srcs,
                                             const std::vector<int64_t>& rows,
                                             cudaStream_t stream) {
  const int64_t n = int64_t(rows.size()), k = int64_t(srcs.size());
  std::vector<std::vector<double>> out(srcs.size(), std::vector<double>(rows.size()));
  if (n == 0 || k == 0) return out;
  DeviceBuffer buf(n * int64_t(sizeof(int64_t)) + k * n * int64_t(sizeof(double)), nullptr);
  auto* idx = buf.as<int64_t>();
  auto* vals = reinterpret_cast<double*>(idx + n);
  ATTNPROF_CUDA(cudaMemcpyAsync(idx, rows.data(), size_t(n) * sizeof(int64_t),
                                cudaMemcpyHostToDevice, stream));
  for (int64_t s = 0; s < k; ++s) {
    gather_kernel<<<unsigned((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        srcs[size_t(s)], idx, vals + s * n, n);
    ATTNPROF_CUDA(cudaGetLastError());
  }
  std::vector<double> all(size_t(k * n));
  ATTNPROF_CUDA(cudaMemcpyAsync(all.data(), vals, all.size() * sizeof(double),
                                cudaMemcpyDeviceToHost, stream));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  for (int64_t s = 0; s < k; ++s) std::copy_n(all.begin() + s * n, n, out[size_t(s)].begin());
  return out;
}

}  // namespace attnprof::cuda
