// The trace hooks of the point lifecycle on any engine (phases.hpp); the CUDA engine's part (CUPTI
// around the phases, CUPTI timestamps) is in src/trace/cuda/point_trace_cuda.cpp.
#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

#include "trace/phases.hpp"

namespace attnprof {

namespace {

uint64_t steady_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// The CPU engine's: ranges only, on the host's clock.
class HostTraceHooks final : public TraceHooks {
 public:
  explicit HostTraceHooks(int launches) : TraceHooks(launches, host_phase_clock()) {}
  void finish(Result& row) override {
    TraceHooks::finish(row);
    row.kernels_note = "host only (CPU provider: phases, no kernels)";
  }
};

// --ncu asked of a CPU provider: the point fails with why.
class NotProfilable final : public PointHooks {
 public:
  bool measure(Run&, PointTensors&, Engine&, Result&) override {
    throw std::runtime_error("not a CUDA provider: Nsight Compute profiles CUDA kernels");
  }
};

}  // namespace

PhaseClock host_phase_clock() {
  return {steady_ns, [] {}};
}

void TraceHooks::begin(Phase p) {
  open_ = TraceEvent{};
  open_.name = std::string(to_string(p));
  open_.kind = TraceKind::range;
  open_.start_ns = clock_.now_ns();
}

void TraceHooks::end(Phase) {
  clock_.sync();  // the range ends when the device work it queued has finished
  open_.end_ns = clock_.now_ns();
  trace_.ranges.push_back(open_);
}

bool TraceHooks::measure(Run& run, PointTensors& tensors, Engine& engine, Result&) {
  for (int i = 0; i < launches_; ++i) run.launch(engine.stream(), tensors.io());
  trace_.timed_launches = launches_;
  return true;
}

void TraceHooks::finish(Result& row) {
  row.trace = trace_;
}

HooksFactory trace_hooks_factory() {
  return [](const RunOptions& options, Engine& engine) -> std::unique_ptr<PointHooks> {
    if (options.profile_one_launch) {
#if defined(ATTNPROF_WITH_CUDA)
      if (engine.kind() == DeviceKind::cuda) return make_profile_hooks(engine);
#endif
      return std::make_unique<NotProfilable>();
    }
    if (options.trace_launches <= 0) return nullptr;
#if defined(ATTNPROF_WITH_CUDA)
    if (engine.kind() == DeviceKind::cuda) {
      return make_cuda_trace_hooks(options.trace_launches, engine);
    }
#endif
    (void)engine;
    return std::make_unique<HostTraceHooks>(options.trace_launches);
  };
}

const PointTrace& trace_of(const Result& row) {
  static const PointTrace kNone{};
  return row.trace ? *row.trace : kNone;
}

}  // namespace attnprof
