// The runner turns everything a provider does into a status: passed, incorrect (wrong numbers,
// unwritten outputs), not_supported, oom, failed. Fake providers wrap cpu.reference's correct run.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/sweep.hpp"

namespace attnprof {
namespace {

enum class Fault {
  none,
  wrong_value,
  leave_nan,
  throw_in_launch,
  not_supported_in_prepare,
  huge_estimate,
  wrong_after_first
};

class FaultyRun final : public Run {
 public:
  FaultyRun(std::unique_ptr<Run> inner, Fault f) : inner_(std::move(inner)), fault_(f) {}
  void poison_outputs() override { inner_->poison_outputs(); }
  void launch(Stream& s) override {
    if (fault_ == Fault::throw_in_launch) throw std::runtime_error("kernel exploded");
    ++launches_;
    inner_->launch(s);
  }
  HostOutputs read_outputs() override {
    HostOutputs o = inner_->read_outputs();
    if (fault_ == Fault::wrong_value || (fault_ == Fault::wrong_after_first && launches_ > 1))
      o.o[o.o.size() / 2] += 1.0f;
    if (fault_ == Fault::leave_nan) o.o.back() = std::nanf("");
    return o;
  }
  int64_t allocated_bytes() const override { return inner_->allocated_bytes(); }

 private:
  std::unique_ptr<Run> inner_;
  Fault fault_;
  int launches_ = 0;
};

class FaultyProvider final : public Provider {
 public:
  explicit FaultyProvider(Fault f) : fault_(f), inner_(find_provider("cpu.reference")) {}
  std::string name() const override { return "test.faulty." + std::to_string(int(fault_)); }
  std::string description() const override { return "cpu.reference with a planted fault"; }
  DeviceKind device_kind() const override { return DeviceKind::cpu; }
  Support supports(const Spec& s, const Device& d) const override { return inner_->supports(s, d); }
  int64_t estimate_bytes(const Spec& s) const override {
    return fault_ == Fault::huge_estimate ? (int64_t{1} << 62) : inner_->estimate_bytes(s);
  }
  std::unique_ptr<Run> prepare(const Spec& s, const Device& d, const PrepareContext& c) override {
    if (fault_ == Fault::not_supported_in_prepare) throw NotSupported("library says no");
    return std::make_unique<FaultyRun>(inner_->prepare(s, d, c), fault_);
  }

 private:
  Fault fault_;
  Provider* inner_;
};

Spec small() {
  return {.batch = 1,
          .q_heads = 2,
          .kv_heads = 1,
          .q_len = 33,
          .kv_len = 33,
          .head_dim = 16,
          .dtype = DType::fp32,
          .mask = {MaskKind::causal_tl, 0}};
}

RunOptions quick() {
  RunOptions o;
  o.measure.rule.min_time_s = 0.001;
  o.measure.rule.timeout_s = 0.05;
  o.measure.rule.min_samples = 3;
  return o;
}

Result run_with(Fault f) {
  FaultyProvider p(f);
  auto engine = make_cpu_engine(1);
  return run_point(small(), p, *engine, quick());
}

TEST(Runner, HealthyPointPassesWithTimingAndMemory) {
  const Result r = run_with(Fault::none);
  EXPECT_EQ(r.status, Status::passed) << r.reason;
  EXPECT_GT(r.timing.median_us, 0);
  EXPECT_GE(r.timing.samples, 3);
  EXPECT_GT(r.tflops, 0);
  EXPECT_GT(r.memory.peak_bytes, 0);
  EXPECT_TRUE(r.verify.checked);
  EXPECT_FALSE(r.flop_convention.empty());
}

TEST(Runner, WrongValueIsIncorrect) {
  const Result r = run_with(Fault::wrong_value);
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("verification failed"), std::string::npos) << r.reason;
}

TEST(Runner, UnwrittenOutputIsIncorrect) {
  const Result r = run_with(Fault::leave_nan);
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_GT(r.verify.nan_count, 0);
}

TEST(Runner, WrongOnlyUnderRepetitionIsCaughtByTheLastTimedCheck) {
  const Result r = run_with(Fault::wrong_after_first);
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("last timed run"), std::string::npos) << r.reason;
}

TEST(Runner, ThrowingProviderIsFailedWithItsWords) {
  const Result r = run_with(Fault::throw_in_launch);
  EXPECT_EQ(r.status, Status::failed);
  EXPECT_EQ(r.reason, "kernel exploded");
  EXPECT_EQ(r.provider, "test.faulty.3");
}

TEST(Runner, LibraryRejectionIsNotSupported) {
  const Result r = run_with(Fault::not_supported_in_prepare);
  EXPECT_EQ(r.status, Status::not_supported);
  EXPECT_EQ(r.reason, "library says no");
}

TEST(Runner, EstimateBeyondTheDeviceIsOomWithoutRunning) {
  const Result r = run_with(Fault::huge_estimate);
  EXPECT_EQ(r.status, Status::oom);
  EXPECT_NE(r.reason.find("GiB"), std::string::npos);
}

TEST(Runner, IndexWidthIsEnforced) {
  class Narrow final : public Provider {
   public:
    std::string name() const override { return "test.narrow"; }
    std::string description() const override { return "8-bit indexing"; }
    DeviceKind device_kind() const override { return DeviceKind::cpu; }
    int index_bits() const override { return 8; }
    Support supports(const Spec&, const Device&) const override { return Support::yes(); }
    int64_t estimate_bytes(const Spec&) const override { return 0; }
    std::unique_ptr<attnprof::Run> prepare(const Spec&, const Device&,
                                           const PrepareContext&) override {
      throw std::logic_error("must not be prepared");
    }
  } narrow;
  auto engine = make_cpu_engine(1);
  const Result r = run_point(small(), narrow, *engine, quick());
  EXPECT_EQ(r.status, Status::not_supported);
  EXPECT_NE(r.reason.find("8-bit indexing"), std::string::npos) << r.reason;
}

class Collect final : public Sink {
 public:
  void write(const Result& r) override { rows.push_back(r); }
  std::vector<Result> rows;
};

TEST(Sweep, OneFailingPointNeverEndsTheSweepAndOomSkipsLargerSizes) {
  FaultyProvider boom(Fault::throw_in_launch);
  FaultyProvider big(Fault::huge_estimate);
  Provider* ref = find_provider("cpu.reference");
  std::vector<Spec> specs;
  for (int64_t n : {8, 16, 32}) {
    Spec s = small();
    s.q_len = s.kv_len = n;
    specs.push_back(s);
  }
  auto engine = make_cpu_engine(1);
  Collect sink;
  const auto points = plan_points(specs, {&boom, ref, &big});
  const SweepSummary sum = run_sweep(points, Engines{engine.get(), nullptr}, quick(), {&sink});
  ASSERT_EQ(sink.rows.size(), 9u);
  EXPECT_EQ(sum.count(Status::passed), 3);
  EXPECT_EQ(sum.count(Status::failed), 3);
  EXPECT_EQ(sum.count(Status::oom), 1);
  EXPECT_EQ(sum.count(Status::skipped), 2);
  EXPECT_EQ(sink.rows[5].status, Status::skipped);
  EXPECT_FALSE(sink.rows[1].env.empty());
}

}  // namespace
}  // namespace attnprof
