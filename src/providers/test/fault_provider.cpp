#include "providers/test/fault_provider.hpp"

#include <cstdlib>
#include <string_view>

namespace attnprof::test {

namespace {

// Holds nothing: the fault comes before there is anything to read back.
class FaultRun final : public Run {
 public:
  explicit FaultRun(FaultProvider& provider) : provider_(provider) {}
  void poison_outputs() override {}
  void launch(Stream&) override { provider_.fault(); }
  HostOutputs read_outputs() override { return {}; }
  int64_t allocated_bytes() const override { return 0; }

 private:
  FaultProvider& provider_;
};

}  // namespace

std::unique_ptr<Run> FaultProvider::prepare(const Spec&, const Device&, const PrepareContext&) {
  return std::make_unique<FaultRun>(*this);
}

}  // namespace attnprof::test

namespace attnprof {

bool test_providers_enabled() {
  const char* v = std::getenv("ATTNPROF_TEST_PROVIDERS");
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace attnprof
