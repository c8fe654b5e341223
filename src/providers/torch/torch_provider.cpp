#include "providers/torch/torch_provider.hpp"

namespace attnprof::torchp {
namespace {

class TorchProvider final : public Provider {
 public:
  TorchProvider(ProviderTraits traits, Backend backend)
      : traits_(std::move(traits)), backend_(backend) {
    traits_.library_version = torch_version();
  }

  ProviderTraits traits() const override { return traits_; }
  Fingerprint fingerprint() const override { return {{"torch", torch_version()}}; }
  Availability availability() const override { return torch_availability(); }
  WorkerGroup worker_group() const override { return torch_worker_group(); }

  // The shape rules are ATen's: prepare() asks ATen and turns a refusal into NotSupported with
  // ATen's own words. Only what ATen cannot be asked without tensors is checked here.
  Support supports(const Spec& s, const Device& device) const override {
    if (device.kind != DeviceKind::cuda) return Support::no(traits_.name + " runs on CUDA devices");
    if (s.kv_heads <= 0 || s.q_heads % s.kv_heads != 0) {
      return Support::no("PyTorch's enable_gqa needs q_heads to be a multiple of kv_heads");
    }
    if (Availability a = availability(); !a.available) return Support::no(a.reason);
    return Support::yes();
  }

  int64_t workspace_estimate(const Spec& s, const Settings&) const override {
    const auto esize = static_cast<int64_t>(dtype_bytes(s.dtype));
    int64_t total = 0;
    // Backward: PyTorch's gradients beside the harness's (their copy is the publish step's).
    if (s.mode != Mode::fwd) total += (s.q_elems() + s.k_elems() + s.v_elems()) * esize;
    const int64_t scores = s.batch * s.q_heads * s.q_len * s.kv_len;
    // Unfused paths hold N x N intermediates: the naive recipe the scores and probabilities in
    // the input dtype, the math backend fp32 copies of both (and their gradients in backward).
    if (backend_ == Backend::naive) total += 2 * scores * esize;
    if (backend_ == Backend::math) total += 2 * scores * 4;
    if (s.mode != Mode::fwd && (backend_ == Backend::naive || backend_ == Backend::math)) {
      total += 2 * scores * 4;
    }
    return total;
  }

  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io& io) override {
    if (Support ok = supports(spec, device); !ok.ok) throw NotSupported(ok.reason);
    if (backend_ == Backend::naive) return prepare_naive(spec, device, ctx, io);
    return prepare_sdpa(backend_, spec, device, ctx, io);
  }

 private:
  ProviderTraits traits_;
  Backend backend_;
};

}  // namespace

std::unique_ptr<Provider> make_provider(ProviderTraits traits, Backend backend) {
  return std::make_unique<TorchProvider>(std::move(traits), backend);
}

}  // namespace attnprof::torchp
