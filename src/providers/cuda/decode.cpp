// cuda.decode: attnprof's own split-KV decode kernel (decode_kernel.cu), for the shapes a
// serving engine's decode step has: a few query tokens per sequence over a long K/V cache, GQA
// with a KV head's query heads in one CTA, the cache contiguous or paged, the batch uniform or
// ragged, with a logit softcap or attention sinks. The split of each sequence's keys across CTAs
// is chosen from the shape and the SM count so that the grid fills the GPU several times over;
// the row's note records it.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "providers/cuda/decode_kernel.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

using cuda::DeviceBuffer;

// CTAs of 128 threads resident per SM at this shared-memory size (228 KiB per SM, 1 KiB of it
// reserved per CTA), at least 1.
int ctas_per_sm(int smem_bytes) {
  return std::max(1, std::min(16, (228 * 1024) / (smem_bytes + 1024)));
}

// How the keys are split: `splits` chunks of `chunk` keys (a multiple of the key tile) per
// sequence. Measured on the H200 (bench/results/h200/2026-12-01-sweep, calls 5 and 6), at B 1, 8
// and 64, 32/8 heads, D 128, KV 1k..32k:
//  - a (batch, KV head) per CTA already fills a wave: no split (B 64: 3.50 TB/s at KV 1k where
//    3 splits of 384 keys gave 2.62). Not for a ragged batch, whose long sequences would then
//    set the time: it keeps about sixteen waves in chunks of at least 2048 keys (KV 1k..32k,
//    bench/results/h200/2026-12-02-decode-paged, calls 6-9: at B 64 9 splits of 3648 keys,
//    0.97x its uniform rate, where 3 gave 0.90x and one 0.71x; at B 8 16 of 2048, where 32 of
//    1024 gave 0.82x and 64 of 512 0.73x);
//  - else up to about four waves, in chunks of at least 1024 keys (B 8, KV 32k: 17 splits of
//    1984 keys, 3.56 TB/s, where 5 gave 2.67);
//  - and where that is under a wave, as many splits as fill one, in chunks of at least 256 keys
//    (B 1, KV 32k: 32 splits of 1024, 2.68 TB/s, where 128 of 256 gave 1.49).
struct Split {
  int chunk = 0, splits = 1;
};
// The tensor-core kernel's pipeline: ATTNPROF_DECODE_PIPELINE=2x6 (2 warps a CTA, 6 tiles deep)
// or 4x3 (the default), for comparing them on a device.
cuda::DecodePipeline pipeline_from_env() {
  const char* v = std::getenv("ATTNPROF_DECODE_PIPELINE");
  return v != nullptr && std::string_view(v) == "2x6" ? cuda::DecodePipeline::warps2_stages6
                                                      : cuda::DecodePipeline::warps4_stages3;
}

// The split's knobs, for comparing them on a device: ATTNPROF_DECODE_SPLIT=W:C aims at W waves
// of CTAs (a uniform batch and a ragged one alike) in chunks of at least C >= 256 keys
// (default: 4 waves and 1024 keys; for a ragged batch 16 waves and 2048 keys).
struct SplitKnobs {
  int64_t waves = 4, min_chunk = 1024, ragged_waves = 16, ragged_min_chunk = 2048;
};
SplitKnobs split_knobs_from_env() {
  SplitKnobs k;
  const char* v = std::getenv("ATTNPROF_DECODE_SPLIT");
  long long w = 0, c = 0;
  if (v != nullptr && std::sscanf(v, "%lld:%lld", &w, &c) == 2 && w >= 1 && c >= 256) {
    k.waves = w;
    k.ragged_waves = w;
    k.min_chunk = c;
    k.ragged_min_chunk = c;
  }
  return k;
}

Split choose_split(const Spec& s, int sm_count, cuda::DecodePipeline pipeline) {
  const int tile = cuda::kDecodeChunkGranule;
  const int rows = int(s.group_size() * s.q_len);
  const int64_t slots = int64_t(std::max(sm_count, 1)) *
                        ctas_per_sm(cuda::decode_smem_bytes(int(s.head_dim), rows, pipeline));
  const int64_t ctas = s.batch * s.kv_heads;
  const SplitKnobs knobs = split_knobs_from_env();
  const int64_t want = (knobs.waves * slots + ctas - 1) / ctas;
  const int64_t most = std::max<int64_t>(1, s.kv_len / 256);
  int64_t splits = 1;
  if (s.ragged()) {
    splits = std::min((knobs.ragged_waves * slots + ctas - 1) / ctas,
                      std::max<int64_t>(1, s.kv_len / knobs.ragged_min_chunk));
  } else if (ctas < slots) {
    splits = std::min(want, std::max<int64_t>(1, s.kv_len / knobs.min_chunk));
  }
  if (splits * ctas < slots) splits = std::max(splits, std::min(slots / ctas, most));
  const int64_t chunk = ((s.kv_len + splits - 1) / splits + tile - 1) / tile * tile;
  Split out;
  out.chunk = int(chunk);
  out.splits = int((s.kv_len + chunk - 1) / chunk);
  return out;
}

int max_rows(int64_t head_dim) {
  return head_dim == 256 ? 32 : cuda::kMaxDecodeRows;
}

class DecodeRun final : public Run {
 public:
  DecodeRun(const Spec& spec, const Device& device, const PrepareContext& ctx)
      : spec_(spec),
        pipeline_(pipeline_from_env()),
        split_(choose_split(spec, device.sm_count, pipeline_)) {
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
    a.partial = static_cast<float*>(partial_.data());
    cuda::launch_decode(a, cuda::native_stream(stream));
  }

  int64_t workspace_bytes() const override { return partial_.bytes(); }

  std::string note() const override {
    const int64_t ctas = spec_.batch * spec_.kv_heads * split_.splits;
    const int rows = int(spec_.group_size() * spec_.q_len);
    const std::string kernel = !cuda::decode_uses_mma(int(spec_.head_dim), rows) ? "CUDA cores"
                               : pipeline_ == cuda::DecodePipeline::warps2_stages6
                                   ? "tensor cores, 2 warps x 6 stages"
                                   : "tensor cores, 4 warps x 3 stages";
    return fmt::format("split-KV: {} split{} of {} keys per sequence, {} CTAs{} ({})",
                       split_.splits, split_.splits == 1 ? "" : "s", split_.chunk, ctas,
                       split_.splits > 1 ? ", then a merge" : "", kernel);
  }

 private:
  Spec spec_;
  cuda::DecodePipeline pipeline_;
  Split split_;
  DeviceBuffer partial_;  // splits > 1: fp32 partial sums
};

class DecodeProvider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_decode_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    if (Support base = cuda::supports_forward_on(spec, device, name()); !base.ok) return base;
    if (spec.dtype != DType::fp16 && spec.dtype != DType::bf16)
      return Support::no(
          fmt::format("{} takes fp16 and bf16 only, not {}", name(), to_string(spec.dtype)));
    if (spec.dv() != spec.head_dim ||
        (spec.head_dim != 64 && spec.head_dim != 128 && spec.head_dim != 256))
      return Support::no(fmt::format(
          "{} is built for head dims 64, 128 and 256 with Dv == D; this spec has D {} and Dv {}",
          name(), spec.head_dim, spec.dv()));
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
