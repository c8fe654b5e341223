#include "python/python_provider.hpp"

#include <stdexcept>

namespace attnprof::python {

namespace {

constexpr const char* kInProcess =
    "a Python provider runs in its Python worker: not with --in-process";

class PythonProvider final : public Provider {
 public:
  PythonProvider(ProviderInfo info, WorkerGroup group)
      : info_(std::move(info)), group_(std::move(group)) {}

  ProviderTraits traits() const override { return info_.traits; }
  Availability availability() const override { return {info_.available, info_.reason}; }
  WorkerGroup worker_group() const override { return group_; }
  Fingerprint fingerprint() const override { return info_.fingerprint; }
  // The worker asks Python when the point runs; here (the default set's choice, registry.hpp)
  // only the traits speak. Run in this process (--in-process), prepare() refuses it.
  Support supports(const Spec&, const Device&) const override { return Support::yes(); }
  int64_t workspace_estimate(const Spec&, const Settings&) const override { return 0; }
  std::unique_ptr<Run> prepare(const Spec&, const Device&, const PrepareContext&,
                               const Io&) override {
    throw NotSupported(kInProcess);
  }

 private:
  ProviderInfo info_;
  WorkerGroup group_;
};

}  // namespace

std::unique_ptr<Provider> make_python_provider(ProviderInfo info, WorkerGroup group) {
  return std::make_unique<PythonProvider>(std::move(info), std::move(group));
}

}  // namespace attnprof::python
