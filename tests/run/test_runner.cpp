// The runner turns everything a provider does into a status: passed, incorrect (wrong numbers,
// unwritten outputs), not_supported, oom, failed. Fake providers wrap cpu.reference's correct run.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <new>
#include <stdexcept>

#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/sweep.hpp"
#include "wrapped_provider.hpp"

namespace attnprof {
namespace {

enum class Plant {
  none,
  wrong_value,
  leave_nan,
  throw_in_launch,
  not_supported_in_prepare,
  huge_estimate,
  wrong_after_first,
  library_error,
  host_oom,
};

// cpu.reference's run, then the planted fault on the harness's outputs (host floats).
class FaultyRun final : public test::WrappedRun {
 public:
  FaultyRun(std::unique_ptr<Run> inner, Plant f) : WrappedRun(std::move(inner)), plant_(f) {}
  void launch(Stream& s, const Io& io) override {
    if (plant_ == Plant::throw_in_launch) throw std::runtime_error("kernel exploded");
    if (plant_ == Plant::library_error) throw FaultError(Fault::library, "libfoo: status 7");
    if (plant_ == Plant::host_oom) throw std::bad_alloc();
    ++launches_;
    WrappedRun::launch(s, io);
    float* o = io.o.as<float>();
    if (plant_ == Plant::wrong_value || (plant_ == Plant::wrong_after_first && launches_ > 1))
      o[io.o.elems() / 2] += 1.0f;
    if (plant_ == Plant::leave_nan) o[io.o.elems() - 1] = std::nanf("");
  }

 private:
  Plant plant_;
  int launches_ = 0;
};

class FaultyProvider final : public test::WrappedProvider {
 public:
  explicit FaultyProvider(Plant f)
      : WrappedProvider("cpu.reference", "test.faulty." + std::to_string(int(f)),
                        "cpu.reference with a planted fault"),
        plant_(f) {}
  int64_t workspace_estimate(const Spec& s, const Settings& settings) const override {
    return plant_ == Plant::huge_estimate ? (int64_t{1} << 62)
                                          : WrappedProvider::workspace_estimate(s, settings);
  }

