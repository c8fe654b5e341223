// The trace hooks of the point lifecycle (attnprof/trace.hpp): the phases recorded as ranges on a
// clock the engine chooses, the host's steady clock (CPU engine) or CUPTI's timestamp with a
// device synchronize at each range's end (CUDA engine, src/trace/cuda/), so ranges and kernels
// share one base; sampling replaced by a fixed number of back-to-back launches.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "attnprof/trace.hpp"

namespace attnprof {

struct PhaseClock {
  std::function<uint64_t()> now_ns;  // a timestamp in ns
  std::function<void()> sync;        // waits for the device work queued so far
};

PhaseClock host_phase_clock();

class TraceHooks : public PointHooks {
 public:
  TraceHooks(int launches, PhaseClock clock) : launches_(launches), clock_(std::move(clock)) {}
  void begin(Phase p) override;
  void end(Phase p) override;
  bool measure(Run& run, PointTensors& tensors, Engine& engine, Result& row) override;
  void finish(Result& row) override;

 protected:
  void set_clock(PhaseClock clock) { clock_ = std::move(clock); }
  PointTrace& trace() { return trace_; }

 private:
  int launches_;
  PhaseClock clock_;
  PointTrace trace_;
  TraceEvent open_;  // the phase begun last
};

#if defined(ATTNPROF_WITH_CUDA)
// src/trace/cuda/point_trace_cuda.cpp: the CUDA engine's trace hooks (under CUPTI) and the hooks
// of the one launch Nsight Compute profiles.
std::unique_ptr<PointHooks> make_cuda_trace_hooks(int launches, Engine& engine);
std::unique_ptr<PointHooks> make_profile_hooks(Engine& engine);
#endif

}  // namespace attnprof
