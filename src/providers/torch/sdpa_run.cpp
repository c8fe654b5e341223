// torch.sdpa.*: at::scaled_dot_product_attention with one backend enabled (the flags
// torch.nn.attention.sdpa_kernel sets), or with ATen's choice (torch.sdpa.default). Before
// anything runs, ATen is asked which backend it would take (at::_fused_sdp_choice, the same
// function the dispatcher calls); a refusal is NotSupported with ATen's own warnings, which
// say why each backend was rejected.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/SDPBackend.h>
#include <ATen/native/transformers/cuda/sdp_utils.h>
#include <c10/util/Exception.h>

#include <string>
#include <vector>

#include "providers/torch/torch_provider.hpp"
#include "providers/torch/torch_run.hpp"

namespace attnprof::torchp {
namespace {

std::string sdp_name(at::SDPBackend b) {
  switch (b) {
    case at::SDPBackend::math:
      return "math";
    case at::SDPBackend::flash_attention:
      return "flash_attention";
    case at::SDPBackend::efficient_attention:
      return "efficient_attention";
    case at::SDPBackend::cudnn_attention:
      return "cudnn_attention";
    case at::SDPBackend::overrideable:
      return "overrideable";
    case at::SDPBackend::error:
      break;
  }
  return "error";
}

at::SDPBackend sdp_backend(Backend b) {
  switch (b) {
    case Backend::flash:
      return at::SDPBackend::flash_attention;
    case Backend::efficient:
      return at::SDPBackend::efficient_attention;
    case Backend::cudnn:
      return at::SDPBackend::cudnn_attention;
    case Backend::math:
      return at::SDPBackend::math;
    case Backend::choice:
    case Backend::naive:
      break;
  }
  return at::SDPBackend::error;
}

// ATen's four SDPA switches, set for one scope and restored after it. `only` enables one
// backend and disables the others; SDPBackend::error leaves them as they are.
class BackendSwitches {
 public:
  explicit BackendSwitches(at::SDPBackend only) {
    auto& c = at::globalContext();
    saved_ = {c.userEnabledFlashSDP(), c.userEnabledMemEfficientSDP(), c.userEnabledMathSDP(),
              c.userEnabledCuDNNSDP()};
    if (only == at::SDPBackend::error) return;
    set({only == at::SDPBackend::flash_attention, only == at::SDPBackend::efficient_attention,
         only == at::SDPBackend::math, only == at::SDPBackend::cudnn_attention});
  }
  ~BackendSwitches() { set(saved_); }
  BackendSwitches(const BackendSwitches&) = delete;
  BackendSwitches& operator=(const BackendSwitches&) = delete;

 private:
  struct Flags {
    bool flash, efficient, math, cudnn;
  };
  static void set(const Flags& f) {
    auto& c = at::globalContext();
    c.setSDPUseFlash(f.flash);
    c.setSDPUseMemEfficient(f.efficient);
    c.setSDPUseMath(f.math);
    c.setSDPUseCuDNN(f.cudnn);
  }
  Flags saved_{};
};

// Collects the warnings ATen raises in one scope (its reasons for passing a backend over).
class WarningsCollected final : public c10::WarningHandler {
 public:
  WarningsCollected() : guard_(this) {}
  void process(const c10::Warning& w) override { messages.push_back(w.msg()); }
  std::string joined() const {
    std::string all;
    for (const std::string& m : messages) all += (all.empty() ? "" : " ") + m;
    return all;
  }
  std::vector<std::string> messages;

