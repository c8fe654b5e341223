// test.oom: cpu.naive on a pretend device with a 256 KiB budget for the attention scores, all
// heads at once (B * Hq * Nq * Nk fp32). Points within it run cpu.naive and pass; larger ones
// throw OutOfMemory from prepare(), as an allocator that ran out would. Tests the oom status
// and the rule that skips larger sizes of the series after an oom.
#include <fmt/format.h>

#include "providers/factories.hpp"

namespace attnprof {
namespace {

constexpr int64_t kScoreBudgetBytes = 256 * 1024;

class OomProvider final : public Provider {
 public:
  OomProvider() : naive_(make_cpu_naive()) {}
  ProviderTraits traits() const override {
    ProviderTraits t = naive_->traits();
    t.name = "test.oom";
    t.description =
        "fault injection: cpu.naive with a 256 KiB budget for its scores; out of memory above";
    t.family = Family::test;
    t.in_default_set = false;
    t.role = Role::none;
    return t;
  }
  Support supports(const Spec& spec, const Device& device) const override {
    return naive_->supports(spec, device);
  }
  int64_t workspace_estimate(const Spec& spec, const Settings& settings) const override {
    return naive_->workspace_estimate(spec, settings);
  }
  std::unique_ptr<Run> prepare(const Spec& spec, const Device& device, const PrepareContext& ctx,
                               const Io& io) override {
    const double scores = 4.0 * static_cast<double>(spec.batch) *
                          static_cast<double>(spec.q_heads) * static_cast<double>(spec.q_len) *
                          static_cast<double>(spec.kv_len);
    if (scores > kScoreBudgetBytes) {
      throw OutOfMemory(fmt::format(
          "test.oom: out of memory allocating {:.1f} KiB of attention scores ({} KiB free)",
          scores / 1024, kScoreBudgetBytes / 1024));
    }
    return naive_->prepare(spec, device, ctx, io);
  }

 private:
  std::unique_ptr<Provider> naive_;
};

}  // namespace

std::unique_ptr<Provider> make_test_oom() {
  return std::make_unique<OomProvider>();
}

}  // namespace attnprof
