// The host's load while a CPU point is sampled (src/measure/host_load.cpp): the share other
// processes used is computed from the host's and this process's CPU time, and a busy host makes
// the CPU engine flag its row noisy.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "attnprof/engine.hpp"
#include "measure/host_load.hpp"

namespace attnprof {
namespace {

TEST(HostLoad, OthersShareIsBusyTimeNotOurs) {
  const CpuTimes a{100, 1000, 40};
  // 1000 ticks passed; the host was busy 600 of them, 200 of which were ours.
  const CpuTimes b{700, 2000, 240};
  EXPECT_DOUBLE_EQ(others_busy_share(a, b), 0.4);
  // Nothing read (no /proc): no claim.
  EXPECT_EQ(others_busy_share(CpuTimes{}, CpuTimes{}), 0.0);
  // Our own time never makes the host look busy.
  EXPECT_EQ(others_busy_share(a, CpuTimes{400, 2000, 340}), 0.0);
}

TEST(HostLoad, ReadsThisMachine) {
  const CpuTimes t = read_cpu_times();
  EXPECT_GT(t.host_total, 0u);
  EXPECT_LE(t.host_busy, t.host_total);
  EXPECT_GE(load_average_1m(), 0.0);
}

// A run that sleeps: the host is as busy as the spinning threads below make it.
class SleepRun final : public Run {
 public:
  void launch(Stream&, const Io&) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
};

TEST(HostLoad, ABusyHostFlagsTheRowNoisy) {
  auto engine = make_cpu_engine(1);
  MeasureOptions o;
  o.rule.min_time_s = 0.3;
  o.rule.timeout_s = 1.0;
  SleepRun run;
  NoTensors none;
  // Other threads of this process count as ours; a busy host needs other processes. Spinning
  // children for a quarter of the host's hardware threads (at least one) keep it more than 10%
  // busy on any host, so the assertions below hold everywhere, large hosts included.
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const unsigned spinners = std::max(1u, (threads + 3) / 4);
  std::vector<pid_t> children;
  for (unsigned i = 0; i < spinners; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      volatile uint64_t x = 0;
      while (std::chrono::steady_clock::now() < end) x = x + 1;
      _exit(0);
    }
    children.push_back(child);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const TimingResult busy = engine->measure(run, none, o);
  for (const pid_t child : children) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  RecordProperty("host_busy", std::to_string(busy.host_busy));
  EXPECT_GT(busy.host_busy, kBusyHost) << spinners << " spinning of " << threads << " threads";
  EXPECT_TRUE(busy.noisy);
  EXPECT_NE(busy.stop_reason.find("host busy"), std::string::npos) << busy.stop_reason;
}

}  // namespace
}  // namespace attnprof
