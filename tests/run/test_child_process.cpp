// The supervisor's view of a child: lines in and out, the last stderr lines, how it ended, a
// deadline, and a write to a dead child that fails without killing the writer.
#include <gtest/gtest.h>

#include <chrono>

#include "attnprof/child_process.hpp"

namespace attnprof {
namespace {

using std::chrono::milliseconds;

ChildProcess sh(const std::string& script) {
  return ChildProcess({"/bin/sh", "-c", script});
}

ChildProcess::Clock::time_point in(milliseconds ms) {
  return ChildProcess::Clock::now() + ms;
}

TEST(ChildProcess, LinesStderrAndExitStatus) {
  ChildProcess c = sh("read x; echo \"got $x\"; echo 'last words' >&2; exit 3");
  ASSERT_TRUE(c.write_line("ping"));
  std::string line;
  ASSERT_EQ(c.read_line(line, in(milliseconds(10000)), nullptr), ChildProcess::Wait::line);
  EXPECT_EQ(line, "got ping");
  EXPECT_EQ(c.read_line(line, in(milliseconds(10000)), nullptr), ChildProcess::Wait::eof);
  const int status = c.reap(milliseconds(5000));
  EXPECT_EQ(describe_wait_status(status), "exited with status 3");
  EXPECT_EQ(c.stderr_tail(), std::vector<std::string>{"last words"});
  EXPECT_FALSE(c.killed_here());
}

// Every stderr line reaches the handler as it comes, whole (a GPU's share relays them all);
// the tail keeps the non-blank ones, each cut to kStderrLineChars.
TEST(ChildProcess, EveryStderrLineReachesTheHandlerWhole) {
  ChildProcess c = sh("echo one >&2; echo >&2; printf '%0500d\\n' 0 >&2; echo done");
  std::vector<std::string> seen;
  c.on_stderr_line([&](const std::string& l) { seen.push_back(l); });
  std::string line;
  ASSERT_EQ(c.read_line(line, in(milliseconds(10000)), nullptr), ChildProcess::Wait::line);
  EXPECT_EQ(c.read_line(line, in(milliseconds(10000)), nullptr), ChildProcess::Wait::eof);
  c.reap(milliseconds(5000));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], "one");
  EXPECT_EQ(seen[1], "");
  EXPECT_EQ(seen[2], std::string(500, '0'));
  const auto tail = c.stderr_tail();
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[1].size(), ChildProcess::kStderrLineChars + 3);  // and "..."
}

TEST(ChildProcess, ASignalIsNamed) {
  ChildProcess c = sh("kill -SEGV $$");
  std::string line;
  EXPECT_EQ(c.read_line(line, in(milliseconds(10000)), nullptr), ChildProcess::Wait::eof);
  const std::string what = describe_wait_status(c.reap(milliseconds(5000)));
  EXPECT_EQ(what.rfind("killed by SIGSEGV (Segmentation fault)", 0), 0u) << what;
  EXPECT_EQ(signal_name(SIGABRT), "SIGABRT");
}

TEST(ChildProcess, ADeadlineAndAStopEndTheWaitAndTheChildCanBeKilled) {
  ChildProcess c = sh("sleep 30");
  std::string line;
  const auto t0 = ChildProcess::Clock::now();
  EXPECT_EQ(c.read_line(line, in(milliseconds(100)), nullptr), ChildProcess::Wait::timeout);
  EXPECT_EQ(c.read_line(line, in(milliseconds(10000)), [] { return true; }),
            ChildProcess::Wait::stopped);
  EXPECT_LT(ChildProcess::Clock::now() - t0, milliseconds(5000));
  EXPECT_EQ(describe_wait_status(c.kill_and_reap()).rfind("killed by SIGKILL", 0), 0u);
  EXPECT_TRUE(c.killed_here());
}

TEST(ChildProcess, WritingToADeadChildFailsWithoutKillingTheWriter) {
  ChildProcess c = sh("exit 0");
  c.reap(milliseconds(5000));
  // With SIGPIPE at its default action, this process would die here if it were not absorbed.
  EXPECT_FALSE(c.write_line("anyone there?"));
  EXPECT_FALSE(c.write_line("still?"));
}

TEST(ChildProcess, OnlyTheLastStderrLinesAreKept) {
  ChildProcess c = sh("i=1; while [ $i -le 50 ]; do echo line$i >&2; i=$((i+1)); done; echo done");
  std::string line;
  ASSERT_EQ(c.read_line(line, in(milliseconds(10000)), nullptr), ChildProcess::Wait::line);
  c.reap(milliseconds(5000));
  const auto tail = c.stderr_tail();
  ASSERT_EQ(tail.size(), ChildProcess::kStderrLines);
  EXPECT_EQ(tail.front(), "line31");
  EXPECT_EQ(tail.back(), "line50");
  c.clear_stderr();
  EXPECT_TRUE(c.stderr_tail().empty());
}

}  // namespace
}  // namespace attnprof
