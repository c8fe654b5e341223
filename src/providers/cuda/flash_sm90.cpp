// cuda.flash.sm90: attnprof's own fused prefill kernel for Hopper (flash_sm90_kernel.cu): wgmma
// from 128-byte-swizzled shared memory, K and V tiles brought by the tensor memory accelerator
// (a producer warpgroup, mbarriers), two consumer warpgroups taking turns at the tensor cores, one
// persistent CTA per SM. GQA and MQA read each KV head in place; every mask, Nq != Nk, ragged
// batches, the logit softcap and sinks; O and the LSE written.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "providers/cuda/flash_sm90_kernel.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

// ATTNPROF_FLASH_SM90=nopingpong: the consumer warpgroups do not take turns (for comparing
// the two schedules on a device).
bool pingpong_from_env() {
  const char* v = std::getenv("ATTNPROF_FLASH_SM90");
  return v == nullptr || std::string_view(v) != "nopingpong";
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
// ATTNPROF_FLASH_SM90_ORDER=heads|blocks forces one, for comparing on a device.
bool heads_major_for(const Spec& spec) {
  const char* v = std::getenv("ATTNPROF_FLASH_SM90_ORDER");
  if (v != nullptr && std::string_view(v) == "heads") return true;
  if (v != nullptr && std::string_view(v) == "blocks") return false;
  return spec.mask.kind != MaskKind::causal_tl && spec.mask.kind != MaskKind::causal_br;
}

class FlashSm90Run final : public Run {
 public:
  FlashSm90Run(const Spec& spec, int sms)
      : spec_(spec), ctas_(int(std::min<int64_t>(work_items(spec), sms))) {}

  void launch(Stream& stream, const Io& io) override {
    cuda::FlashSm90Args a;
    static_cast<cuda::AttentionArgs&>(a) = cuda::attention_args(spec_, io);
    a.pingpong = pingpong_;
    a.heads_major = heads_major_;
    a.ctas = ctas_;
    cuda::launch_flash_sm90(a, cuda::native_stream(stream));
  }

  std::string note() const override {
    return fmt::format(
        "persistent: {} CTAs over {} blocks of {} query rows, {} major (2 consumer "
        "warpgroups{}, a TMA producer warpgroup), {} stages of {}-key K and V tiles, {} B of "
        "shared memory each",
        ctas_, work_items(spec_), cuda::kFlashSm90Rows, heads_major_ ? "heads" : "blocks",
        pingpong_ ? " taking turns" : "", cuda::kFlashSm90Stages,
        cuda::flash_sm90_key_tile(int(spec_.head_dim)),
        cuda::flash_sm90_smem_bytes(int(spec_.head_dim)));
  }

 private:
  Spec spec_;
  int ctas_;  // one per SM, or fewer where there are fewer work items
  bool pingpong_ = pingpong_from_env();
  bool heads_major_ = heads_major_for(spec_);
};

class FlashSm90Provider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_flash_sm90_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    if (Support base = cuda::supports_own_kernel(spec, device, name(), {64, 128, 256}); !base.ok)
      return base;
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
  int64_t workspace_estimate(const Spec&) const override { return 0; }  // none
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext&,
                               const Io&) override {
    return std::make_unique<FlashSm90Run>(spec, device.sm_count);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cuda_flash_sm90() {
  return std::make_unique<FlashSm90Provider>();
}

}  // namespace attnprof
