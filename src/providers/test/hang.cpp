// test.hang: the first launch never returns, like a kernel spinning on a flag nobody sets. The
// supervisor kills the worker at the hang limit and records timeout.
#include <chrono>
#include <thread>

#include "providers/factories.hpp"
#include "providers/test/fault_provider.hpp"

namespace attnprof {
namespace {

class HangProvider final : public test::FaultProvider {
 public:
  HangProvider() : FaultProvider("test.hang", "fault injection: the first launch never returns") {}
  [[noreturn]] void fault() override {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
};

}  // namespace

std::unique_ptr<Provider> make_test_hang() {
  return std::make_unique<HangProvider>();
}

}  // namespace attnprof
