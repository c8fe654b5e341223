// The phases of a traced point (prepare, verify, warm-up, timed), each recorded as a range on a
// clock the engine chooses: the host's steady clock (CPU engine) or CUPTI's timestamp with a
// device synchronize at each range's end (CUDA engine), so ranges and kernels share one base.
#pragma once

#include <cstdint>
#include <functional>

#include "attnprof/trace.hpp"

namespace attnprof {

struct PhaseClock {
  std::function<uint64_t()> now_ns;  // a timestamp in ns
  std::function<void()> sync;        // waits for the device work queued so far
};

PhaseClock host_phase_clock();

// Runs prepare, verify, warm-up and timed on `t.spec`, appending one range per phase to
// t.ranges and setting t.status / t.reason / t.timed_launches. Never throws.
void run_phases(ProviderTrace& t, Provider& provider, Engine& engine, const TraceOptions& options,
                const PhaseClock& clock);

}  // namespace attnprof
