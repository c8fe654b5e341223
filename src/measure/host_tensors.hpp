// The CPU engine's tensors of a point (engine.hpp PointTensors): host memory, fp32 storage (every
// fp16 and bf16 input value is exact in fp32, so CPU providers compute on what the reference
// sees), inputs filled from the generator on `threads` OpenMP threads, every byte reported to the
// engine's tracker.
#pragma once

#include <memory>

#include "attnprof/engine.hpp"

namespace attnprof {

// Throws OutOfMemory when the host cannot hold them.
std::unique_ptr<PointTensors> make_host_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                int threads, MemoryTracker* tracker);

}  // namespace attnprof
