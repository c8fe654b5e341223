// The CUDA engine's tensors of a point (engine.hpp PointTensors): device memory in the spec's
// dtype, allocated through the engine's tracker, the inputs filled on the device from the
// generator (bit-identical to the host's values, cuda/tensor_fill.hpp), the outputs poisoned.
// Copies for cold timing are untracked and copied from copy 0 on the device.
#pragma once

#include <memory>

#include "attnprof/engine.hpp"

namespace attnprof::cuda {

// Throws OutOfMemory (a CudaError of fault oom) when the device cannot hold them.
std::unique_ptr<PointTensors> make_device_tensors(const Spec& spec, bool lse, const InputFill& fill,
                                                  MemoryTracker* tracker);

}  // namespace attnprof::cuda
