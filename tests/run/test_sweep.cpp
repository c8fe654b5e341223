// The sweep's bookkeeping, with a scripted executor: resume runs exactly the points without a row
// of the same build and device, the OOM skip rule holds across resume, a stop ends the sweep
// between points, and every row carries its fingerprint.
#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <set>

#include "attnprof/registry.hpp"
#include "attnprof/sweep.hpp"
#include "providers/factories.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

class ScriptedExecutor final : public Executor {
 public:
  bool has_engine(DeviceKind kind) const override { return kind == DeviceKind::cpu; }
  const Fingerprint& fingerprint(DeviceKind) override { return env; }
  const Fingerprint& fingerprint(const Provider&) override { return env; }
  std::optional<Result> run(const Point& pt) override {
    ran.push_back(pt.provider->name() + " " + std::to_string(pt.spec.q_len));
    if (on_run) return on_run(pt);
    Result r;
    r.provider = pt.provider->name();
    r.spec = pt.spec;
    r.status = Status::passed;
    return r;
  }
  Fingerprint env = {{"git_commit", "g1"}, {"device", "cpu: test"}};
  std::vector<std::string> ran;
  std::function<std::optional<Result>(const Point&)> on_run;
};

class Collect final : public Sink {
 public:
  void begin(int64_t total) override { begun_with = total; }
  void write(const Result& r) override { rows.push_back(r); }
  void end() override { ended = true; }
  int64_t begun_with = -1;
  std::vector<Result> rows;
  bool ended = false;
};

using testing_specs::sized;

Result journal_row(const Provider& p, int64_t n, Status status, const Fingerprint& env) {
  Result r;
  r.provider = p.name();
  r.spec = sized(n);
  r.status = status;
  r.env = env;
  return r;
}

TEST(Sweep, ResumeRunsOnlyThePointsWithoutARowOfThisBuildAndDevice) {
  Provider* naive = find_provider("cpu.naive");
  Provider* flash = find_provider("cpu.flash");
  const auto points = plan_points({sized(16), sized(32), sized(64)}, {naive, flash});
  ScriptedExecutor ex;
  Fingerprint other_build = ex.env;
  other_build["git_commit"] = "g0";
  const std::vector<Result> journal = {journal_row(*flash, 16, Status::passed, ex.env),
                                       journal_row(*naive, 64, Status::failed, ex.env),
                                       journal_row(*naive, 32, Status::passed, other_build)};
  Collect sink, replay;
  SweepControl control;
  control.journal = &journal;
  control.replay = {&replay};
  const SweepSummary sum = run_sweep(points, ex, {&sink}, control);
  EXPECT_EQ(ex.ran, (std::vector<std::string>{"cpu.naive 16", "cpu.naive 32", "cpu.flash 32",
                                              "cpu.flash 64"}));
  EXPECT_EQ(sum.total, 6);
  EXPECT_EQ(sum.resumed, 2);
  EXPECT_EQ(sink.begun_with, 4);
  EXPECT_EQ(sink.rows.size(), 4u);
  // The journal's rows of this sweep, in plan order, for sinks that cover the whole grid.
  ASSERT_EQ(replay.rows.size(), 2u);
  EXPECT_EQ(replay.rows[0].provider, "cpu.flash");
  EXPECT_EQ(replay.rows[1].status, Status::failed);
  for (const Result& r : sink.rows) EXPECT_EQ(r.env, ex.env);
}

TEST(Sweep, AnOomInTheJournalStillSkipsLargerSizesOfItsSeries) {
  auto oom = make_test_oom();
  Provider* naive = find_provider("cpu.naive");
  const auto points =
      plan_points({sized(16), sized(32), sized(64), sized(128)}, {oom.get(), naive});
  ScriptedExecutor ex;
  const std::vector<Result> journal = {journal_row(*oom, 16, Status::passed, ex.env),
                                       journal_row(*oom, 32, Status::oom, ex.env)};
  Collect sink;
  SweepControl control;
  control.journal = &journal;
  const SweepSummary sum = run_sweep(points, ex, {&sink}, control);
  EXPECT_EQ(ex.ran, (std::vector<std::string>{"cpu.naive 16", "cpu.naive 32", "cpu.naive 64",
                                              "cpu.naive 128"}));
  EXPECT_EQ(sum.count(Status::skipped), 2);
  for (const Result& r : sink.rows) {
    if (r.provider != "test.oom") continue;
    EXPECT_EQ(r.status, Status::skipped);
    EXPECT_NE(r.reason.find("ran out of memory"), std::string::npos);
    EXPECT_EQ(r.env, ex.env);  // so that a later resume finds it too
  }
}

