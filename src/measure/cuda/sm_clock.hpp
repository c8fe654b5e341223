// The SM clock measured in-stream, after NVBench's gpu_frequency: a stamp kernel before and
// after the timed region records %globaltimer and SM 0's clock64(); cycles over nanoseconds is
// the mean SM frequency over the region. Samples taken while the GPU throttled are found this
// way (docs/method.md, "Clocks"), without NVML and without leaving the stream.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace attnprof::cuda {

class SmClock {
 public:
  // Allocates 4 words of host-mapped pinned memory the stamp kernels write into.
  explicit SmClock(int sm_count);
  ~SmClock();
  SmClock(const SmClock&) = delete;
  SmClock& operator=(const SmClock&) = delete;

  void start(cudaStream_t stream);
  void stop(cudaStream_t stream);
  // After the stream has synchronized: the mean SM clock in MHz between start() and stop(), or
  // 0 when it could not be measured (no stamp block ran on SM 0, or too short an interval).
  double mhz() const;

 private:
  int sm_count_;
  uint64_t* host_ = nullptr;    // [start ns, start cycles, stop ns, stop cycles]
  uint64_t* device_ = nullptr;  // the same memory as the device addresses it
};

}  // namespace attnprof::cuda