 private:
  c10::WarningUtils::WarningHandlerGuard guard_;
};

class SdpaRun final : public TorchRun {
 public:
  SdpaRun(Backend backend, const Spec& spec, const Device& device, const PrepareContext& ctx,
          const Io& io)
      : TorchRun(spec, device, ctx, io), backend_(backend) {
    if (needs_explicit_mask()) mask_ = keep_mask();
    const at::SDPBackend wanted = sdp_backend(backend_);
    std::string why;
    chosen_ = ask_aten(wanted, why);
    if (chosen_ == at::SDPBackend::error) {
      throw NotSupported("ATen has no " +
                         (backend_ == Backend::choice ? std::string("SDPA") : sdp_name(wanted)) +
                         " kernel for this point: " + why);
    }
    if (backend_ == Backend::choice) {
      note_ = "ATen chose " + sdp_name(chosen_);
      // Why the backends ATen tries before its choice were passed over, in its own words.
      std::string passed;
      for (at::SDPBackend b : at::globalContext().sDPPriorityOrder()) {
        if (b == chosen_) break;
        if (b == at::SDPBackend::overrideable || b == at::SDPBackend::error) continue;
        std::string reason;
        if (ask_aten(b, reason) == at::SDPBackend::error) {
          passed += (passed.empty() ? "" : "; ") + sdp_name(b) + ": " + reason;
        }
      }
      if (!passed.empty()) note_ += "; passed over: " + passed;
    } else if (chosen_ != wanted) {
      throw NotSupported("ATen picked " + sdp_name(chosen_) + " with only " + sdp_name(wanted) +
                         " enabled");
    } else {
      note_ = "ATen ran " + sdp_name(chosen_);
    }
    if (mask_) note_ += "; mask passed as a (Nq, Nk) bool attn_mask";
  }

 protected:
  at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) override {
    const BackendSwitches switches(sdp_backend(backend_));
    return at::scaled_dot_product_attention(q, k, v, mask_, 0.0, mask_is_causal(),
                                            spec().softmax_scale(), gqa());
  }
  std::string forward_note() const override { return note_; }

 private:
  bool gqa() const { return spec().q_heads != spec().kv_heads; }

  // The backend ATen takes with only `only` enabled (error: ATen's choice with its own
  // switches), or SDPBackend::error with ATen's reasons in `why`.
  at::SDPBackend ask_aten(at::SDPBackend only, std::string& why) {
    const BackendSwitches switches(only);
    try {
      const int64_t b = at::_fused_sdp_choice(q(), k(), v(), mask_, 0.0, mask_is_causal(),
                                              spec().softmax_scale(), gqa());
      return static_cast<at::SDPBackend>(b);
    } catch (const c10::Error& e) {
      // The dispatcher stops at its first refusal without saying why; ATen's own checks (what
      // torch.backends.cuda.can_use_flash_attention(params, debug=True) calls) do.
      why = reasons(only);
      if (why.empty()) why = e.what_without_backtrace();
      return at::SDPBackend::error;
    }
  }

  // ATen's warnings of why backend `b` cannot run this point ("" when it says nothing).
  std::string reasons(at::SDPBackend b) {
    const sdp::sdp_params params{q(), k(), v(), mask_, 0.0, mask_is_causal(), gqa()};
    WarningsCollected warnings;
    switch (b) {
      case at::SDPBackend::flash_attention:
        (void)sdp::can_use_flash_attention(params, /*debug=*/true);
        break;
      case at::SDPBackend::efficient_attention:
        (void)sdp::can_use_mem_efficient_attention(params, /*debug=*/true);
        break;
      case at::SDPBackend::cudnn_attention:
        (void)sdp::can_use_cudnn_attention(params, /*debug=*/true);
        break;
      default:
        break;
    }
    return warnings.joined();
  }

  Backend backend_;
  std::optional<at::Tensor> mask_;
  at::SDPBackend chosen_ = at::SDPBackend::error;
  std::string note_;
};

}  // namespace

std::unique_ptr<Run> prepare_sdpa(Backend backend, const Spec& spec, const Device& device,
                                  const PrepareContext& ctx, const Io& io) {
  return std::make_unique<SdpaRun>(backend, spec, device, ctx, io);
}

}  // namespace attnprof::torchp
