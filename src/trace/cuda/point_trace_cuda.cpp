// The CUDA engine's trace hooks (trace/phases.hpp): the phases under the CUPTI tracer, ranges on
// cuptiGetTimestamp (the base the activity records use), each ended after a device synchronize;
// the row's device events from the records and its kernels from the timed range. Where CUPTI is
// busy (ncu, compute-sanitizer) the phases still run, on the host's steady clock, and the row's
// kernels_note says why there are no kernels. And the hooks of the one launch ncu profiles.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <stdexcept>

#include "cuda/cuda_check.hpp"
#include "cuda/cupti_tracer.hpp"
#include "trace/phases.hpp"

namespace attnprof {

namespace {

uint64_t cupti_now_ns() {
  uint64_t ts = 0;
  if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS) return 0;
  return ts;
}

cudaStream_t native(Engine& engine) {
  return static_cast<cudaStream_t>(engine.stream().native);
}

// One CUPTI record as a trace event (categorized; grid and block for kernels).
TraceEvent to_trace_event(const cuda::TraceActivity& a) {
  TraceEvent e;
  e.name = a.name;
  e.stream = a.stream_id;
  e.start_ns = a.start_ns;
  e.end_ns = a.end_ns;
  e.bytes = a.bytes;
  switch (a.kind) {
    case cuda::TraceActivity::Kind::kernel:
      e.kind = TraceKind::kernel;
      e.category = categorize(a.name);
      if (a.grid[0] > 0) {
        e.grid = Dim3{a.grid[0], a.grid[1], a.grid[2]};
        e.block = Dim3{a.block[0], a.block[1], a.block[2]};
      }
      break;
    case cuda::TraceActivity::Kind::memcpy:
      e.kind = TraceKind::memcpy;
      e.category = KernelCategory::elementwise_copy;
      break;
    case cuda::TraceActivity::Kind::memset:
      e.kind = TraceKind::memset;
      e.category = KernelCategory::elementwise_copy;
      break;
  }
  return e;
}

class CudaTraceHooks final : public TraceHooks {
 public:
  CudaTraceHooks(int launches, Engine& engine)
      : TraceHooks(launches, {cupti_now_ns, [] { ATTNPROF_CUDA(cudaDeviceSynchronize()); }}),
        engine_(engine) {}

  void around(const std::function<void()>& body) override {
    ATTNPROF_CUDA(cudaSetDevice(engine_.device().index));
    ATTNPROF_CUDA(cudaStreamSynchronize(native(engine_)));
    bool ran = false;
    capture_ = cuda::trace_activities(
        [&] {
          ran = true;
          body();
        },
        native(engine_));
    if (!capture_.available && !ran) {
      // CUPTI refused before the work ran: the phases still run, on the host's clock.
      set_clock({host_phase_clock().now_ns, [] { ATTNPROF_CUDA(cudaDeviceSynchronize()); }});
      body();
    }
  }

  void finish(Result& row) override {
    PointTrace& t = trace();
    t.timed_stream = capture_.stream_id;
    if (!capture_.available) {
      row.kernels_note = capture_.note;
    } else {
      t.device_events.reserve(capture_.activities.size());
      for (const cuda::TraceActivity& a : capture_.activities) {
        t.device_events.push_back(to_trace_event(a));
      }
    }
    TraceHooks::finish(row);
    // The row's kernels: those of the timed range, aggregated by name.
    row.kernels.clear();
    for (const TraceEvent& e : events_in_phase(row, kPhaseTimed)) {
      if (e.kind != TraceKind::kernel) continue;
      auto it = std::find_if(row.kernels.begin(), row.kernels.end(),
                             [&](const KernelRecord& k) { return k.name == e.name; });
      if (it == row.kernels.end()) it = row.kernels.insert(row.kernels.end(), {e.name, 0, 0});
      it->count += 1;
      it->total_us += e.duration_us();
    }
  }

 private:
  Engine& engine_;
  cuda::TraceCapture capture_;
};

class ProfileHooks final : public PointHooks {
 public:
  bool measure(Run& run, PointTensors& tensors, Engine& engine, Result&) override {
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    ATTNPROF_CUDA(cudaProfilerStart());
    run.launch(engine.stream(), tensors.io());
    ATTNPROF_CUDA(cudaDeviceSynchronize());
    ATTNPROF_CUDA(cudaProfilerStop());
    return true;
  }
};

}  // namespace

std::unique_ptr<PointHooks> make_cuda_trace_hooks(int launches, Engine& engine) {
  return std::make_unique<CudaTraceHooks>(launches, engine);
}

std::unique_ptr<PointHooks> make_profile_hooks(Engine&) {
  return std::make_unique<ProfileHooks>();
}

}  // namespace attnprof
