// The CLI end to end: a tiny grid runs and its journal parses; every bad input exits 2 with one
// line naming the option and what is allowed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "attnprof/sink.hpp"

namespace attnprof {
namespace {

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome run_cli(const std::string& args) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto err_path = dir / ("attnprof_cli_err_" + std::to_string(::getpid()));
  const std::string cmd =
      std::string(ATTNPROF_TEST_BINARY) + " " + args + " 2>" + err_path.string();
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_path);
  std::stringstream ss;
  ss << e.rdbuf();
  o.err = ss.str();
  std::filesystem::remove(err_path);
  return o;
}

const std::string kQuick = " --min-time 1ms --point-timeout 50ms --min-samples 3 ";

TEST(Cli, TinyGridRunsAndTheJournalParses) {
  const auto journal = std::filesystem::temp_directory_path() / "attnprof_cli_test.jsonl";
  const auto md = std::filesystem::temp_directory_path() / "attnprof_cli_test.md";
  const Outcome o = run_cli(
      "run --device cpu --providers cpu.naive,cpu.flash --seq 16,33 --heads 4 "
      "--kv-heads 2 --head-dim 16 --dtype fp32,bf16 --mask causal --out " +
      journal.string() + " --markdown " + md.string() + kQuick);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto rows = read_journal(journal);
  ASSERT_EQ(rows.size(), 8u);
  for (const Result& r : rows) {
    EXPECT_EQ(r.status, Status::passed) << r.provider << " " << r.spec.label() << ": " << r.reason;
    EXPECT_EQ(r.spec.kv_heads, 2);
    EXPECT_GT(r.timing.median_us, 0);
    EXPECT_TRUE(r.verify.checked);
    EXPECT_FALSE(r.env.at("git_commit").empty());
  }
  EXPECT_TRUE(std::filesystem::file_size(md) > 0);
  EXPECT_NE(o.out.find("8 passed"), std::string::npos) << o.out;
  std::filesystem::remove(journal);
  std::filesystem::remove(md);
}

TEST(Cli, ListNamesEveryProviderWithAReasonWhenUnavailable) {
  const Outcome o = run_cli("list");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* name : {"cpu.reference", "cpu.naive", "cpu.flash", "cuda.naive", "cudnn.sdpa",
                           "torch.sdpa.flash"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
  EXPECT_NE(o.out.find("unavailable"), std::string::npos);
}

TEST(Cli, BadInputExitsTwoWithOneLine) {
  struct Case {
    const char* args;
    const char* expect;
  };
  const Case cases[] = {
      {"run --device cpu --seq 0", "q_len must be >= 1"},
      {"run --device cpu --seq abc", "--seq"},
      {"run --device cpu --batch -1", "batch must be >= 1"},
      {"run --device cpu --heads 4 --kv-heads 3", "kv_heads (3) must divide q_heads (4)"},
      {"run --device cpu --dtype fp8", "--dtype: 'fp8' is not one of fp32, fp16, bf16"},
      {"run --device cpu --mask diagonal", "--mask: 'diagonal' is not one of"},
      {"run --device cpu --mode sideways", "--mode"},
      {"run --device cpu --mask causal-br --seq 64 --kv-seq 32", "needs q_len <= kv_len"},
      {"run --device cpu --providers nope", "--providers: 'nope' matches no provider"},
      {"run --device cpu --preset nope", "--preset: unknown preset 'nope'"},
      {"run --device cpu --point-timeout 0", "--point-timeout"},
      {"run --device cpu --point-timeout -1s", "--point-timeout"},
      {"run --device cpu --max-noise 200%", "--max-noise"},
      {"run --device gpu", "--device"},
      {"run --device cpu --model gpt-5", "--model: unknown model"},
      {"run --bogus", "--bogus"},
      {"frobnicate", "unknown subcommand 'frobnicate'"},
  };
  for (const Case& c : cases) {
    const Outcome o = run_cli(c.args);
    EXPECT_EQ(o.code, 2) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << c.args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << c.args << ": " << o.err;
  }
}

}  // namespace
}  // namespace attnprof
