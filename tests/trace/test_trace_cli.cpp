// `attnprof trace` end to end on the CPU: a CPU provider's phases to a Chrome trace, the
// one-line refusal where a CUDA provider cannot run, --ncu without ncu, and bad options.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_runner.hpp"

namespace attnprof {
namespace {

using testing_cli::Outcome;
using testing_cli::run_cli;

const std::string kPoint = " --batch 1 --heads 2 --seq 32 --head-dim 16 --dtype fp32 --threads 1 ";

TEST(TraceCli, CpuProvidersGivePhasesOnlyTraces) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("attnprof_trace_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto chrome = dir / "trace.json";
  const auto md = dir / "breakdown.md";
  const Outcome o = run_cli("trace --providers cpu.naive,cpu.flash" + kPoint + "--chrome " +
                            chrome.string() + " --breakdown " + md.string());
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("== cpu.naive"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("phases: prepare"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("timed"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("host only (CPU provider"), std::string::npos) << o.out;
  std::ifstream in(chrome);
  const nlohmann::json doc = nlohmann::json::parse(in);
  int phases = 0;
  std::set<int> pids;
  for (const auto& e : doc.at("traceEvents")) {
    pids.insert(e.at("pid").get<int>());
    if (e.at("ph") == "X") {
      EXPECT_EQ(e.at("cat"), "phase");
      ++phases;
    }
  }
  EXPECT_EQ(phases, 10);  // prepare, verify, warm-up, timed, verify-last x 2 providers
  EXPECT_EQ(pids, (std::set<int>{1, 2}));
  std::ifstream m(md);
  std::stringstream ss;
  ss << m.rdbuf();
  EXPECT_NE(ss.str().find("## cpu.flash"), std::string::npos) << ss.str();
  std::filesystem::remove_all(dir);
}

// Refused before anything is traced: exit 2, like every request that cannot start.
TEST(TraceCli, ACudaProviderWithoutAGpuIsOneLineAndExit2) {
  // Only meaningful where no CUDA device answers (CI, the CPU machine); skip elsewhere.
  const Outcome probe = run_cli("list");
  if (probe.out.find("cuda.naive") != std::string::npos &&
      probe.out.find("no CUDA") == std::string::npos &&
      probe.out.find("not built") == std::string::npos) {
    GTEST_SKIP() << "a CUDA device is present";
  }
  const Outcome o = run_cli("trace --providers cuda.naive" + kPoint + "--ncu");
  EXPECT_EQ(o.code, 2) << o.out << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  // The rule of every subcommand: a named provider that cannot run here, with the reason.
  EXPECT_EQ(o.err.rfind("attnprof: error: --providers: cuda.naive cannot run here: ", 0), 0u)
      << o.err;
}

TEST(TraceCli, NcuWithoutNcuSaysSoAndTracesAnyway) {
  const Outcome o = run_cli("trace --providers cpu.naive" + kPoint + "--ncu", "PATH=/nonexistent");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "--ncu: ncu not found on PATH\n");
  EXPECT_NE(o.out.find("== cpu.naive"), std::string::npos);
}

TEST(TraceCli, OnePointOnly) {
  const Outcome o = run_cli("trace --providers cpu.naive --seq 16,32");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("trace takes one shape per provider; the grid options give 2 points"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(run_cli("trace --seq 16").code, 2);  // --providers is required
}

}  // namespace
}  // namespace attnprof
