// test.segv: the first launch writes to a page mapped without access, a real segmentation fault
// (not raise(SIGSEGV), and not a null store the compiler may turn into a trap). The supervisor
// records failed with SIGSEGV.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>

#include "providers/factories.hpp"
#include "providers/test/fault_provider.hpp"

namespace attnprof {
namespace {

class SegvProvider final : public test::FaultProvider {
 public:
  SegvProvider() : FaultProvider("test.segv", "fault injection: a store to an inaccessible page") {}
  [[noreturn]] void fault() override {
    void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) *static_cast<volatile int*>(page) = 1;
    std::fputs("test.segv: the store did not fault\n", stderr);
    std::abort();
  }
};

}  // namespace

std::unique_ptr<Provider> make_test_segv() {
  return std::make_unique<SegvProvider>();
}

}  // namespace attnprof
