// cuda.flash: attnprof's own fused prefill kernel (flash_kernel.cu), FlashAttention-2's forward
// for sm80 and newer: blocks of 128 query rows, K and V streamed through shared memory, the
// scores never leave the registers. GQA and MQA read each KV head in place; every mask, Nq !=
// Nk, ragged batches, the logit softcap and sinks; O and the LSE written. Its backward
// (flash_bwd_kernel.cu: modes bwd and fwd_bwd) writes dQ, dK and dV from the forward's O and
// LSE, for the masks and shapes of a uniform batch without softcap or sinks.
// --set cuda.flash.deterministic=1 asks for the backward's deterministic option (dQ summed in key
// order by a kernel of its own instead of atomics; the row's note says which ran).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cuda/cuda_check.hpp"
#include "providers/cuda/flash_backward.hpp"
#include "providers/cuda/flash_kernel.cuh"
#include "providers/cuda/provider_common.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

class FlashRun final : public Run {
 public:
  // Mode bwd: the forward runs here, untimed, so that the point's O and LSE are this kernel's.
  FlashRun(const Spec& spec, const PrepareContext& ctx, const Io& io)
      : spec_(spec), backward_(spec, ctx) {
    if (spec.mode == Mode::bwd) {
      cuda::launch_flash(cuda::attention_args(spec_, io), nullptr);
      ATTNPROF_CUDA(cudaStreamSynchronize(nullptr));
    }
  }

  void launch(Stream& stream, const Io& io) override {
    const cudaStream_t s = cuda::native_stream(stream);
    if (spec_.mode != Mode::bwd) cuda::launch_flash(cuda::attention_args(spec_, io), s);
    if (spec_.mode != Mode::fwd) cuda::launch_flash_bwd(backward_.args(io), s);
  }

  int64_t workspace_bytes() const override { return backward_.workspace_bytes(); }

  std::string note() const override {
    const int64_t blocks = (spec_.q_len + cuda::kFlashRows - 1) / cuda::kFlashRows;
    const std::string note = fmt::format(
        "{} CTAs of {} query rows, key tiles of {}, {} B of shared memory each",
        blocks * spec_.q_heads * spec_.batch, cuda::kFlashRows,
        cuda::flash_key_tile(int(spec_.head_dim)), cuda::flash_smem_bytes(int(spec_.head_dim)));
    return backward_.note(note, "", cuda::flash_bwd_step_queries(int(spec_.head_dim)),
                          cuda::flash_bwd_smem_bytes(int(spec_.head_dim)));
  }

 private:
  Spec spec_;
  cuda::FlashBackward backward_;
};

class FlashProvider final : public Provider {
 public:
  ProviderTraits traits() const override { return cuda_flash_traits(); }
  Availability availability() const override { return cuda::device_availability(); }

  Support supports(const Spec& spec, const Device& device) const override {
    Spec forward = spec;
    forward.mode = Mode::fwd;
    if (Support base =
            cuda::supports_own_kernel(forward, device, name(), cuda::FlashHeadDims::list());
        !base.ok)
      return base;
    if (Support bwd = cuda::flash_backward_supports(spec, name(), cuda::FlashBwdHeadDims::list());
        !bwd.ok)
      return bwd;
    if (spec.q_len >= (int64_t{1} << 30) || spec.kv_len >= (int64_t{1} << 30) ||
        spec.batch > 65535 || spec.q_heads > 65535)
      return Support::no(fmt::format(
          "{} indexes rows and keys in 32 bits and launches a (query blocks, q_heads, batch) "
          "grid: at most 2^30 of each and 65535 sequences and query heads",
          name()));
    return Support::yes();
  }
  int64_t workspace_estimate(const Spec& spec, const Settings& settings) const override {
    return cuda::flash_backward_workspace_bytes(spec, settings);
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device&, const PrepareContext& ctx,
                               const Io& io) override {
    return std::make_unique<FlashRun>(spec, ctx, io);
  }
};

}  // namespace

std::unique_ptr<Provider> make_cuda_flash() {
  return std::make_unique<FlashProvider>();
}

}  // namespace attnprof
