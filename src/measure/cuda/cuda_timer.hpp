// The CUDA measurement strategies (docs/method.md): cold (default), hot, graph and wall, under a
// clock policy (sustained or recover).
// They produce samples; when to stop is the stopping rule's business (attnprof/stats.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "attnprof/device.hpp"
#include "attnprof/engine.hpp"
#include "cuda/nvml.hpp"
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
  const PowerMeter* power = nullptr;  // may read 0 (no NVML)
  cudaEvent_t spin_done = nullptr, start = nullptr, stop = nullptr;
};

// Samples `run` in options.mode until options.rule says stop:
//  cold  - before each sample evict L2 (read flush_buffer), queue a spin kernel so the host's
//          launch overhead is hidden behind it, time the launches with events on the stream.
//          Launches under ~100 us are timed in batches (launches_per_sample > 1) that rotate
//          through copies of the point's tensors (PointTensors::replicate, Run::bind), so every
//          launch of a batch reads inputs that are not in L2; each batch ends on copy 0.
//  hot   - the same without the flush or rotation: back-to-back launches on the same data.
//  graph - a CUDA graph of the batch's launches, captured once, replayed per sample.
//  wall  - host steady_clock around launch + cudaStreamSynchronize, one launch per sample
//          (framework overhead included; no in-stream clock).
// Clock policy recover: before each sample the stream idles (the host sleeps) for twice the last
// sample's time, at least 2 ms, so a power-capped clock comes back (the point's timeout is
// tripled to pay for the gaps). Board power (NVML) is read after each sample.
// Samples whose SM clock was under 75% of cudaDevAttrClockRate are dropped and counted.
// Throws std::invalid_argument for an unknown mode, CudaError for CUDA failures.
TimingResult measure_on_stream(TimerContext& ctx, Run& run, PointTensors& tensors,
                               const MeasureOptions& options);

}  // namespace attnprof::cuda
