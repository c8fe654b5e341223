// What the CUDA attention providers (cuda.naive, cuda.naive.expand, cuda.math, and attnprof's own
// kernels) share besides their kernels: whether a device is usable at all, the checks every one
// of them applies to a spec, what the own kernels are told about a point, and finding the bound
// set of tensors a launch names.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "attnprof/provider.hpp"
#include "providers/cuda/attention_args.hpp"
#include "providers/cuda/attention_gemms.hpp"

namespace attnprof::cuda {

// Available when the CUDA runtime finds a device; otherwise why not, in the engine's words
// (cuda::unavailable_reason: "no CUDA driver on this machine (...)" where there is no driver).
Availability device_availability();

// The checks the three providers share: a CUDA device of compute capability 8.0 or newer (the
// build has sm_80 and sm_90a code and compute_80 PTX), the forward mode, and a score matrix
// whose size in bytes fits an int64 (`provider` names who says no: the reason stands alone).
Support supports_forward_on(const Spec& spec, const Device& device, const std::string& provider);

// "64, 128 and 256": the head dims a kernel is built for, in words.
std::string dims_text(std::span<const int64_t> dims);

// The further checks attnprof's own kernels (cuda.decode, cuda.flash, cuda.mla.decode) share:
// fp16 or bf16, and one of the head dims `dims` (ascending) they are built for, with Dv == D
// (`dv` 0) or with Dv == `dv`.
Support supports_own_kernel(const Spec& spec, const Device& device, const std::string& provider,
                            std::span<const int64_t> dims, int64_t dv = 0);

// What attnprof's own kernels (cuda.decode, cuda.flash) are told about a point: the spec's shape,
// mask, scale and softcap, and the bound tensors with their strides, lengths and sinks.
AttentionArgs attention_args(const Spec& spec, const Io& io);

// The stream a Run is launched on.
inline cudaStream_t native_stream(const Stream& s) {
  return static_cast<cudaStream_t>(s.native);
}

// Binds `gemms` to the operands of every set (`operands` makes them from a set's tensors) and
// returns each set's Q, in order, for bound_index().
std::vector<const void*> bind_gemms(AttentionGemms& gemms, std::span<const Io> sets,
                                    const std::function<GemmOperands(const Io&)>& operands);

// The index of the bound set a launch names (Run::bind, Run::launch): the set whose Q is at the
// same address. Throws std::logic_error for a set that was never bound.
std::size_t bound_index(const std::vector<const void*>& bound_q, const Io& io);

}  // namespace attnprof::cuda
