#include "trace/cuda/point_trace_cuda.hpp"

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <stdexcept>

#include "measure/cuda/cuda_check.hpp"
#include "measure/cuda/cuda_engine.hpp"
#include "trace/phases.hpp"

namespace attnprof::cuda {

namespace {

CudaEngine& as_cuda(Engine& engine) {
  auto* e = dynamic_cast<CudaEngine*>(&engine);
  if (!e) throw std::logic_error("trace_point_cuda needs the CUDA engine");
  return *e;
}

uint64_t cupti_now_ns() {
  uint64_t ts = 0;
  if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS) return 0;
  return ts;
}

}  // namespace

TraceEvent to_trace_event(const TraceActivity& a) {
  TraceEvent e;
  e.name = a.name;
  e.stream = a.stream_id;
  e.start_ns = a.start_ns;
  e.end_ns = a.end_ns;
  e.bytes = a.bytes;
  switch (a.kind) {
    case TraceActivity::Kind::kernel:
      e.kind = TraceKind::kernel;
      e.category = categorize(a.name);
      if (a.grid[0] > 0) {
        e.grid = Dim3{a.grid[0], a.grid[1], a.grid[2]};
        e.block = Dim3{a.block[0], a.block[1], a.block[2]};
      }
      break;
    case TraceActivity::Kind::memcpy:
      e.kind = TraceKind::memcpy;
      e.category = KernelCategory::elementwise_copy;
      break;
    case TraceActivity::Kind::memset:
      e.kind = TraceKind::memset;
      e.category = KernelCategory::elementwise_copy;
      break;
  }
  return e;
}

void trace_point_cuda(ProviderTrace& t, Provider& provider, Engine& engine,
                      const TraceOptions& options) {
  CudaEngine& cuda = as_cuda(engine);
  ATTNPROF_CUDA(cudaSetDevice(cuda.device().index));
  ATTNPROF_CUDA(cudaStreamSynchronize(cuda.cuda_stream()));
  // The range clock is chosen once CUPTI answered: its timestamps when it traces, the host's
  // steady clock when it is busy (then there are no records to line up with).
  bool use_cupti_clock = true;
  const PhaseClock clock{
      [&] { return use_cupti_clock ? cupti_now_ns() : host_phase_clock().now_ns(); },
      [] { ATTNPROF_CUDA(cudaDeviceSynchronize()); }};
  bool ran = false;
  const TraceCapture cap = trace_activities(
      [&] {
        ran = true;
        run_phases(t, provider, engine, options, clock);
      },
      cuda.cuda_stream());
  t.timed_stream = cap.stream_id;
  if (!cap.available) {
    t.kernels_note = cap.note;
    if (!ran) {  // CUPTI refused before the work ran: the phases still run, kernels unknown
      use_cupti_clock = false;
      run_phases(t, provider, engine, options, clock);
    }
    return;
  }
  t.device_events.reserve(cap.activities.size());
  for (const TraceActivity& a : cap.activities) t.device_events.push_back(to_trace_event(a));
}

void run_profiled_launch_cuda(const Spec& spec, Provider& provider, Engine& engine,
                              const TraceOptions& options) {
  CudaEngine& cuda = as_cuda(engine);
  ATTNPROF_CUDA(cudaSetDevice(cuda.device().index));
  PrepareContext ctx;
  ctx.seed = options.seed;
  ctx.tracker = engine.tracker();
  std::unique_ptr<Run> run = provider.prepare(spec, engine.device(), ctx);
  for (int i = 0; i < options.warmup_launches + 1; ++i) run->launch(engine.stream());
  ATTNPROF_CUDA(cudaDeviceSynchronize());
  ATTNPROF_CUDA(cudaProfilerStart());
  run->launch(engine.stream());
  ATTNPROF_CUDA(cudaDeviceSynchronize());
  ATTNPROF_CUDA(cudaProfilerStop());
}

}  // namespace attnprof::cuda
