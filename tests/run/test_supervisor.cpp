// The supervisor with real workers (the attnprof binary): a sweep mixing a healthy provider with
// every fault provider completes, each fault row carries its status and reason, dead, hung and
// poisoned workers are replaced, healthy points share one worker.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "attnprof/registry.hpp"
#include "attnprof/supervisor.hpp"
#include "providers/factories.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

class Collect final : public Sink {
 public:
  void write(const Result& r) override { rows.push_back(r); }
  std::vector<Result> rows;
};

using testing_specs::sized;

RunOptions quick() {
  RunOptions o;
  o.measure.rule.min_time_s = 0.001;
  o.measure.rule.timeout_s = 0.05;
  o.measure.rule.min_samples = 3;
  o.threads = 1;
  return o;
}

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The worker is the attnprof binary; it lists the fault providers only with this set.
    ::setenv("ATTNPROF_TEST_PROVIDERS", "1", 1);
  }
  std::unique_ptr<Supervisor> start(double hang_timeout_s, const StopRequest* stop = nullptr) {
    SupervisorOptions so;
    so.executable = ATTNPROF_TEST_BINARY;
    so.device = "cpu";
    so.threads = 1;
    so.hang_timeout_s = hang_timeout_s;
    so.stop = stop;
    auto sup = std::make_unique<Supervisor>(so);
    const auto& engines = sup->start();
    EXPECT_EQ(engines.size(), 1u);
    EXPECT_EQ(engines.at(0).kind, DeviceKind::cpu);
    EXPECT_FALSE(engines.at(0).env.empty());
    sup->set_run_options(quick());
    return sup;
  }
};

TEST_F(SupervisorTest, ASweepWithEveryFaultProviderCompletes) {
#if defined(__SANITIZE_ADDRESS__)
  // Under ASan the worker's deliberate segfault would be caught by ASan's handler and reported
  // as "exit 1"; let it die of SIGSEGV as it does in a plain build (workers inherit this).
  setenv("ASAN_OPTIONS", "handle_segv=0", 1);
#endif
  std::vector<std::unique_ptr<Provider>> faults;
  faults.push_back(make_test_abort());
  faults.push_back(make_test_segv());
  faults.push_back(make_test_hang());
  faults.push_back(make_test_oom());
  faults.push_back(make_test_sticky());
  // cpu.naive last: the point after each fault runs on the replacement worker.
  std::vector<Provider*> providers;
  for (auto& f : faults) providers.push_back(f.get());
  providers.push_back(find_provider("cpu.naive"));
  // 256: test.oom's scores (512 KiB) exceed its 256 KiB budget.
  const auto points = plan_points({sized(16), sized(256)}, providers);
  auto sup = start(1.0);
  Collect sink;
  const SweepSummary sum = run_sweep(points, *sup, {&sink});
  ASSERT_EQ(sink.rows.size(), points.size());
  EXPECT_EQ(sum.stop_signal, 0);

  for (const Result& r : sink.rows) {
    const std::string& p = r.provider;
    SCOPED_TRACE(p + " " + r.spec.label() + ": " + r.reason);
    EXPECT_FALSE(r.env.empty());
    EXPECT_FALSE(r.started_at.empty());
    if (p == "cpu.naive") {
      EXPECT_EQ(r.status, Status::passed);
    } else if (p == "test.abort") {
      EXPECT_EQ(r.status, Status::failed);
      EXPECT_NE(r.reason.find("SIGABRT"), std::string::npos);
      EXPECT_NE(r.reason.find("last stderr: test.abort: assertion"), std::string::npos);
    } else if (p == "test.segv") {
      EXPECT_EQ(r.status, Status::failed);
      EXPECT_NE(r.reason.find("SIGSEGV"), std::string::npos);
    } else if (p == "test.hang") {
      EXPECT_EQ(r.status, Status::timeout);
      EXPECT_NE(r.reason.find("hang limit (1 s"), std::string::npos);
    } else if (p == "test.oom") {
      EXPECT_EQ(r.status, r.spec.q_len == 16 ? Status::passed : Status::oom);
      if (r.status == Status::oom) {
        EXPECT_NE(r.reason.find("out of memory"), std::string::npos);
      }
    } else if (p == "test.sticky") {
      EXPECT_EQ(r.status, Status::failed);
      EXPECT_NE(r.reason.find("cudaErrorIllegalAddress"), std::string::npos);
    }
  }
  // The first worker, then one after each abort, segv, hang and sticky error (two sizes each).
  EXPECT_EQ(sup->workers_started(), 1 + 4 * 2);
}

