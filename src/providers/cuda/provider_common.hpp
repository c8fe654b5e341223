// What the CUDA attention providers (cuda.naive, cuda.naive.expand, cuda.math) share besides
// their kernels: whether a device is usable at all, the checks every one of them applies to a
// spec, and the device tensors of a point (Q, K, V, O).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "attnprof/provider.hpp"
#include "measure/cuda/device_buffer.hpp"

namespace attnprof::cuda {

// Available when the CUDA runtime finds a device; otherwise why not, in the engine's words
// (cuda::unavailable_reason: "no CUDA driver on this machine (...)" where there is no driver).
Availability device_availability();

// The checks the three providers share: a CUDA device of compute capability 8.0 or newer (the
// build has sm_80 and sm_90a code and compute_80 PTX), the forward mode, and a score matrix
// whose size in bytes fits an int64 (`provider` names who says no: the reason stands alone).
Support supports_forward_on(const Spec& spec, const Device& device, const std::string& provider);

// The stream a Run is launched on.
inline cudaStream_t native_stream(const Stream& s) {
  return static_cast<cudaStream_t>(s.native);
}

// Q, K, V and O of one point on the device, allocated through the tracker. The inputs are
// filled from the seed and pattern (include/attnprof/inputs.hpp) on the default stream, which
// is synchronized before the constructor returns: the launch stream may be non-blocking.
class AttentionIo {
 public:
  AttentionIo(const Spec& spec, const PrepareContext& ctx);

  static int64_t bytes_for(const Spec& spec);  // what the constructor allocates
  int64_t bytes() const;

  const void* q() const { return q_.data(); }
  const void* k() const { return k_.data(); }
  const void* v() const { return v_.data(); }
  void* o() const { return o_.data(); }

  // NaN into every element of O; waits for outstanding work first so that a launch still in
  // flight cannot overwrite the poison, and synchronizes after.
  void poison_output();
  // O as float, in the spec's layout (synchronizes the device first).
  HostOutputs read() const;

 private:
  Spec spec_;
  DeviceBuffer q_, k_, v_, o_;
};

}  // namespace attnprof::cuda