 private:
  std::unique_ptr<Run> wrap(std::unique_ptr<Run> inner, const Io&) override {
    if (plant_ == Plant::not_supported_in_prepare) throw NotSupported("library says no");
    return std::make_unique<FaultyRun>(std::move(inner), plant_);
  }
  Plant plant_;
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

Result run_with(Plant f, PointHooks* hooks = nullptr) {
  FaultyProvider p(f);
  auto engine = make_cpu_engine(1);
  return run_point(small(), p, *engine, quick(), hooks);
}

TEST(Runner, HealthyPointPassesWithTimingAndMemory) {
  const Result r = run_with(Plant::none);
  EXPECT_EQ(r.status, Status::passed) << r.reason;
  EXPECT_GT(r.timing.median_us, 0);
  EXPECT_GE(r.timing.samples, 3);
  EXPECT_GT(r.tflops, 0);
  EXPECT_GT(r.memory.peak_bytes, 0);
  EXPECT_TRUE(r.verify.checked);
  EXPECT_FALSE(r.flop_convention.empty());
}

TEST(Runner, WrongValueIsIncorrect) {
  const Result r = run_with(Plant::wrong_value);
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("verification failed"), std::string::npos) << r.reason;
}

TEST(Runner, UnwrittenOutputIsIncorrect) {
  const Result r = run_with(Plant::leave_nan);
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_GT(r.verify.nan_count, 0);
}

TEST(Runner, WrongOnlyUnderRepetitionIsCaughtByTheLastTimedCheck) {
  const Result r = run_with(Plant::wrong_after_first);
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_NE(r.reason.find("last timed run"), std::string::npos) << r.reason;
}

TEST(Runner, ThrowingProviderIsFailedWithItsWords) {
  const Result r = run_with(Plant::throw_in_launch);
  EXPECT_EQ(r.status, Status::failed);
  EXPECT_EQ(r.fault, Fault::provider);  // an untyped exception: the provider's own error
  EXPECT_EQ(r.reason, "kernel exploded");
  EXPECT_EQ(r.provider, "test.faulty.3");
  EXPECT_EQ(r.traits.family, Family::test);  // the row records what the provider declared
}

TEST(Runner, FaultsAreClassifiedWhereTheyAreCaught) {
  const Result lib = run_with(Plant::library_error);
  EXPECT_EQ(lib.status, Status::failed);
  EXPECT_EQ(lib.fault, Fault::library);
  const Result host = run_with(Plant::host_oom);
  EXPECT_EQ(host.status, Status::oom);
  EXPECT_EQ(host.fault, Fault::oom);
  EXPECT_EQ(run_with(Plant::wrong_value).fault, Fault::none);  // incorrect is a verdict
  EXPECT_EQ(run_with(Plant::none).fault, Fault::none);
}

TEST(Runner, LibraryRejectionIsNotSupported) {
  const Result r = run_with(Plant::not_supported_in_prepare);
  EXPECT_EQ(r.status, Status::not_supported);
  EXPECT_EQ(r.fault, Fault::not_supported);
  EXPECT_EQ(r.reason, "library says no");
}

TEST(Runner, EstimateBeyondTheDeviceIsOomWithoutRunning) {
  const Result r = run_with(Plant::huge_estimate);
  EXPECT_EQ(r.status, Status::oom);
  EXPECT_EQ(r.fault, Fault::oom);
  EXPECT_NE(r.reason.find("GiB"), std::string::npos);
}

TEST(Runner, AnInvalidSpecIsRefusedWithTheFieldNamed) {
  FaultyProvider p(Plant::none);
  auto engine = make_cpu_engine(1);
  Spec s = small();
  s.kv_heads = 3;  // does not divide q_heads
  const Result r = run_point(s, p, *engine, quick());
  EXPECT_EQ(r.status, Status::not_supported);
  EXPECT_EQ(r.fault, Fault::invalid);
  EXPECT_NE(r.reason.find("kv_heads"), std::string::npos) << r.reason;
  EXPECT_EQ(r.seed, quick().seed);
}

// Records the phases it sees; replaces sampling with two launches.
class Recorder final : public PointHooks {
 public:
  void around(const std::function<void()>& body) override {
    seen += "[";
    body();
    seen += "]";
  }
  void begin(Phase p) override { seen += std::string(to_string(p)) + "("; }
  void end(Phase) override { seen += ")"; }
  bool measure(Run& run, PointTensors& t, Engine& e, Result&) override {
    run.launch(e.stream(), t.io());
    run.launch(e.stream(), t.io());
    return true;
  }
  void finish(Result& row) override { row.provider_note = seen; }
  std::string seen;
};

TEST(Runner, OneLifecycleWithHooksForWhatVaries) {
  Recorder hooks;
  const Result r = run_with(Plant::none, &hooks);
  EXPECT_EQ(r.status, Status::passed) << r.reason;
  EXPECT_EQ(r.provider_note, "[prepare()verify()warm-up()timed()verify-last()kernels()]");
  EXPECT_EQ(r.timing.samples, 0);  // the hook measured nothing
  // A failure ends the phases where it happened; finish() still sees the row.
  Recorder failing;
  const Result f = run_with(Plant::throw_in_launch, &failing);
  EXPECT_EQ(f.status, Status::failed);
  EXPECT_EQ(f.provider_note, "[prepare()verify(");
}

TEST(Runner, IndexWidthIsEnforced) {
  class Narrow final : public Provider {
   public:
    ProviderTraits traits() const override {
      ProviderTraits t;
      t.name = "test.narrow";
      t.description = "8-bit indexing";
      t.family = Family::test;
      return t;
    }
    int index_bits() const override { return 8; }
    Support supports(const Spec&, const Device&) const override { return Support::yes(); }
    int64_t workspace_estimate(const Spec&, const Settings&) const override { return 0; }
    std::unique_ptr<attnprof::Run> prepare(const Spec&, const Device&, const PrepareContext&,
                                           const Io&) override {
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
  FaultyProvider boom(Plant::throw_in_launch);
  FaultyProvider big(Plant::huge_estimate);
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
