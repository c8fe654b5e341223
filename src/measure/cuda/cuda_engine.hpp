// The CUDA engine: one device, one non-default stream everything is launched and timed on, the
// points' tensors (device_tensors.hpp), the L2-flush buffer, the in-stream clock probe, the
// board-power meter, the memory tracker and the CUPTI tracer.
// make_cuda_engine() (attnprof/engine.hpp) returns one; code that needs more than the Engine
// interface (the raw trace, the cudaStream_t) casts to this class.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>

#include "attnprof/engine.hpp"
#include "cuda/cupti_tracer.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/nvml.hpp"
#include "measure/cuda/cuda_timer.hpp"
#include "measure/cuda/sm_clock.hpp"

namespace attnprof::cuda {

// CUDA device `index` described (name, memory, SMs, compute capability, L2, rated clock), as the
// engine and the tests that need a Device without an engine see it. Throws CudaError.
Device describe_device(int index);

class CudaEngine final : public Engine {
 public:
  // Never throws: a machine without a driver or device gives an engine that says why in
  // availability() and throws from measure()/trace_kernels().
  explicit CudaEngine(int device_index);
  ~CudaEngine() override;
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;

  DeviceKind kind() const override { return DeviceKind::cuda; }
  Availability availability() const override { return availability_; }
  const Device& device() const override { return device_; }
  Stream& stream() override { return stream_handle_; }
  MemoryTracker* tracker() override { return &tracker_; }
  std::unique_ptr<PointTensors> allocate(const Spec& spec, bool lse,
                                         const InputFill& fill) override;
  TimingResult measure(Run& run, PointTensors& tensors, const MeasureOptions& options) override;
  RowChecks check_outputs(const Spec& spec, PointTensors& tensors, const InputFill& fill,
                          const VerifyOptions& options, bool cross_check) override;
  RowChecks check_sample(const Spec& spec, PointTensors& tensors, const InputFill& fill) override;
  KernelTrace trace_kernels(Run& run, PointTensors& tensors, bool own_streams) override;
  std::string poisoned() override;
  Fingerprint fingerprint() const override { return fingerprint_; }
  std::string peaks_key() const override;
  Peaks measure_peaks(const std::function<void(const std::string&)>& progress) override;

  cudaStream_t cuda_stream() const { return stream_; }

 private:
  void init();
  void require_available() const;

  Availability availability_;
  Device device_;
  Fingerprint fingerprint_;
  MemoryTracker tracker_;
  cudaStream_t stream_ = nullptr;
  Stream stream_handle_;
  DeviceBuffer flush_;  // 2x L2 + 1 MiB, untracked: the engine's instrument, not a point's
  DeviceBuffer sink_;
  std::unique_ptr<SmClock> clock_;
  std::unique_ptr<PowerMeter> power_;
  cudaEvent_t events_[3] = {nullptr, nullptr, nullptr};
  TimerContext timer_;
};

}  // namespace attnprof::cuda
