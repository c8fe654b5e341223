// cuda.decode: attnprof's own split-KV decode kernel (decode_kernel.cu), for the shapes a
// serving engine's decode step has: a few query tokens per sequence over a long K/V cache, GQA
// with a KV head's query heads in one CTA, the cache contiguous or paged, the batch uniform or
// ragged, with a logit softcap or attention sinks. The split of each sequence's keys across CTAs
// is chosen from the shape and the SM count so that the grid fills the GPU several times over;
// the row's note records it.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "attnprof/provider_settings.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "providers/cuda/decode_kernel.cuh"
#include "providers/cuda/decode_split.hpp"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

using cuda::DeviceBuffer;

// The tensor-core kernel's pipeline asked for by --set cuda.decode.pipeline, for comparing them on
// a device: 8x3 (8 warps a CTA, 3 tiles deep), 4x2, 4x3; or a producer warp's stages of 64 or
// 128 keys, 3 or 6 in flight: p64x3, p128x3, p64x6, and p64x3r (boxes of whole rows) (sm_90 with
// the tensor copies; elsewhere 4x3 runs). Unset or "auto": the split's rule
// (decode_split.hpp choose_decode_pipeline).
std::optional<cuda::DecodePipeline> pipeline_for(const Settings& settings) {
  const std::string asked = setting_of(settings, "pipeline");
  if (asked == "4x3") return cuda::DecodePipeline::warps4_stages3;
  if (asked == "8x3") return cuda::DecodePipeline::warps8_stages3;
  if (asked == "4x2") return cuda::DecodePipeline::warps4_stages2;
  if (asked == "p64x3") return cuda::DecodePipeline::producer64_stages3;
  if (asked == "p128x3") return cuda::DecodePipeline::producer128_stages3;
  if (asked == "p64x6") return cuda::DecodePipeline::producer64_stages6;
  if (asked == "p64x3r") return cuda::DecodePipeline::producer64_stages3_rows;
  return std::nullopt;
}

// The pipeline and the split: the pipeline asked for, or (none asked) the rule's for the split
// the default pipeline gets (the producer's stages take as many CTAs an SM, so the same split).
struct Plan {
  cuda::DecodePipeline pipeline;
  cuda::DecodeSplit split;
};
Plan plan_for(const Spec& spec, const Device& device, cuda::DecodeCopy copy,
              const Settings& settings) {
  const std::optional<cuda::DecodePipeline> asked = pipeline_for(settings);
  Plan p;
  p.pipeline =
      cuda::decode_pipeline_used(asked.value_or(cuda::DecodePipeline::warps4_stages3), copy);
  p.split = cuda::choose_decode_split(spec, device.sm_count, p.pipeline,
                                      waves_chunk(setting_of(settings, "split")));
  if (!asked)
    p.pipeline = cuda::decode_pipeline_used(cuda::choose_decode_pipeline(p.split.chunk), copy);
  return p;
}

// How the tensor-core kernel copies its tiles: --set cuda.decode.copy=cp.async or tma (the default
// on sm_90: the tensor memory accelerator's boxes); devices before sm_90 always take cp.async.
cuda::DecodeCopy copy_for(const Device& device, const Settings& settings) {
  if (setting_of(settings, "copy") == "cp.async") return cuda::DecodeCopy::cp_async;
  return device.cc_major == 9 ? cuda::DecodeCopy::tma : cuda::DecodeCopy::cp_async;
}

// What the L2 fetches on a miss of a tensor copy's row: --set cuda.decode.l2=64, 128 or 256 bytes,
// or none (the default: a box's row is a 128-byte line already; 256 bytes fetched the other half
// of each K and V row a second time through the L2, bench/results/h200/2026-12-02-decode-producer
// call 2), for comparing them on a device.
cuda::L2Promotion promotion_for(const Settings& settings) {
  const std::string asked = setting_of(settings, "l2");
  if (asked == "64") return cuda::L2Promotion::b64;
  if (asked == "128") return cuda::L2Promotion::b128;
  if (asked == "256") return cuda::L2Promotion::b256;
  return cuda::L2Promotion::none;
}

std::string_view copy_name(cuda::DecodeCopy c) {
  return c == cuda::DecodeCopy::tma ? "TMA boxes" : "cp.async";
}

int max_rows(int64_t head_dim) {
  return head_dim == 256 ? 32 : cuda::kMaxDecodeRows;
}

