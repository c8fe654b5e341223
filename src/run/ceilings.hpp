// The ceilings a point's row is held against (% of peak, the bound): from the cache, or measured
// once per process where the run options allow it.
#pragma once

#include <optional>

#include "attnprof/engine.hpp"
#include "attnprof/peaks.hpp"
#include "attnprof/runner.hpp"

namespace attnprof {

// The engine's cached ceilings; without them, and where `policy` allows it for this engine's
// kind, measured now (one line on stderr before, a few seconds) and cached for the next process.
// nullopt when there are none; a measurement that fails is said once and not tried again in this
// process.
std::optional<Peaks> ceilings(Engine& engine, AutoPeaks policy);

}  // namespace attnprof
