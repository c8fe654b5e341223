#include "measure/cuda/sm_clock.hpp"

#include "cuda/cuda_check.hpp"
#include "measure/cuda/timing_kernels.hpp"

namespace attnprof::cuda {

SmClock::SmClock(int sm_count) : sm_count_(sm_count) {
  void* p = nullptr;
  ATTNPROF_CUDA(cudaHostAlloc(&p, 4 * sizeof(uint64_t), cudaHostAllocMapped));
  host_ = static_cast<uint64_t*>(p);
  void* d = nullptr;
  ATTNPROF_CUDA(cudaHostGetDevicePointer(&d, p, 0));
  device_ = static_cast<uint64_t*>(d);
  for (int i = 0; i < 4; ++i) host_[i] = 0;
}

SmClock::~SmClock() {
  if (host_) (void)cudaFreeHost(host_);
}

void SmClock::start(cudaStream_t stream) {
  // The previous interval's stamps are stale once a new one starts: zero means "not written".
  // Safe to write from the host: the caller synchronized the stream after the last stop().
  for (int i = 0; i < 4; ++i) reinterpret_cast<volatile uint64_t*>(host_)[i] = 0;
  launch_clock_stamp(device_, sm_count_, stream);
}

void SmClock::stop(cudaStream_t stream) {
  launch_clock_stamp(device_ + 2, sm_count_, stream);
}

double SmClock::mhz() const {
  const volatile uint64_t* h = host_;
  const uint64_t t0 = h[0], c0 = h[1], t1 = h[2], c1 = h[3];
  if (t0 == 0 || t1 == 0 || t1 <= t0 || c1 <= c0) return 0;
  // %globaltimer may tick in microsecond steps: below ~20 us the ratio is too coarse to judge.
  if (t1 - t0 < 20000) return 0;
  return static_cast<double>(c1 - c0) / static_cast<double>(t1 - t0) * 1e3;
}

}  // namespace attnprof::cuda
