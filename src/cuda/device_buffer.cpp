#include "cuda/device_buffer.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <atomic>
#include <utility>

#include "cuda/cuda_check.hpp"

namespace attnprof::cuda {

namespace {
std::atomic<MemoryReclaimer> reclaimer{nullptr};
}  // namespace

void set_memory_reclaimer(MemoryReclaimer reclaim) {
  reclaimer.store(reclaim);
}

DeviceBuffer::DeviceBuffer(int64_t bytes, MemoryTracker* tracker, int64_t guard)
    : tracker_(tracker) {
  if (bytes < 0 || guard < 0)
    throw std::invalid_argument(fmt::format("DeviceBuffer: negative size {} + {}", bytes, guard));
  if (bytes == 0) return;  // an empty buffer holds no memory and reports none
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, static_cast<size_t>(bytes + guard));
  if (e == cudaErrorMemoryAllocation) {
    const MemoryReclaimer reclaim = reclaimer.load();
    if (reclaim != nullptr && reclaim()) {
      (void)cudaGetLastError();  // the failed allocation's error is not sticky: cleared
      e = cudaMalloc(&p, static_cast<size_t>(bytes + guard));
    }
  }
  if (e != cudaSuccess) {
    check_cuda(e,
               fmt::format("cudaMalloc({} bytes = {:.3f} GiB)", bytes,
                           static_cast<double>(bytes) / double(int64_t{1} << 30))
                   .c_str(),
               __FILE__, __LINE__);
  }
  ptr_ = p;
  bytes_ = bytes;
  if (tracker_) tracker_->on_alloc(bytes_);
}

DeviceBuffer::~DeviceBuffer() {
  release();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      tracker_(std::exchange(other.tracker_, nullptr)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    tracker_ = std::exchange(other.tracker_, nullptr);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (!ptr_) return;
  // cudaFree synchronizes the device; an error here (a sticky one from an earlier kernel) can
  // only be reported by the call that caused it, so it is ignored.
  (void)cudaFree(ptr_);
  if (tracker_) tracker_->on_free(bytes_);
  ptr_ = nullptr;
  bytes_ = 0;
}

}  // namespace attnprof::cuda
