// The fault providers (test.abort, test.segv, test.hang): CPU providers that accept every spec
// and whose first launch does something no sweep may die of. They exist to test the supervisor
// (docs/method.md, "Faults and resume") and are in the registry only with
// ATTNPROF_TEST_PROVIDERS=1. Run them under the supervisor: in-process they do what they say.
#pragma once

#include <memory>
#include <string>

#include "attnprof/provider.hpp"

namespace attnprof::test {

class FaultProvider : public Provider {
 public:
  FaultProvider(std::string name, std::string description)
      : name_(std::move(name)), description_(std::move(description)) {}
  ProviderTraits traits() const override;
  Support supports(const Spec&, const Device&) const override { return Support::yes(); }
  int64_t workspace_estimate(const Spec&, const Settings&) const override { return 0; }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io& io) override;

  // What the first launch does; it does not return.
  [[noreturn]] virtual void fault() = 0;

 private:
  std::string name_, description_;
};

}  // namespace attnprof::test
