// cuda.flash: attnprof's own fused prefill kernel (flash_kernel.cu), FlashAttention-2's forward
// for sm80 and newer: blocks of 128 query rows, K and V streamed through shared memory, the
// scores never leave the registers. GQA and MQA read each KV head in place; every mask, Nq !=
// Nk, ragged batches, the logit softcap and sinks; O and the LSE written.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "providers/cuda/flash_kernel.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

class FlashRun final : public Run {
 public:
  explicit FlashRun(const Spec& spec) : spec_(spec) {}

  void launch(Stream& stream, const Io& io) override {
    cuda::launch_flash(cuda::attention_args(spec_, io), cuda::native_stream(stream));
  }

  std::string note() const override {
    const int64_t blocks = (spec_.q_len + cuda::kFlashRows - 1) / cuda::kFlashRows;
    return fmt::format("{} CTAs of {} query rows, key tiles of {}, {} B of shared memory each",
                       blocks * spec_.q_heads * spec_.batch, cuda::kFlashRows,
                       cuda::flash_key_tile(int(spec_.head_dim)),
                       cuda::flash_smem_bytes(int(spec_.head_dim)));
  }

 private:
  Spec spec_;
};

class FlashProvider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_flash_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    if (Support base = cuda::supports_own_kernel(spec, device, name(), {64, 128}); !base.ok)
      return base;
    if (spec.q_len >= (int64_t{1} << 30) || spec.kv_len >= (int64_t{1} << 30) ||
        spec.batch > 65535 || spec.q_heads > 65535)
      return Support::no(fmt::format(
          "{} indexes rows and keys in 32 bits and launches a (query blocks, q_heads, batch) "
          "grid: at most 2^30 of each and 65535 sequences and query heads",
          name()));
    return Support::yes();
  }
  int64_t workspace_estimate(const Spec&) const override { return 0; }  // none
  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext&,
                               const Io&) override {
    return std::make_unique<FlashRun>(spec);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cuda_flash() {
  return std::make_unique<FlashProvider>();
}

}  // namespace attnprof
