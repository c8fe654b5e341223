#include "cuda/tensor_audit.hpp"

#include <algorithm>
#include <stdexcept>

#include "attnprof/digest.hpp"
#include "cuda/cuda_check.hpp"

namespace attnprof::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

unsigned blocks_for(int64_t items) {
  return unsigned(std::clamp<int64_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Adds to *out, over the 8-byte words w of p[0, n) (the last one zero-padded), digest_term(word,
// w, salt): a sum, so the order the threads take words in does not matter.
__global__ void digest_kernel(const unsigned char* p, int64_t n, uint64_t salt,
                              unsigned long long* out) {
  const int64_t words = (n + 7) / 8;
  const bool aligned = (reinterpret_cast<uintptr_t>(p) & 7u) == 0;
  uint64_t h = 0;
  for (int64_t w = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += int64_t(gridDim.x) * blockDim.x) {
    uint64_t x = 0;
    if (aligned && (w + 1) * 8 <= n) {
      x = reinterpret_cast<const uint64_t*>(p)[w];
    } else {
      for (int64_t b = w * 8; b < n && b < w * 8 + 8; ++b) x |= uint64_t(p[b]) << (8 * (b - w * 8));
    }
    h += digest_term(x, uint64_t(w), salt);
  }
  for (int o = 16; o > 0; o /= 2) h += __shfl_xor_sync(0xffffffffu, h, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, static_cast<unsigned long long>(h));
}

template <class Bits>
__global__ void poisoned_kernel(const Bits* p, int64_t n, unsigned long long* out) {
  unsigned long long c = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    c += p[i] == Bits(~Bits(0)) ? 1 : 0;
  for (int o = 16; o > 0; o /= 2) c += __shfl_xor_sync(0xffffffffu, c, o);
  if ((threadIdx.x & 31) == 0 && c != 0) atomicAdd(out, c);
}

}  // namespace

void add_digest(const void* data, int64_t bytes, uint64_t salt, unsigned long long* sum,
                cudaStream_t stream) {
  if (data == nullptr || bytes <= 0) return;
  digest_kernel<<<blocks_for((bytes + 7) / 8), kThreads, 0, stream>>>(
      static_cast<const unsigned char*>(data), bytes, salt, sum);
  ATTNPROF_CUDA(cudaGetLastError());
}

int64_t count_poisoned(const void* data, int64_t elems, int elem_bytes, unsigned long long* out,
                       cudaStream_t stream) {
  if (data == nullptr || elems <= 0) return 0;
  ATTNPROF_CUDA(cudaMemsetAsync(out, 0, sizeof(unsigned long long), stream));
  const unsigned blocks = blocks_for(elems);
  switch (elem_bytes) {
    case 1:
      poisoned_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint8_t*>(data), elems,
                                                       out);
      break;
    case 2:
      poisoned_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint16_t*>(data), elems,
                                                       out);
      break;
    case 4:
      poisoned_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint32_t*>(data), elems,
                                                       out);
      break;
    default:
      throw std::invalid_argument("count_poisoned: elements of 1, 2 or 4 bytes");
  }
  ATTNPROF_CUDA(cudaGetLastError());
  unsigned long long n = 0;
  ATTNPROF_CUDA(cudaMemcpyAsync(&n, out, sizeof n, cudaMemcpyDeviceToHost, stream));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  return static_cast<int64_t>(n);
}

}  // namespace attnprof::cuda
