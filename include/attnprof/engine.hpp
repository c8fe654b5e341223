// An engine is how points are executed and measured on one kind of device: its streams, its
// timer (measurement strategy), its kernel tracer and its part of the environment fingerprint.
// The CPU engine lives in src/measure/cpu_engine.cpp; the CUDA engine in src/measure/cuda/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/env.hpp"
#include "attnprof/memory.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/stats.hpp"

namespace attnprof {

struct MeasureOptions {
  // "cold" (default on CUDA: L2 evicted before each sample), "hot", "graph", "wall".
  // The CPU engine always measures host wall time ("cpu-wall").
  std::string mode = "cold";
  StoppingRule rule{};
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual DeviceKind kind() const = 0;
  // Whether the engine can run here; the reason in words when not ("no CUDA driver ...").
  virtual Availability availability() const = 0;
  virtual const Device& device() const = 0;
  virtual Stream& stream() = 0;
  // Untimed warm-up launches are the caller's job; measure() only samples.
  virtual TimingResult measure(Run& run, const MeasureOptions& options) = 0;
  // The kernels one extra, untimed launch runs. Empty with `note` set where unavailable.
  virtual std::vector<KernelRecord> trace_kernels(Run& run, std::string& note) = 0;
  // Engine-specific fingerprint entries (driver, runtime, library versions, ...).
  virtual Fingerprint fingerprint() const = 0;
  // The tracker every prepare() on this engine reports its allocations to.
  virtual MemoryTracker* tracker() = 0;
};

std::unique_ptr<Engine> make_cpu_engine(int threads);
// Null where CUDA is not built; otherwise an engine that may report itself unavailable.
std::unique_ptr<Engine> make_cuda_engine(int device_index);

}  // namespace attnprof
