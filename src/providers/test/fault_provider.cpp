#include "providers/test/fault_provider.hpp"

#include <cstdlib>
#include <string_view>

namespace attnprof::test {

namespace {

// Holds nothing: the fault comes before there is anything to read back.
class FaultRun final : public Run {
 public:
  explicit FaultRun(FaultProvider& provider) : provider_(provider) {}
  void launch(Stream&, const Io&) override { provider_.fault(); }

 private:
  FaultProvider& provider_;
};

}  // namespace

ProviderTraits FaultProvider::traits() const {
  ProviderTraits t;
  t.name = name_;
  t.description = description_;
  t.device = DeviceKind::cpu;
  t.family = Family::test;
  t.library = "attnprof";
  return t;
}

std::unique_ptr<Run> FaultProvider::prepare(const Spec&, const Device&, const PrepareContext&,
                                            const Io&) {
  return std::make_unique<FaultRun>(*this);
}

}  // namespace attnprof::test

namespace attnprof {

bool test_providers_enabled() {
  const char* v = std::getenv("ATTNPROF_TEST_PROVIDERS");
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace attnprof
