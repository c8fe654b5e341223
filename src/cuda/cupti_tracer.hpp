// Which kernels a piece of work runs, read with CUPTI's activity API (CONCURRENT_KERNEL, which
// keeps kernels concurrent, plus MEMCPY and MEMSET records for the Chrome-trace export). Used
// in one extra, untimed launch per point, never during timed samples (docs/tracing.md, "What
// runs, and the clocks"). Where CUPTI is held by another subscriber (ncu, compute-sanitizer) the
// capture is empty with a note, and the point goes on.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnprof/result.hpp"

namespace attnprof::cuda {

// One record as CUPTI delivered it (CUDA 13: only the fields common to every kernel record
// version are read). Times are CUPTI timestamps in nanoseconds.
struct TraceActivity {
  enum class Kind { kernel, memcpy, memset };
  Kind kind = Kind::kernel;
  std::string name;  // kernels: demangled; memcpy: "memcpy DtoD" etc.; memset: "memset"
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t device_id = 0;
  uint32_t stream_id = 0;  // CUPTI's stream id; compare with TraceCapture::stream_id
  uint32_t correlation_id = 0;
  uint64_t bytes = 0;  // memcpy / memset only
  // Kernels only: launch geometry (all zero for memcpy / memset records).
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
};

struct TraceCapture {
  bool available = false;
  std::string note;        // "unavailable (CUPTI busy: ...)" and the like when !available
  uint32_t stream_id = 0;  // CUPTI's id of the stream passed to trace_activities()
  std::vector<TraceActivity> activities;  // in order of start time
};

// Runs `work` with activity collection on and returns what ran on the device meanwhile.
// `work` must enqueue its launches; the tracer synchronizes the device before it reads the
// records. `stream` is the stream the work is meant to run on (its CUPTI id is recorded so a
// caller can check that every kernel ran there). Never throws for CUPTI's own failures;
// exceptions from `work` propagate after collection is switched off.
TraceCapture trace_activities(const std::function<void()>& work, cudaStream_t stream);

// Kernels aggregated by name: count and total device time, in order of first appearance.
std::vector<KernelRecord> aggregate_kernels(const std::vector<TraceActivity>& activities);

// abi::__cxa_demangle, or the name as it was when it is not a mangled C++ name.
std::string demangle(const char* name);

}  // namespace attnprof::cuda
