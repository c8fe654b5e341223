// test.illegal_address (CUDA builds): the first launch runs a kernel that stores through a
// pointer into unmapped device memory. The synchronization after it fails with
// cudaErrorIllegalAddress, a sticky error: the row is failed with CUDA's words, and the worker
// answers poisoned, so the supervisor replaces it before the next point.
#include <cuda_runtime.h>

#include "measure/cuda/cuda_check.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

__global__ void store_through(float* p) {
  p[threadIdx.x] = 1.0f;
}

class IllegalAddressRun final : public Run {
 public:
  void poison_outputs() override {}
  void launch(Stream& stream) override {
    auto s = static_cast<cudaStream_t>(stream.native);
    // Far from any allocation; not null, so no compiler may assume it is never reached.
    auto* bogus = reinterpret_cast<float*>(uintptr_t{0xdead0000});
    store_through<<<1, 32, 0, s>>>(bogus);
    ATTNPROF_CUDA(cudaGetLastError());
    ATTNPROF_CUDA(cudaStreamSynchronize(s));
  }
  HostOutputs read_outputs() override { return {}; }
  int64_t allocated_bytes() const override { return 0; }
};

class IllegalAddressProvider final : public Provider {
 public:
  std::string name() const override { return "test.illegal_address"; }
  std::string description() const override {
    return "fault injection: a kernel storing to an unmapped device address (sticky error)";
  }
  DeviceKind device_kind() const override { return DeviceKind::cuda; }
  Support supports(const Spec&, const Device&) const override { return Support::yes(); }
  int64_t estimate_bytes(const Spec&) const override { return 0; }
  std::unique_ptr<Run> prepare(const Spec&, const Device&, const PrepareContext&) override {
    return std::make_unique<IllegalAddressRun>();
  }
};

}  // namespace

std::unique_ptr<Provider> make_test_illegal_address() {
  return std::make_unique<IllegalAddressProvider>();
}

}  // namespace attnprof
