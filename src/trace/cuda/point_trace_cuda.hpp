// The CUDA engine's part of trace_point() and run_profiled_launch() (attnprof/trace.hpp).
#pragma once

#include "attnprof/trace.hpp"
#include "trace/cuda/cupti_tracer.hpp"

namespace attnprof::cuda {

// Runs the phases under the CUPTI tracer: ranges on cuptiGetTimestamp (the base the activity
// records use), each ended after a device synchronize; fills t.device_events from the records.
// Where CUPTI is busy (ncu, compute-sanitizer) the phases still run, on the host's steady
// clock, and t.kernels_note says why there are no kernels. `engine` is a CudaEngine.
void trace_point_cuda(ProviderTrace& t, Provider& provider, Engine& engine,
                      const TraceOptions& options);

void run_profiled_launch_cuda(const Spec& spec, Provider& provider, Engine& engine,
                              const TraceOptions& options);

// One CUPTI record as a trace event (categorized; grid and block for kernels).
TraceEvent to_trace_event(const TraceActivity& a);

}  // namespace attnprof::cuda
