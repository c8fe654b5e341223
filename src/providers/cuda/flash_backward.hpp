// What cuda.flash and cuda.flash.sm90 share of a backward run (flash_bwd_kernel.cuh): the
// deterministic option's switch, what the backward refuses, its workspace (dQ's fp32 accumulator
// unless deterministic, and D), and the kernels' arguments from a point's tensors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "attnprof/provider.hpp"
#include "cuda/device_buffer.hpp"
#include "providers/cuda/flash_bwd_kernel.cuh"

namespace attnprof::cuda {

// The provider's setting deterministic=1 (cuda.flash's and cuda.flash.sm90's each, declared.cpp):
// dQ summed in key order by a kernel of its own.
bool flash_deterministic(const Settings& settings);

// The backward's own refusals (a head dim outside `head_dims`, the list its kernel is built for;
// a softcap, sinks or a ragged batch); yes in mode fwd.
Support flash_backward_supports(const Spec& spec, const std::string& provider,
                                std::span<const int64_t> head_dims);

// Bytes of the backward's workspace for `spec` (0 in mode fwd).
int64_t flash_backward_workspace_bytes(const Spec& spec, const Settings& settings);

// A point's backward: its workspace (allocated here, counted by the tracker) and arguments.
class FlashBackward {
 public:
  FlashBackward(const Spec& spec, const PrepareContext& ctx);
  FlashBwdArgs args(const Io& io) const;
  int64_t workspace_bytes() const { return workspace_.bytes(); }
  // The row's note: `forward` (the forward kernel's) in mode fwd; else the backward's (its CTAs
  // of kFlashBwdKeys keys, `how` they work, steps of `step_queries`, `smem_bytes` each, dQ's
  // form), after `forward` in mode fwd_bwd.
  std::string note(const std::string& forward, std::string_view how, int step_queries,
                   int smem_bytes) const;

 private:
  Spec spec_;
  bool deterministic_;
  DeviceBuffer workspace_;
};

}  // namespace attnprof::cuda
