// The CUDA measurement strategies (DESIGN.md, Method): cold (default), hot, graph and wall.
// They produce samples; when to stop is the stopping rule's business (attnprof/stats.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "attnprof/device.hpp"
#include "attnprof/engine.hpp"
#include "measure/cuda/sm_clock.hpp"

namespace attnprof::cuda {

// What a measurement borrows from the engine: its stream, the L2-flush buffer, the clock
// probe and three events. Owned by the engine, reused across points.
struct TimerContext {
  cudaStream_t stream = nullptr;
  Stream* launch_stream = nullptr;  // the same stream as Run::launch() receives it
  const Device* device = nullptr;
  const void* flush_buffer = nullptr;  // >= 2x L2, read (never written) before cold samples
  int64_t flush_bytes = 0;
  uint64_t* sink = nullptr;  // 8 bytes of device memory for the read kernel's sentinel write
  SmClock* clock = nullptr;
  cudaEvent_t spin_done = nullptr, start = nullptr, stop = nullptr;
};

// Samples `run` in options.mode until options.rule says stop:
//  cold  - before each sample evict L2 (read flush_buffer), queue a spin kernel so the host's
//          launch overhead is hidden behind it, time the launches with events on the stream.
//          Launches under ~100 us are timed in batches (launches_per_sample > 1), over the
//          run's rotating input copies when it offers them (Run::rotate_inputs).
//  hot   - the same without the flush or rotation: back-to-back launches on the same data.
//  graph - a CUDA graph of the batch's launches, captured once, replayed per sample.
//  wall  - host steady_clock around launch + cudaStreamSynchronize, one launch per sample
//          (framework overhead included; no in-stream clock).
// Samples whose SM clock was under 75% of cudaDevAttrClockRate are dropped and counted.
// Throws std::invalid_argument for an unknown mode, CudaError for CUDA failures.
TimingResult measure_on_stream(TimerContext& ctx, Run& run, const MeasureOptions& options);

}  // namespace attnprof::cuda
