// Shared by the CUDA engine's self-tests (test_engine*.cpp): a fixture that skips with the
// engine's own reason where there is no GPU, and Runs of known behaviour.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "measure/cuda/cuda_engine.hpp"
#include "measure/cuda/timing_kernels.hpp"

namespace attnprof::testing {

// The first CUDA device as the engine describes it, or none and why (no driver, no device).
inline std::optional<Device> first_gpu(std::string& why) {
  why = cuda::unavailable_reason(0);
  if (!why.empty()) return std::nullopt;
  return cuda::describe_device(0);
}

// One engine on device 0 for the whole test program, for the tests that need no fixture; they
// begin with REQUIRE_ENGINE(), which skips with the engine's own reason where there is no GPU.
inline cuda::CudaEngine& process_engine() {
  static cuda::CudaEngine e(0);
  return e;
}
#define REQUIRE_ENGINE()                                                                   \
  if (Availability a = ::attnprof::testing::process_engine().availability(); !a.available) \
  GTEST_SKIP() << a.reason

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
    o.mode = *parse_timing_mode(mode);
    o.rule.min_time_s = 0.1;
    o.rule.timeout_s = 2.0;
    return o;
  }

  std::unique_ptr<cuda::CudaEngine> engine_;
  NoTensors none_;  // for runs that hold their own operands
};

// A Run that only launches kernels (no outputs).
class KernelRun : public Run {};

// A kernel of known length: one thread spinning `ns` of %globaltimer on the timed stream and,
// optionally, a longer spin on `side` that the timed stream must not count.
class SpinRun final : public KernelRun {
 public:
  explicit SpinRun(uint64_t ns, cudaStream_t side = nullptr, uint64_t side_ns = 0)
      : ns_(ns), side_(side), side_ns_(side_ns) {}
  void launch(Stream& s, const Io&) override {
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
  void launch(Stream& s, const Io&) override {
    cuda::launch_spin_cycles(cycles_, static_cast<cudaStream_t>(s.native));
  }

 private:
  uint64_t cycles_;
};

// Reads every input of the point's tensors (the harness's, so cold batches rotate through
// their copies with no code here), writes its outputs (zeros: every timed sample must write
// them), and records which sets it was bound to and launched on.
class ReadRun final : public KernelRun {
 public:
  ReadRun() : sink_(sizeof(uint64_t), nullptr) {}
  void bind(std::span<const Io> sets) override {
    bound_ = static_cast<int>(sets.size());
    most_bound_ = std::max(most_bound_, bound_);
  }
  void launch(Stream& s, const Io& io) override {
    const auto st = static_cast<cudaStream_t>(s.native);
    for (const TensorView* t : {&io.q, &io.k, &io.v}) {
      cuda::launch_read(t->data, t->bytes(), sink_.as<uint64_t>(), 0, st);
    }
    for (const TensorView* t : {&io.o, &io.lse}) {
      if (t->present()) ATTNPROF_CUDA(cudaMemsetAsync(t->data, 0, size_t(t->bytes()), st));
    }
    seen_.insert(io.q.data);
    last_q_ = io.q.data;
  }

  int bound() const { return bound_; }
  int most_bound() const { return most_bound_; }
  std::size_t distinct_sets_launched() const { return seen_.size(); }
  const void* last_q() const { return last_q_; }

 private:
  cuda::DeviceBuffer sink_;
  int bound_ = 0, most_bound_ = 0;
  std::set<const void*> seen_;
  const void* last_q_ = nullptr;
};

}  // namespace attnprof::testing