TEST(Sweep, AnOomDuringTheSweepSkipsLargerSizesButNotSmallerOnes) {
  auto oom = make_test_oom();
  const auto points = plan_points({sized(64), sized(16), sized(128), sized(32)}, {oom.get()});
  ScriptedExecutor ex;
  ex.on_run = [](const Point& pt) {
    Result r;
    r.provider = pt.provider->name();
    r.spec = pt.spec;
    r.status = pt.spec.q_len >= 64 ? Status::oom : Status::passed;
    return r;
  };
  Collect sink;
  run_sweep(points, ex, {&sink});
  EXPECT_EQ(ex.ran, (std::vector<std::string>{"test.oom 64", "test.oom 16", "test.oom 32"}));
  ASSERT_EQ(sink.rows.size(), 4u);
  EXPECT_EQ(sink.rows[2].status, Status::skipped);
}

TEST(Sweep, APointPlannedTwiceRunsOnce) {
  Provider* naive = find_provider("cpu.naive");
  ScriptedExecutor ex;
  Collect sink;
  const SweepSummary sum = run_sweep(plan_points({sized(16), sized(16)}, {naive}), ex, {&sink});
  EXPECT_EQ(ex.ran.size(), 1u);
  EXPECT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(sum.resumed, 1);
}

TEST(Sweep, AStopRequestEndsTheSweepAfterThePointInFlight) {
  Provider* naive = find_provider("cpu.naive");
  StopRequest stop;
  ScriptedExecutor ex;
  ex.on_run = [&](const Point& pt) {
    stop.signal = SIGINT;  // as the handler would, while the point runs
    stop.count = 1;
    Result r;
    r.provider = pt.provider->name();
    r.spec = pt.spec;
    r.status = Status::passed;
    return r;
  };
  Collect sink, replay;
  const std::vector<Result> journal = {journal_row(*naive, 64, Status::passed, ex.env)};
  SweepControl control;
  control.stop = &stop;
  control.journal = &journal;
  control.replay = {&replay};
  const SweepSummary sum =
      run_sweep(plan_points({sized(16), sized(32), sized(64)}, {naive}), ex, {&sink}, control);
  EXPECT_EQ(ex.ran.size(), 1u);
  EXPECT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(sum.stop_signal, SIGINT);
  EXPECT_TRUE(sink.ended);
  // Journal rows after the stop still reach the sinks that cover the whole grid.
  EXPECT_EQ(replay.rows.size(), 1u);
}

TEST(Sweep, AnAbandonedPointHasNoRow) {
  Provider* naive = find_provider("cpu.naive");
  StopRequest stop;
  stop.count = 2;
  stop.signal = SIGTERM;
  ScriptedExecutor ex;
  ex.on_run = [](const Point&) { return std::nullopt; };
  Collect sink;
  // A stop already requested ends the sweep before its first point.
  SweepControl control;
  control.stop = &stop;
  EXPECT_EQ(run_sweep(plan_points({sized(16)}, {naive}), ex, {&sink}, control).stop_signal,
            SIGTERM);
  EXPECT_TRUE(ex.ran.empty());
  // An executor that abandons the point: no row, the sweep ends.
  stop.count = 0;
  control.stop = &stop;
  const SweepSummary sum =
      run_sweep(plan_points({sized(16), sized(32)}, {naive}), ex, {&sink}, control);
  EXPECT_EQ(ex.ran.size(), 1u);
  EXPECT_TRUE(sink.rows.empty());
  EXPECT_EQ(sum.stop_signal, SIGTERM);
}

TEST(Sweep, APointOfAKindWithoutAnEngineIsNotSupportedWithTheFingerprint) {
  Provider* cuda = find_provider("cuda.naive");
  ScriptedExecutor ex;
  Collect sink;
  run_sweep(plan_points({sized(16)}, {cuda}), ex, {&sink});
  EXPECT_TRUE(ex.ran.empty());
  ASSERT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(sink.rows[0].status, Status::not_supported);
  EXPECT_EQ(sink.rows[0].env, ex.env);
}

}  // namespace
}  // namespace attnprof