class DecodeRun final : public Run {
 public:
  DecodeRun(const Spec& spec, const Device& device, const PrepareContext& ctx)
      : spec_(spec),
        copy_(cuda::decode_copy_used(copy_for(device, ctx.settings), spec.page_size)),
        plan_(plan_for(spec, device, copy_, ctx.settings)),
        promotion_(promotion_for(ctx.settings)),
        dependent_merge_(device.cc_major >= 9) {
    const int64_t floats = cuda::decode_partial_floats(spec.batch, spec.q_heads, spec.q_len,
                                                       spec.head_dim, plan_.split.splits);
    partial_ = DeviceBuffer(floats * int64_t(sizeof(float)), ctx.tracker);
  }

  void launch(Stream& stream, const Io& io) override {
    cuda::DecodeArgs a;
    static_cast<cuda::AttentionArgs&>(a) = cuda::attention_args(spec_, io);
    if (io.k.paged()) {
      a.k_pages = io.k.page_map();
      a.v_pages = io.v.page_map();
    }
    a.chunk = plan_.split.chunk;
    a.splits = plan_.split.splits;
    a.pipeline = plan_.pipeline;
    a.copy = copy_;
    a.dependent_merge = dependent_merge_;
    a.l2_promotion = promotion_;
    a.partial = static_cast<float*>(partial_.data());
    cuda::launch_decode(a, cuda::native_stream(stream));
  }

  int64_t workspace_bytes() const override { return partial_.bytes(); }

  std::string note() const override {
    const int64_t ctas = spec_.batch * spec_.kv_heads * plan_.split.splits;
    const int rows = int(spec_.group_size() * spec_.q_len);
    const std::string kernel =
        !cuda::decode_uses_mma(int(spec_.head_dim), rows) ? "CUDA cores"
        : cuda::pipeline_has_producer(plan_.pipeline)
            ? fmt::format(
                  "tensor cores, a producer warp and {} warps, {} stages of {} keys, {}{}",
                  cuda::pipeline_warps(plan_.pipeline), cuda::pipeline_stages(plan_.pipeline),
                  cuda::pipeline_stage_keys(plan_.pipeline), copy_name(copy_),
                  plan_.pipeline == cuda::DecodePipeline::producer64_stages3_rows ? " of whole rows"
                                                                                  : "")
            : fmt::format("tensor cores, {} warps x {} stages, {}",
                          cuda::pipeline_warps(plan_.pipeline),
                          cuda::pipeline_stages(plan_.pipeline), copy_name(copy_));
    const std::string l2 = copy_ != cuda::DecodeCopy::tma || promotion_ == cuda::L2Promotion::none
                               ? ""
                               : fmt::format(", L2 promotion {} bytes", int(promotion_));
    return fmt::format("split-KV: {} split{} of {} keys per sequence, {} CTAs{} ({}{})",
                       plan_.split.splits, plan_.split.splits == 1 ? "" : "s", plan_.split.chunk,
                       ctas, plan_.split.splits > 1 ? ", then a merge" : "", kernel, l2);
  }

 private:
  Spec spec_;
  cuda::DecodeCopy copy_;  // the copy that runs (decode_copy_used)
  Plan plan_;
  cuda::L2Promotion promotion_;
  bool dependent_merge_;
  DeviceBuffer partial_;  // splits > 1: fp32 partial sums
};

class DecodeProvider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_decode_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    if (Support base =
            cuda::supports_own_kernel(spec, device, name(), cuda::DecodeHeadDims::list());
        !base.ok)
      return base;
    const int64_t rows = spec.group_size() * spec.q_len;
    if (rows > max_rows(spec.head_dim))
      return Support::no(fmt::format(
          "{} holds at most {} query rows per KV head (query heads per KV head x query tokens) "
          "at head dim {}; this spec has {} x {} = {}: it is a decode kernel, not a prefill",
          name(), max_rows(spec.head_dim), spec.head_dim, spec.group_size(), spec.q_len, rows));
    if (spec.kv_len >= (int64_t{1} << 30) || spec.batch > 65535 || spec.kv_heads > 65535)
      return Support::no(fmt::format(
          "{} indexes keys in 32 bits and launches a (splits, kv_heads, batch) grid: at most "
          "2^30 keys and 65535 sequences and KV heads",
          name()));
    return Support::yes();
  }
  int64_t workspace_estimate(const Spec& spec, const Settings&) const override {
    // The split never exceeds kv_len / 256 per sequence.
    const int64_t splits = std::max<int64_t>(1, spec.kv_len / 256) + 1;
    return cuda::decode_partial_floats(spec.batch, spec.q_heads, spec.q_len, spec.head_dim,
                                       int(splits)) *
           int64_t(sizeof(float));
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io&) override {
    return std::make_unique<DecodeRun>(spec, device, ctx);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cuda_decode() {
  return std::make_unique<DecodeProvider>();
}

}  // namespace attnprof
