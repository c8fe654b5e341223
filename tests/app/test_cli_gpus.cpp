// Every GPU of a host (issue 18): `run --gpus` runs one share of the grid per GPU as a child run
// and merges their journals. On the CPU, ATTNPROF_TEST_GPU_COUNT=N stands for N devices (the
// children run the CPU providers, not pinned to a GPU): the shares, the relayed lines, the merge,
// --resume and the refusals are what is tested here; the GPUs themselves are not.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "attnprof/journal.hpp"
#include "cli_runner.hpp"
#include "journal_dir.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;
using testing_cli::run_cli;

const std::string& kGrid = testing_cli::kTenPointGrid;
const std::string kTwoGpus = "ATTNPROF_TEST_GPU_COUNT=2";

class GpusCli : public testing_cli::JournalDirTest {
 protected:
  GpusCli() : JournalDirTest("attnprof_cli_gpus") {}
};

TEST_F(GpusCli, EachGpuRunsAShareAndTheJournalsAreMergedIntoOut) {
  const auto o =
      run_cli("run " + kGrid + " --gpus all --out=" + path("r.jsonl") + " --csv=" + path("r.csv"),
              kTwoGpus);
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("attnprof run --gpus all: 2 GPUs (0, 1)"), std::string::npos) << o.out;
  // Each share's command, built from the options the run was given (in whatever form), less
  // those the parent acts on: a command that redoes the share by hand.
  for (int g : {0, 1}) {
    const size_t at = o.out.find(fmt::format("  GPU {}: attnprof run --device cpu ", g));
    ASSERT_NE(at, std::string::npos) << o.out;
    const std::string line = o.out.substr(at, o.out.find('\n', at) - at);
    for (const char* given : {"--providers cpu.naive,cpu.flash", "--seq 16,32,48,64,80",
                              "--min-time 1ms", "--no-trace --"})
      EXPECT_NE(line.find(given), std::string::npos) << given << ": " << line;
    EXPECT_NE(line.find(fmt::format("--shard {}/2 --out {} --no-history", g,
                                    path(fmt::format("r.gpu{}.jsonl", g)))),
              std::string::npos)
        << line;
    for (const char* parent_only : {"--gpus", "--csv", "r.csv", "r.jsonl --"})
      EXPECT_EQ(line.find(parent_only), std::string::npos) << parent_only << ": " << line;
  }
  EXPECT_NE(o.out.find("[gpu 0] attnprof run: 3 shapes x 2 providers"), std::string::npos);
  EXPECT_NE(o.out.find("[gpu 1] attnprof run: 2 shapes x 2 providers"), std::string::npos);
  EXPECT_NE(o.out.find("merged 10 rows of 2 GPUs into " + path("r.jsonl")), std::string::npos);
  // Every provider of a shape on one GPU; the merged journal is the whole grid, each point once.
  const auto g0 = points(path("r.gpu0.jsonl")), g1 = points(path("r.gpu1.jsonl"));
  EXPECT_EQ(g0.size(), 6u);
  EXPECT_EQ(g1.size(), 4u);
  std::multiset<std::string> both = g0;
  both.insert(g1.begin(), g1.end());
  EXPECT_EQ(points(path("r.jsonl")), both);
  ASSERT_EQ(run_cli("run " + kGrid + " --in-process --out " + path("whole.jsonl")).code, 0);
  EXPECT_EQ(points(path("r.jsonl")), points(path("whole.jsonl")));
  int csv_lines = 0;
  std::ifstream csv(path("r.csv"));
  for (std::string line; std::getline(csv, line);) ++csv_lines;
  EXPECT_EQ(csv_lines, 11);  // the header and every merged row

  // An existing journal is kept without --resume or --force; --resume runs nothing new.
  const auto again = run_cli("run " + kGrid + " --gpus 2 --out " + path("r.jsonl"), kTwoGpus);
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
  const auto resumed =
      run_cli("run " + kGrid + " --gpus 2 --resume --out " + path("r.jsonl"), kTwoGpus);
  ASSERT_EQ(resumed.code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("[gpu 0] done: 0 of 6 points run (6 already in the journal)"),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(points(path("r.jsonl")), both);
}

TEST_F(GpusCli, OneGpuOfTwoRunsTheWholeGrid) {
  const auto o = run_cli("run " + kGrid + " --gpus 1, --out " + path("r.jsonl"), kTwoGpus);
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("[gpu 1] attnprof run: 5 shapes x 2 providers"), std::string::npos) << o.out;
  EXPECT_EQ(points(path("r.jsonl")).size(), 10u);
  EXPECT_TRUE(fs::exists(path("r.gpu1.jsonl")));
  EXPECT_FALSE(fs::exists(path("r.gpu0.jsonl")));
}

TEST_F(GpusCli, BadRequestsAreOneLineBeforeAnythingRuns) {
  const std::string out = " --out " + path("r.jsonl");
  struct Bad {
    std::string args, env, says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"--gpus 3" + out, kTwoGpus, "--gpus 3: this host has 2 CUDA devices (0..1)"},
           {"--gpus 0,2" + out, kTwoGpus, "no GPU 2"},
           {"--gpus 0,0" + out, kTwoGpus, "GPU 0 is named twice"},
           {"--gpus x" + out, kTwoGpus, "give all, a count"},
           {"--gpus 0" + out, kTwoGpus, "give all, a count"},
           {"--gpus a,1" + out, kTwoGpus, "'a' is not a GPU index"},
           {"--gpus 2", kTwoGpus, "--gpus needs --out FILE"},
           {"--gpus 2 --shard 0/2" + out, kTwoGpus, "drop --shard"},
           {"--gpus 2 --in-process" + out, kTwoGpus, "drop --in-process"},
           {"--gpus all" + out, "", "drop --device cpu"},
       }) {
    const auto o = run_cli("run " + kGrid + b.args, b.env);
    EXPECT_EQ(o.code, 2) << b.args;
    EXPECT_NE(o.err.find(b.says), std::string::npos) << b.args << ": " << o.err;
    EXPECT_FALSE(fs::exists(path("r.jsonl"))) << b.args;
  }
}

}  // namespace
}  // namespace attnprof