TEST_F(SupervisorTest, HealthyPointsShareOneWorker) {
  auto sup = start(30);
  Collect sink;
  const auto points =
      plan_points({sized(8), sized(16), sized(24), sized(32)}, {find_provider("cpu.naive")});
  const SweepSummary sum = run_sweep(points, *sup, {&sink});
  EXPECT_EQ(sum.count(Status::passed), 4);
  EXPECT_EQ(sup->workers_started(), 1);
}

// Field `key` of a test.group / test.pid note ("pid 123; LD_LIBRARY_PATH /a:/b").
std::string note_field(const std::string& note, const std::string& key) {
  const auto at = note.find(key + " ");
  if (at == std::string::npos) return "<missing>";
  const auto start = at + key.size() + 1;
  return note.substr(start, note.find(';', start) - start);
}

TEST_F(SupervisorTest, AWorkerGroupRunsInAWorkerOfItsOwnWithItsLibraryPathFirst) {
  const char* before = std::getenv("LD_LIBRARY_PATH");
  const std::string original = before ? before : "";
  const std::string parent_path = "/attnprof-parent/lib" + (original.empty() ? "" : ":" + original);
  ::setenv("LD_LIBRARY_PATH", parent_path.c_str(), 1);
  auto sup = start(30);
  Collect sink;
  const auto points =
      plan_points({sized(8), sized(16)}, {find_provider("test.pid"), find_provider("test.group")});
  ASSERT_EQ(points.size(), 4u);
  const SweepSummary sum = run_sweep(points, *sup, {&sink});
  if (before != nullptr) {
    ::setenv("LD_LIBRARY_PATH", original.c_str(), 1);
  } else {
    ::unsetenv("LD_LIBRARY_PATH");
  }
  ASSERT_EQ(sum.count(Status::passed), 4) << sink.rows.at(0).reason;
  std::map<std::string, std::set<std::string>> pids, paths;
  for (const Result& r : sink.rows) {
    pids[r.provider].insert(note_field(r.provider_note, "pid"));
    paths[r.provider].insert(note_field(r.provider_note, "LD_LIBRARY_PATH"));
  }
  // One worker per group, kept across points, neither of them this process.
  ASSERT_EQ(pids["test.pid"].size(), 1u);
  ASSERT_EQ(pids["test.group"].size(), 1u);
  EXPECT_NE(*pids["test.pid"].begin(), *pids["test.group"].begin());
  EXPECT_NE(*pids["test.pid"].begin(), std::to_string(::getpid()));
  EXPECT_EQ(sup->workers_started(), 2);
  // The group's library path first, then what the supervisor had; the default worker inherits.
  EXPECT_EQ(*paths["test.group"].begin(), std::string(kTestGroupLibraryPath) + ":" + parent_path);
  EXPECT_EQ(*paths["test.pid"].begin(), parent_path);
}

TEST_F(SupervisorTest, AStopAtOnceAbandonsThePointInFlight) {
  StopRequest stop;
  auto hang = make_test_hang();
  auto sup = start(60, &stop);
  std::thread second_signal([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.signal = SIGINT;
    stop.count = 2;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const std::optional<Result> r = sup->run({sized(16), hang.get(), {}});
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  second_signal.join();
  EXPECT_FALSE(r.has_value());
  EXPECT_LT(waited, 5.0);
}

TEST_F(SupervisorTest, AWorkerThatCannotStartIsOneClearError) {
  for (const char* exe : {"/nonexistent/attnprof", "/bin/false"}) {
    SupervisorOptions so;
    so.executable = exe;
    Supervisor sup(so);
    try {
      sup.start();
      ADD_FAILURE() << exe << " started";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("did not start"), std::string::npos) << what;
      EXPECT_NE(what.find(exe), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace attnprof
