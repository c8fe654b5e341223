// A provider this build does not contain. It is listed by `attnprof list` with the reason, is
// never available, and every point asked of it is not_supported with that reason.
#include <stdexcept>

#include "providers/factories.hpp"

namespace attnprof {

namespace {

class UnbuiltProvider final : public Provider {
 public:
  UnbuiltProvider(std::string name, std::string description, DeviceKind kind, std::string reason)
      : name_(std::move(name)),
        description_(std::move(description)),
        kind_(kind),
        reason_(std::move(reason)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return description_; }
  DeviceKind device_kind() const override { return kind_; }
  Availability availability() const override { return {false, reason_}; }
  Support supports(const Spec&, const Device&) const override { return Support::no(reason_); }
  int64_t estimate_bytes(const Spec&) const override { return 0; }
  std::unique_ptr<Run> prepare(const Spec&, const Device&, const PrepareContext&) override {
    throw std::logic_error(name_ + ": " + reason_);
  }

 private:
  std::string name_, description_;
  DeviceKind kind_;
  std::string reason_;
};

}  // namespace

std::unique_ptr<Provider> make_unbuilt(std::string name, std::string description, DeviceKind kind,
                                       std::string reason) {
  return std::make_unique<UnbuiltProvider>(std::move(name), std::move(description), kind,
                                           std::move(reason));
}

}  // namespace attnprof
