// test.illegal_address (CUDA builds): the first launch runs a kernel that stores through a
// pointer into unmapped device memory. The synchronization after it fails with
// cudaErrorIllegalAddress, a sticky error: the row is failed with CUDA's words, and the worker
// answers poisoned, so the supervisor replaces it before the next point.
#include <cuda_runtime.h>

#include "cuda/cuda_check.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

__global__ void store_through(float* p) {
  p[threadIdx.x] = 1.0f;
}

class IllegalAddressRun final : public Run {
 public:
  void launch(Stream& stream, const Io&) override {
    auto s = static_cast<cudaStream_t>(stream.native);
    // Far from any allocation; not null, so no compiler may assume it is never reached.
    auto* bogus = reinterpret_cast<float*>(uintptr_t{0xdead0000});
    store_through<<<1, 32, 0, s>>>(bogus);
    ATTNPROF_CUDA(cudaGetLastError());
    ATTNPROF_CUDA(cudaStreamSynchronize(s));
  }
};

class IllegalAddressProvider final : public Provider {
 public:
  ProviderTraits traits() const override {
    ProviderTraits t;
    t.name = "test.illegal_address";
    t.description =
        "fault injection: a kernel storing to an unmapped device address (sticky error)";
    t.device = DeviceKind::cuda;
    t.family = Family::test;
    t.library = "attnprof";
    return t;
  }
  Support supports(const Spec&, const Device&) const override { return Support::yes(); }
  int64_t workspace_estimate(const Spec&, const Settings&) const override { return 0; }
  std::unique_ptr<Run> prepare(const Spec&, const Device&, const PrepareContext&,
                               const Io&) override {
    return std::make_unique<IllegalAddressRun>();
  }
};

}  // namespace

std::unique_ptr<Provider> make_test_illegal_address() {
  return std::make_unique<IllegalAddressProvider>();
}

}  // namespace attnprof
