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
#include <string>
#include <string_view>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "providers/cuda/decode_kernel.cuh"
#include "providers/cuda/decode_split.hpp"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

using cuda::DeviceBuffer;

// The tensor-core kernel's pipeline: ATTNPROF_DECODE_PIPELINE=8x3 (8 warps a CTA, 3 tiles deep),
// 4x2, or 4x3 (the default), for comparing them on a device.
cuda::DecodePipeline pipeline_from_env() {
  const char* v = std::getenv("ATTNPROF_DECODE_PIPELINE");
  const std::string_view asked = v != nullptr ? v : "";
  if (asked == "8x3") return cuda::DecodePipeline::warps8_stages3;
  if (asked == "4x2") return cuda::DecodePipeline::warps4_stages2;
  return cuda::DecodePipeline::warps4_stages3;
}

// How the tensor-core kernel copies its tiles: ATTNPROF_DECODE_COPY=cp.async or tma (the default
// on sm_90: the tensor memory accelerator's boxes); devices before sm_90 always take cp.async.
cuda::DecodeCopy copy_for(const Device& device) {
  const char* v = std::getenv("ATTNPROF_DECODE_COPY");
  if (v != nullptr && std::string_view(v) == "cp.async") return cuda::DecodeCopy::cp_async;
  return device.cc_major == 9 ? cuda::DecodeCopy::tma : cuda::DecodeCopy::cp_async;
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
        pipeline_(pipeline_from_env()),
        copy_(copy_for(device)),
        dependent_merge_(device.cc_major >= 9),
        split_(cuda::choose_decode_split(spec, device.sm_count, pipeline_)) {
    const int64_t floats = cuda::decode_partial_floats(spec.batch, spec.q_heads, spec.q_len,
                                                       spec.head_dim, split_.splits);
    partial_ = DeviceBuffer(floats * int64_t(sizeof(float)), ctx.tracker);
  }

  void launch(Stream& stream, const Io& io) override {
    cuda::DecodeArgs a;
    static_cast<cuda::AttentionArgs&>(a) = cuda::attention_args(spec_, io);
    if (io.k.paged()) {
      a.k_pages = io.k.page_map();
      a.v_pages = io.v.page_map();
    }
    a.chunk = split_.chunk;
    a.splits = split_.splits;
    a.pipeline = pipeline_;
    a.copy = copy_;
    a.dependent_merge = dependent_merge_;
    a.partial = static_cast<float*>(partial_.data());
    cuda::launch_decode(a, cuda::native_stream(stream));
  }

  int64_t workspace_bytes() const override { return partial_.bytes(); }

  std::string note() const override {
    const int64_t ctas = spec_.batch * spec_.kv_heads * split_.splits;
    const int rows = int(spec_.group_size() * spec_.q_len);
    const std::string kernel =
        !cuda::decode_uses_mma(int(spec_.head_dim), rows)
            ? "CUDA cores"
            : fmt::format("tensor cores, {} warps x {} stages, {}", cuda::pipeline_warps(pipeline_),
                          cuda::pipeline_stages(pipeline_),
                          copy_name(cuda::decode_copy_used(copy_, spec_.page_size)));
    return fmt::format("split-KV: {} split{} of {} keys per sequence, {} CTAs{} ({})",
                       split_.splits, split_.splits == 1 ? "" : "s", split_.chunk, ctas,
                       split_.splits > 1 ? ", then a merge" : "", kernel);
  }

 private:
  Spec spec_;
  cuda::DecodePipeline pipeline_;
  cuda::DecodeCopy copy_;
  bool dependent_merge_;
  cuda::DecodeSplit split_;
  DeviceBuffer partial_;  // splits > 1: fp32 partial sums
};

class DecodeProvider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_decode_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    if (Support base = cuda::supports_own_kernel(spec, device, name(), {64, 128, 256}); !base.ok)
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
  int64_t workspace_estimate(const Spec& spec) const override {
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
