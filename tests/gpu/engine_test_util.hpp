// Shared by the CUDA engine's self-tests (test_engine*.cpp): a fixture that skips with the
// engine's own reason where there is no GPU, and Runs of known behaviour.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"
#include "measure/cuda/cuda_check.hpp"
#include "measure/cuda/cuda_engine.hpp"
#include "measure/cuda/device_buffer.hpp"
#include "measure/cuda/timing_kernels.hpp"

namespace attnprof::testing {

// The first CUDA device as the engine describes it, or none and why (no driver, no device).
inline std::optional<Device> first_gpu(std::string& why) {
  why = cuda::unavailable_reason(0);
  if (!why.empty()) return std::nullopt;
  return cuda::describe_device(0);
}

class CudaEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = std::make_unique<cuda::CudaEngine>(0);
    if (Availability a = engine_->availability(); !a.available) GTEST_SKIP() << a.reason;
  }
  cuda::CudaEngine& engine() { return *engine_; }
  cudaStream_t stream() const { return engine_->cuda_stream(); }

  // Short measurements for tests: at least 10 samples and 0.1 s of timed work, 2 s at most.
  static MeasureOptions quick(const std::string& mode) {
    MeasureOptions o;
    o.mode = mode;
    o.rule.min_time_s = 0.1;
    o.rule.timeout_s = 2.0;
    return o;
  }

  std::unique_ptr<cuda::CudaEngine> engine_;
};

// A Run that only launches kernels (no outputs).
class KernelRun : public Run {
 public:
  void poison_outputs() override {}
  HostOutputs read_outputs() override { return {}; }
  int64_t allocated_bytes() const override { return 0; }
};

// A kernel of known length: one thread spinning `ns` of %globaltimer on the timed stream and,
// optionally, a longer spin on `side` that the timed stream must not count.
class SpinRun final : public KernelRun {
 public:
  explicit SpinRun(uint64_t ns, cudaStream_t side = nullptr, uint64_t side_ns = 0)
      : ns_(ns), side_(side), side_ns_(side_ns) {}
  void launch(Stream& s) override {
    cuda::launch_spin_ns(ns_, static_cast<cudaStream_t>(s.native));
    if (side_) cuda::launch_spin_ns(side_ns_, side_);
  }

 private:
  uint64_t ns_;
  cudaStream_t side_;
  uint64_t side_ns_;
};

// One thread spinning `cycles` SM clock cycles: lasts cycles / f_SM.
class CyclesRun final : public KernelRun {
 public:
  explicit CyclesRun(uint64_t cycles) : cycles_(cycles) {}
  void launch(Stream& s) override {
    cuda::launch_spin_cycles(cycles_, static_cast<cudaStream_t>(s.native));
  }

 private:
  uint64_t cycles_;
};

// Reads a buffer that fits in L2; offers rotating copies (Run::rotate_inputs) for cold batches.
class ReadRun final : public KernelRun {
 public:
  explicit ReadRun(int64_t bytes) : bytes_(bytes), sink_(sizeof(uint64_t), nullptr) { add_copy(); }
  int rotate_inputs(int copies) override {
    while (static_cast<int>(copies_.size()) > std::max(copies, 1)) copies_.pop_back();
    while (static_cast<int>(copies_.size()) < copies) add_copy();
    most_copies_ = std::max(most_copies_, static_cast<int>(copies_.size()));
    return static_cast<int>(copies_.size());
  }
  void select_copy(int copy) override { selected_ = copy; }
  void launch(Stream& s) override {
    cuda::launch_read(copies_.at(static_cast<size_t>(selected_)).data(), bytes_,
                      sink_.as<uint64_t>(), 0, static_cast<cudaStream_t>(s.native));
  }
  int64_t allocated_bytes() const override { return bytes_; }

  int copies() const { return static_cast<int>(copies_.size()); }
  int most_copies() const { return most_copies_; }
  int selected() const { return selected_; }

 private:
  void add_copy() {
    copies_.emplace_back(bytes_, nullptr);
    ATTNPROF_CUDA(cudaMemset(copies_.back().data(), 0x5A, static_cast<size_t>(bytes_)));
  }
  int64_t bytes_;
  cuda::DeviceBuffer sink_;
  std::vector<cuda::DeviceBuffer> copies_;
  int selected_ = 0;
  int most_copies_ = 1;
};

}  // namespace attnprof::testing
