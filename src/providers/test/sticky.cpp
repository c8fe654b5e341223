// test.sticky: the first launch throws the error a CUDA provider throws after a sticky error
// (cudaErrorIllegalAddress), without a GPU. The row is failed with those words and the worker
// answers poisoned (protocol::poisons_worker), so the supervisor replaces it: the CPU-only test
// of that path. test.illegal_address is the real thing on a GPU.
#include "attnprof/fault.hpp"

#include "providers/factories.hpp"
#include "providers/test/fault_provider.hpp"

namespace attnprof {
namespace {

class StickyProvider final : public test::FaultProvider {
 public:
  StickyProvider()
      : FaultProvider("test.sticky",
                      "fault injection: throws a sticky device fault (worker replaced)") {}
  [[noreturn]] void fault() override {
    throw FaultError(Fault::sticky_device,
                     "test.sticky: cudaStreamSynchronize(s): cudaErrorIllegalAddress (an illegal "
                     "memory access was encountered) (simulated)");
  }
};

}  // namespace

std::unique_ptr<Provider> make_test_sticky() {
  return std::make_unique<StickyProvider>();
}

}  // namespace attnprof
