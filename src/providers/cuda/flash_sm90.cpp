// cuda.flash.sm90: attnprof's own fused prefill kernel for Hopper (flash_sm90_kernel.cu): wgmma
// from 128-byte-swizzled shared memory, K and V tiles brought by the tensor memory accelerator
// (a producer warpgroup, mbarriers), two consumer warpgroups taking turns at the tensor cores, one
// persistent CTA per SM. GQA and MQA read each KV head in place; every mask, Nq != Nk, ragged
// batches, the logit softcap and sinks; O and the LSE written. Its backward (modes bwd and
// fwd_bwd, head dims 64 and 128) is cuda.flash's three steps with the key blocks on wgmma
// (flash_sm90_bwd_kernel.cu), its deterministic option included.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "attnprof/provider_settings.hpp"
#include "cuda/cuda_check.hpp"
#include "providers/cuda/flash_backward.hpp"
#include "providers/cuda/flash_sm90_bwd_kernel.cuh"
#include "providers/cuda/flash_sm90_kernel.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

// --set cuda.flash.sm90.schedule=nopingpong: the consumer warpgroups do not take turns (for
// comparing the two schedules on a device).
bool pingpong_for(const Settings& settings) {
  return setting_of(settings, "schedule") != "nopingpong";
}

// The kernel's work items: blocks of query rows x query heads x sequences.
int64_t work_items(const Spec& s) {
  return (s.q_len + cuda::kFlashSm90Rows - 1) / cuda::kFlashSm90Rows * s.q_heads * s.batch;
}

// The order of the work items: heads major (a head's blocks together, the CTAs running at once
// sharing K and V in L2) where every block of a head costs the same; blocks major (every head's
// longest block first) under a causal mask, whose blocks' costs grow with their rows. Measured
// both ways on fa-bench (bench/results/h200/2026-12-02-flash-sm90, call 5): heads major
// 1.02-1.26x blocks major without a mask; under a causal mask 0.73-1.08x (geomean 0.94).
// --set cuda.flash.sm90.order=heads|blocks forces one, for comparing on a device.
bool heads_major_for(const Spec& spec, const Settings& settings) {
  const std::string order = setting_of(settings, "order");
  if (order == "heads") return true;
  if (order == "blocks") return false;
  return spec.mask.kind != MaskKind::causal_tl && spec.mask.kind != MaskKind::causal_br;
}

class FlashSm90Run final : public Run {
 public:
  // Mode bwd: the forward runs here, untimed, so that the point's O and LSE are this kernel's.
  FlashSm90Run(const Spec& spec, int sms, const PrepareContext& ctx, const Io& io)
      : spec_(spec),
        ctas_(int(std::min<int64_t>(work_items(spec), sms))),
        pingpong_(pingpong_for(ctx.settings)),
        heads_major_(heads_major_for(spec, ctx.settings)),
        backward_(spec, ctx) {
    if (spec.mode == Mode::bwd) {
      forward(io, nullptr);
      ATTNPROF_CUDA(cudaStreamSynchronize(nullptr));
    }
  }

  void launch(Stream& stream, const Io& io) override {
    const cudaStream_t s = cuda::native_stream(stream);
    if (spec_.mode != Mode::bwd) forward(io, s);
    if (spec_.mode != Mode::fwd)
      cuda::launch_flash_bwd(backward_.args(io), s, cuda::launch_flash_sm90_bwd_key_blocks);
  }

  int64_t workspace_bytes() const override { return backward_.workspace_bytes(); }

  std::string note() const override {
    return backward_.note(forward_note(), " (2 warpgroups of 64, wgmma)",
                          cuda::flash_sm90_bwd_step_queries(int(spec_.head_dim)),
                          cuda::flash_sm90_bwd_smem_bytes(int(spec_.head_dim)));
  }

 private:
  void forward(const Io& io, cudaStream_t s) const {
    cuda::FlashSm90Args a;
    static_cast<cuda::AttentionArgs&>(a) = cuda::attention_args(spec_, io);
    a.pingpong = pingpong_;
    a.heads_major = heads_major_;
    a.ctas = ctas_;
    cuda::launch_flash_sm90(a, s);
  }

  std::string forward_note() const {
    return fmt::format(
        "persistent: {} CTAs over {} blocks of {} query rows, {} major (2 consumer "
        "warpgroups{}, a TMA producer warpgroup), {} stages of {}-key K and V tiles, {} B of "
        "shared memory each",
        ctas_, work_items(spec_), cuda::kFlashSm90Rows, heads_major_ ? "heads" : "blocks",
        pingpong_ ? " taking turns" : "", cuda::kFlashSm90Stages,
        cuda::flash_sm90_key_tile(int(spec_.head_dim)),
        cuda::flash_sm90_smem_bytes(int(spec_.head_dim)));
  }

  Spec spec_;
  int ctas_;  // one per SM, or fewer where there are fewer work items
  bool pingpong_;
  bool heads_major_;
  cuda::FlashBackward backward_;
};

class FlashSm90Provider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_flash_sm90_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    Spec forward = spec;
    forward.mode = Mode::fwd;
    if (Support base =
            cuda::supports_own_kernel(forward, device, name(), cuda::FlashSm90HeadDims::list());
        !base.ok)
      return base;
    if (Support bwd =
            cuda::flash_backward_supports(spec, name(), cuda::FlashSm90BwdHeadDims::list());
        !bwd.ok)
      return bwd;
    if (spec.mode != Mode::fwd && (spec.batch > 65535 || spec.kv_heads > 65535))
      return Support::no(fmt::format(
          "{}'s backward launches a (key blocks, kv_heads, batch) grid: at most 65535 sequences "
          "and KV heads",
          name()));
    if (device.cc_major != 9 || device.cc_minor != 0)
      return Support::no(fmt::format(
          "{} is built for sm_90a only (wgmma, TMA; Hopper); {} is compute capability {}.{}",
          name(), device.name, device.cc_major, device.cc_minor));
    if (spec.q_len >= (int64_t{1} << 30) || spec.kv_len >= (int64_t{1} << 30) ||
        work_items(spec) >= (int64_t{1} << 31))
      return Support::no(fmt::format(
          "{} indexes rows, keys and its work items (blocks of {} query rows x q_heads x batch) "
          "in 32 bits: at most 2^30 rows and keys and 2^31 items",
          name(), cuda::kFlashSm90Rows));
    return Support::yes();
  }
  int64_t workspace_estimate(const Spec& spec, const Settings& settings) const override {
    return cuda::flash_backward_workspace_bytes(spec, settings);  // none in fwd
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io& io) override {
    return std::make_unique<FlashSm90Run>(spec, device.sm_count, ctx, io);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cuda_flash_sm90() {
  return std::make_unique<FlashSm90Provider>();
}

}  // namespace attnprof
