// cuda.mla.decode: attnprof's own absorbed-MLA decode kernel (mla_decode_kernel.cu) for Hopper:
// DeepSeek-V3's decode step with d_qk 576 and d_v 512 over one latent cache (V is K's first 512
// columns), every query head of a KV head (128 on one latent head) in CTAs of 64 rows on wgmma. The
// keys of each sequence are split across CTAs when the batch alone leaves SMs idle; the row's note
// records the split.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "attnprof/provider_settings.hpp"
#include "cuda/device_buffer.hpp"
#include "providers/cuda/decode_split.hpp"
#include "providers/cuda/mla_decode_kernel.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

using cuda::DeviceBuffer;

// The kernel's pipeline: --set cuda.mla.decode.pipeline=overlap32 (tiles of 32 keys, P V a tile
// behind the scores) or serial64 (the default), for comparing them on a device.
cuda::MlaPipeline pipeline_for(const Settings& settings) {
  return setting_of(settings, "pipeline") == "overlap32" ? cuda::MlaPipeline::overlap32
                                                         : cuda::MlaPipeline::serial64;
}

// The most query tokens per sequence: a decode step or a short speculative chunk.
constexpr int64_t kMaxQueryTokens = 64;

class MlaDecodeRun final : public Run {
 public:
  MlaDecodeRun(const Spec& spec, const Device& device, const PrepareContext& ctx)
      : spec_(spec),
        pipeline_(pipeline_for(ctx.settings)),
        row_blocks_(cuda::mla_row_blocks(int(spec.group_size()), int(spec.q_len))),
        split_(cuda::choose_mla_decode_split(spec, device.sm_count, row_blocks_,
                                             waves_chunk(setting_of(ctx.settings, "split")))) {
    const int64_t floats =
        cuda::decode_partial_floats(spec.batch, spec.q_heads, spec.q_len, spec.dv(), split_.splits);
    partial_ = DeviceBuffer(floats * int64_t(sizeof(float)), ctx.tracker);
  }

  void launch(Stream& stream, const Io& io) override {
    cuda::MlaDecodeArgs a;
    static_cast<cuda::AttentionArgs&>(a) = cuda::attention_args(spec_, io);
    if (io.k.paged()) a.k_pages = io.k.page_map();
    a.chunk = split_.chunk;
    a.splits = split_.splits;
    a.row_blocks = row_blocks_;
    a.pipeline = pipeline_;
    a.partial = static_cast<float*>(partial_.data());
    a.dependent_merge = true;  // sm_90 (the provider refuses other devices)
    cuda::launch_mla_decode(a, cuda::native_stream(stream));
  }

  int64_t workspace_bytes() const override { return partial_.bytes(); }

  std::string note() const override {
    const int64_t ctas = spec_.batch * spec_.kv_heads * row_blocks_ * split_.splits;
    return fmt::format(
        "split-KV: {} split{} of {} keys per sequence, {} CTAs of {} query rows{} (wgmma, {} "
        "stages of {} keys of the latent, {} B of shared memory)",
        split_.splits, split_.splits == 1 ? "" : "s", split_.chunk, ctas, cuda::kMlaRows,
        split_.splits > 1 ? ", then a merge" : "", cuda::mla_stages(pipeline_),
        cuda::mla_key_tile(pipeline_), cuda::mla_decode_smem_bytes(pipeline_));
  }

 private:
  Spec spec_;
  cuda::MlaPipeline pipeline_;
  int row_blocks_;
  cuda::DecodeSplit split_;
  DeviceBuffer partial_;  // splits > 1: fp32 partial sums
};

class MlaDecodeProvider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_mla_decode_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    if (Support base = cuda::supports_own_kernel(
            spec, device, name(), std::array<int64_t, 1>{cuda::kMlaQkDim}, cuda::kMlaVDim);
        !base.ok)
      return base;
    if (!spec.shared_latent)
      return Support::no(fmt::format(
          "{} reads V as K's first {} columns, the absorbed form's one latent cache: it needs a "
          "shared latent (--shared-latent on; the deepseek-v3-mla-decode model sets it)",
          name(), cuda::kMlaVDim));
    if (device.cc_major != 9 || device.cc_minor != 0)
      return Support::no(
          fmt::format("{} is built for sm_90a only (wgmma, Hopper); {} is compute capability {}.{}",
                      name(), device.name, device.cc_major, device.cc_minor));
    if (spec.q_len > kMaxQueryTokens)
      return Support::no(fmt::format(
          "{} takes at most {} query tokens per sequence (a decode step or a speculative chunk); "
          "this spec has {}: it is a decode kernel, not a prefill",
          name(), kMaxQueryTokens, spec.q_len));
    if (spec.kv_len >= (int64_t{1} << 30) || spec.batch > 65535 ||
        spec.kv_heads * cuda::mla_row_blocks(int(spec.group_size()), int(spec.q_len)) > 65535)
      return Support::no(fmt::format(
          "{} indexes keys in 32 bits and launches a (row blocks x kv_heads, splits, batch) "
          "grid: at most 2^30 keys, 65535 sequences and 65535 blocks of 64 query rows",
          name()));
    return Support::yes();
  }
  int64_t workspace_estimate(const Spec& spec, const Settings& settings) const override {
    const int64_t splits =
        cuda::mla_decode_most_splits(spec, waves_chunk(setting_of(settings, "split"))) + 1;
    return cuda::decode_partial_floats(spec.batch, spec.q_heads, spec.q_len, spec.dv(),
                                       int(splits)) *
           int64_t(sizeof(float));
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io&) override {
    return std::make_unique<MlaDecodeRun>(spec, device, ctx);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cuda_mla_decode() {
  return std::make_unique<MlaDecodeProvider>();
}

}  // namespace attnprof
