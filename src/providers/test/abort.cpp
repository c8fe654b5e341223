// test.abort: the first launch prints an assertion-style line on stderr and calls abort(), like
// a failed assert or an uncaught exception in a library. The supervisor records failed with
// SIGABRT and that line.
#include <cstdio>
#include <cstdlib>

#include "providers/factories.hpp"
#include "providers/test/fault_provider.hpp"

namespace attnprof {
namespace {

class AbortProvider final : public test::FaultProvider {
 public:
  AbortProvider() : FaultProvider("test.abort", "fault injection: abort() in the first launch") {}
  [[noreturn]] void fault() override {
    std::fputs("test.abort: assertion `planted fault' failed; aborting\n", stderr);
    std::fflush(stderr);
    std::abort();
  }
};

}  // namespace

std::unique_ptr<Provider> make_test_abort() {
  return std::make_unique<AbortProvider>();
}

}  // namespace attnprof
