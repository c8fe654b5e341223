// A provider this build does not contain. It is listed by `attnprof list` with its declared
// traits and the reason, is never available, and every point asked of it is not_supported with
// that reason.
#include <stdexcept>

#include "providers/factories.hpp"

namespace attnprof {

namespace {

class UnbuiltProvider final : public Provider {
 public:
  UnbuiltProvider(ProviderTraits traits, std::string reason)
      : traits_(std::move(traits)), reason_(std::move(reason)) {}
  ProviderTraits traits() const override { return traits_; }
  Availability availability() const override { return {false, reason_}; }
  Support supports(const Spec&, const Device&) const override { return Support::no(reason_); }
  int64_t workspace_estimate(const Spec&, const Settings&) const override { return 0; }
  std::unique_ptr<Run> prepare(const Spec&, const Device&, const PrepareContext&,
                               const Io&) override {
    throw std::logic_error(traits_.name + ": " + reason_);
  }

 private:
  ProviderTraits traits_;
  std::string reason_;
};

}  // namespace

std::unique_ptr<Provider> make_unbuilt(ProviderTraits traits, std::string reason) {
  return std::make_unique<UnbuiltProvider>(std::move(traits), std::move(reason));
}

}  // namespace attnprof
