// A sweep larger than one host (issue 18, "Many hosts"): `run --shard K/N` in N local processes
// at once, as srun or mpirun would start them, then `attnprof merge` of their journals: every
// point of the grid exactly once, and what merge refuses. And the split of a sweep's time.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "attnprof/journal.hpp"
#include "attnprof/sink.hpp"
#include "cli_runner.hpp"
#include "journal_dir.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;
using testing_cli::run_cli;

const std::string kGrid = testing_cli::kTenPointGrid + "--in-process ";

class ShardsCli : public testing_cli::JournalDirTest {
 protected:
  ShardsCli() : JournalDirTest("attnprof_cli_shards") {}
};

TEST_F(ShardsCli, ThreeProcessesAtOnceThenMergeGiveTheWholeGridOnce) {
  // Three shards started together, each its own process and journal.
  std::string script;
  for (int k = 0; k < 3; ++k) {
    script +=
        fmt::format("{} run {} --shard {}/3 --out {} > {} 2>&1 & ", ATTNPROF_TEST_BINARY, kGrid, k,
                    path(fmt::format("r{}.jsonl", k)), path(fmt::format("r{}.log", k)));
  }
  ASSERT_EQ(std::system(("(" + script + "wait)").c_str()), 0);
  std::multiset<std::string> seen;
  for (int k = 0; k < 3; ++k) {
    const auto mine = points(path(fmt::format("r{}.jsonl", k)));
    // Shapes 0 and 3 to shard 0, 1 and 4 to shard 1, 2 to shard 2: both providers of each.
    EXPECT_EQ(mine.size(), k == 2 ? 2u : 4u) << k;
    seen.insert(mine.begin(), mine.end());
  }
  const auto merged = run_cli("merge " + path("r0.jsonl") + " " + path("r1.jsonl") + " " +
                              path("r2.jsonl") + " --out " + path("all.jsonl"));
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_NE(merged.out.find("merged 10 rows of 3 journals"), std::string::npos) << merged.out;
  const auto whole = run_cli("run " + kGrid + " --out " + path("whole.jsonl"));
  ASSERT_EQ(whole.code, 0);
  // The last line splits the sweep's time (issue 18), and each measured row has its measure_s.
  EXPECT_NE(whole.out.find("time: "), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find(" s: setup "), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find(", measurement "), std::string::npos) << whole.out;
  for (const Result& r : read_journal(path("whole.jsonl")).rows) {
    ASSERT_TRUE(r.measure_s.has_value()) << r.provider << " " << r.spec.label();
    EXPECT_GT(*r.measure_s, 0);
  }
  const auto all = points(path("all.jsonl"));
  EXPECT_EQ(all, points(path("whole.jsonl")));  // the unsharded grid's points, each once
  EXPECT_EQ(all, seen);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
}

TEST_F(ShardsCli, MergeRefusesDuplicatesOtherBuildsAndAnExistingOutput) {
  ASSERT_EQ(run_cli("run " + kGrid + " --shard 0/2 --out " + path("a.jsonl")).code, 0);
  ASSERT_EQ(run_cli("run " + kGrid + " --shard 1/2 --out " + path("b.jsonl")).code, 0);
  // A shard merged twice: the first point named, exit 2, nothing written.
  const auto twice =
      run_cli("merge " + path("a.jsonl") + " " + path("a.jsonl") + " --out " + path("m.jsonl"));
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("has a row in"), std::string::npos) << twice.err;
  EXPECT_FALSE(fs::exists(path("m.jsonl")));
  // Another build: the commit of every row of b changed.
  {
    std::ifstream in(path("b.jsonl"));
    std::ofstream out(path("c.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      Result r = from_json_line(line);
      r.env["git_commit"] = "0123456789ab";
      out << to_json_line(r) << '\n';
    }
  }
  const auto builds =
      run_cli("merge " + path("a.jsonl") + " " + path("c.jsonl") + " --out " + path("m.jsonl"));
  EXPECT_EQ(builds.code, 2);
  EXPECT_NE(builds.err.find("different builds (git_commit"), std::string::npos) << builds.err;
  // An existing output is not overwritten without --force.
  ASSERT_EQ(
      run_cli("merge " + path("a.jsonl") + " " + path("b.jsonl") + " --out " + path("m.jsonl"))
          .code,
      0);
  const auto again =
      run_cli("merge " + path("a.jsonl") + " " + path("b.jsonl") + " --out " + path("m.jsonl"));
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.err.find("exists; --force replaces it"), std::string::npos) << again.err;
  EXPECT_EQ(run_cli("merge " + path("a.jsonl") + " " + path("b.jsonl") + " --out " +
                    path("m.jsonl") + " --force")
                .code,
            0);
  // A bad share is one line, before anything runs.
  for (const char* bad : {"2/2", "1", "-1/2", "0/0", "a/b"}) {
    const auto o = run_cli("run " + kGrid + " --shard " + std::string(bad));
    EXPECT_EQ(o.code, 2) << bad;
    EXPECT_NE(o.err.find("--shard: '"), std::string::npos) << o.err;
  }
}

}  // namespace
}  // namespace attnprof
