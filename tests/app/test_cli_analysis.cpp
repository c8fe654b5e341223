// The analysis commands end to end: tune finds a known boundary through the CLI, run records its
// history, report and compare take a journal or a run id, and every bad input is one line with
// exit code 2 (refused before any work: bad options, or data that cannot be used).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attnprof/journal.hpp"
#include "attnprof/sink.hpp"
#include "cli_runner.hpp"
#include "report/table.hpp"

namespace attnprof {
namespace {

using testing_cli::Outcome;
using testing_cli::run_cli;

class AnalysisCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("attnprof_cli_analysis_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs attnprof with ATTNPROF_HISTORY in this test's directory.
  Outcome cli(const std::string& args, const std::string& env = "") {
    return run_cli(args, fmt::format("ATTNPROF_HISTORY={} {}", db().string(), env));
  }

  std::filesystem::path db() const { return dir_ / "history.sqlite"; }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A tiny CPU run with a journal; recorded in the history.
  void tiny_run(const std::string& journal) {
    const Outcome o =
        cli("run --device cpu --in-process --providers cpu.naive,cpu.flash --seq "
            "16,32,64 --heads 2 --head-dim 16 --dtype fp32 --min-time 1ms "
            "--point-timeout 50ms --min-samples 3 --out " +
            path(journal));
    ASSERT_EQ(o.code, 0) << o.err;
  }

  std::filesystem::path dir_;
};

bool one_line_error(const Outcome& o) {
  return o.err.rfind("attnprof: error: ", 0) == 0 && o.err.find('\n') == o.err.size() - 1;
}

TEST_F(AnalysisCli, TuneFindsTheLargestBatchOfAKnownOomBoundary) {
  // test.oom runs out of memory above 256 KiB of fp32 scores: B * 1 head * 16 * 16 * 4 bytes.
  const Outcome o =
      cli("tune --device cpu --providers test.oom --heads 1 --seq 16 --head-dim 8 "
          "--dtype fp32 --max-memory 1GiB --min-time 1ms --point-timeout 20ms "
          "--min-samples 3 --no-trace --resolution 1 --json " +
              path("tune.json") + " --out " + path("tune.jsonl"),
          "ATTNPROF_TEST_PROVIDERS=1");
  ASSERT_EQ(o.code, 0) << o.err << o.out;
  const auto summary = nlohmann::json::parse(std::ifstream(path("tune.json")));
  EXPECT_EQ(summary["results"][0]["largest"].get<int64_t>(), 256);
  EXPECT_EQ(summary["results"][0]["boundary"].get<std::string>().rfind("batch 257: oom:", 0), 0u);
  const auto rows = read_journal(path("tune.jsonl")).rows;
  EXPECT_EQ(rows.size(), summary["results"][0]["curve"].size());
  EXPECT_NE(o.out.find("max batch"), std::string::npos) << o.out;

  // By default the boundary is resolved to 5% of the batch.
  const Outcome coarse =
      cli("tune --device cpu --providers test.oom --heads 1 --seq 16 --head-dim 8 "
          "--dtype fp32 --max-memory 1GiB --min-time 1ms --point-timeout 20ms "
          "--min-samples 3 --no-trace --json " +
              path("coarse.json"),
          "ATTNPROF_TEST_PROVIDERS=1");
  ASSERT_EQ(coarse.code, 0) << coarse.err << coarse.out;
  const auto c = nlohmann::json::parse(std::ifstream(path("coarse.json")))["results"][0];
  EXPECT_LE(c["largest"].get<int64_t>(), 256);
  EXPECT_GE(c["largest"].get<int64_t>(), 256 - 256 / 20);
}

TEST_F(AnalysisCli, TuneWithLimitsNoBatchMeetsSaysSoAndExitsZero) {
  const Outcome o =
      cli("tune --device cpu --providers cpu.naive --heads 1 --seq 16 --head-dim 8 "
          "--dtype fp32 --max-memory 1KiB --min-time 1ms --point-timeout 20ms "
          "--min-samples 3");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("no batch fits: batch 1: peak memory"), std::string::npos) << o.out;
}

// A grid with an impossible point (causal-br with q_len > kv_len) tunes the rest and says which
// was not tuned and why, as run marks such points not_supported and goes on.
TEST_F(AnalysisCli, TuneTunesThePossiblePointsOfAGrid) {
  const Outcome o =
      cli("tune --device cpu --providers cpu.naive --heads 1 --seq 64 --kv-seq 32,128 "
          "--head-dim 8 --dtype fp32 --mask causal-br --max-memory 64MiB --cap 4 --min-time 1ms "
          "--point-timeout 20ms --min-samples 3 --no-trace --json " +
          path("grid.json"));
  ASSERT_EQ(o.code, 0) << o.err << o.out;
  const auto results = nlohmann::json::parse(std::ifstream(path("grid.json")))["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0]["fits"].get<bool>());
  EXPECT_EQ(results[0]["boundary"].get<std::string>().rfind("not run: an impossible point: ", 0),
            0u)
      << results[0]["boundary"];
  EXPECT_EQ(results[1]["largest"].get<int64_t>(), 4);  // the cap
}

TEST_F(AnalysisCli, TuneUsageErrors) {
  for (const std::string& args :
       {std::string("tune --device cpu --providers cpu.naive"),           // no limit
        std::string("tune --device cpu --max-memory lots"),               // bad size
        std::string("tune --device cpu --p95 -3ms"),                      // bad time
        std::string("tune --device cpu --max-memory 1GiB --batch 4")}) {  // batch is searched
    const Outcome o = cli(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_TRUE(one_line_error(o)) << args << "\n" << o.err;
  }
}

TEST_F(AnalysisCli, RunIsRecordedAndReportAndCompareTakeRunIds) {
  tiny_run("a.jsonl");
  tiny_run("b.jsonl");
  const Outcome h = cli("history");
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find(path("a.jsonl")), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("     6       6"), std::string::npos) << h.out;  // points, passed

  const Outcome r = cli("report 1 --html " + path("r.html") + " --markdown " + path("r.md"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = [&] {
    std::ifstream in(path("r.md"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  EXPECT_NE(md.find("- Source: run 1 ("), std::string::npos) << md;
  // The answer first, provenance last.
  EXPECT_EQ(md.find("## The answer: fastest per shape class"), md.find("\n## ") + 1) << md;
  EXPECT_LT(md.find("## Findings"), md.find("## Provenance"));
  // The seeds' comparison says why a system has no rows in the words of `attnprof list` here.
  const Outcome list = cli("list --json");
  ASSERT_EQ(list.code, 0) << list.err;
  std::string trt_reason;
  for (std::istringstream lines(list.out); std::getline(lines, trt_reason);) {
    if (trt_reason.find("\"provider\":\"trt.fp16\"") != std::string::npos) break;
  }
  const std::string reason = nlohmann::json::parse(trt_reason).at("reason").get<std::string>();
  ASSERT_FALSE(reason.empty());
  EXPECT_NE(md.find("| TensorRT FP16 "), std::string::npos) << md;
  EXPECT_NE(md.find("unavailable: " + markdown_escape(reason)), std::string::npos) << md;

  // Several sources, a journal and a run id, are one report of all their rows.
  const Outcome both = cli("report " + path("b.jsonl") + " 1 --markdown " + path("both.md"));
  ASSERT_EQ(both.code, 0) << both.err;
  std::ifstream both_in(path("both.md"));
  std::stringstream both_md;
  both_md << both_in.rdbuf();
  EXPECT_NE(both_md.str().find("- Source: b.jsonl, run 1 ("), std::string::npos) << both_md.str();
  EXPECT_NE(both_md.str().find("- Rows: 12 (12 passed)"), std::string::npos) << both_md.str();

  const Outcome c = cli("compare 1 " + path("b.jsonl") + " --threshold 1000%");
  EXPECT_EQ(c.code, 2) << c.err;  // a threshold must be a fraction under 1
  // Run 1 recorded a.jsonl's rows: the same data through a file and a run id compares SAME
  // everywhere (two real timing runs on a busy machine could differ either way).
  const Outcome same =
      cli("compare " + path("a.jsonl") + " 1 --threshold 90% --fail-on-regression");
  EXPECT_EQ(same.code, 0) << same.err << same.out;
  EXPECT_NE(same.out.find("6 points compared"), std::string::npos) << same.out;
}

TEST_F(AnalysisCli, CompareFailsOnRegression) {
  tiny_run("a.jsonl");
  // Base: the run's rows with a quiet machine's noise (a busy host can make a real run's noise
  // as large as any change); B: every median 3x the base's, with the same noise.
  std::vector<Result> rows = read_journal(path("a.jsonl")).rows;
  {
    std::ofstream base(path("base.jsonl"));
    std::ofstream slow(path("slow.jsonl"));
    for (Result& r : rows) {
      r.timing.rel_noise = 0.004;
      r.timing.cv = 0.01;
      base << to_json_line(r) << '\n';
      r.timing.median_us *= 3;
      slow << to_json_line(r) << '\n';
    }
  }
  const Outcome o = cli("compare " + path("base.jsonl") + " " + path("slow.jsonl"));
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("6 SLOWER"), std::string::npos) << o.out;
  const Outcome f =
      cli("compare " + path("base.jsonl") + " " + path("slow.jsonl") + " --fail-on-regression");
  EXPECT_EQ(f.code, 1) << f.err;
  EXPECT_NE(f.err.find("regression: 6 SLOWER"), std::string::npos) << f.err;
}

TEST_F(AnalysisCli, BadInputIsOneClearLine) {
  tiny_run("a.jsonl");
  // An unknown run id and a missing file: usage errors.
  for (const std::string& args :
       {std::string("report 99 --html x.html"), std::string("compare 99 1"),
        std::string("report nothing.jsonl --markdown x.md"), std::string("report 1")}) {
    const Outcome o = cli(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_TRUE(one_line_error(o)) << args << "\n" << o.err;
  }
  // A journal with no passed rows: nothing to report on, refused before anything is written.
  {
    std::vector<Result> rows = read_journal(path("a.jsonl")).rows;
    std::ofstream out(path("failed.jsonl"));
    for (Result& r : rows) {
      r.status = Status::failed;
      out << to_json_line(r) << '\n';
    }
  }
  const Outcome none = cli("report " + path("failed.jsonl") + " --markdown " + path("x.md"));
  EXPECT_EQ(none.code, 2);
  EXPECT_FALSE(std::filesystem::exists(path("x.md")));
  EXPECT_TRUE(one_line_error(none)) << none.err;
  EXPECT_NE(none.err.find("no passed rows to report on (6 rows: 6 failed)"), std::string::npos);
  // A history from a newer schema.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &h), SQLITE_OK);
  sqlite3_exec(h, "UPDATE schema_version SET version = 7", nullptr, nullptr, nullptr);
  sqlite3_close(h);
  for (const std::string& args : {std::string("history"), std::string("report 1 --html x.html")}) {
    const Outcome o = cli(args);
    EXPECT_EQ(o.code, 2) << args;
    EXPECT_TRUE(one_line_error(o)) << args << "\n" << o.err;
    EXPECT_NE(o.err.find("schema version 7"), std::string::npos) << o.err;
  }
  // A run with the default history warns once and still runs; --history names it explicitly.
  const Outcome run =
      cli("run --device cpu --in-process --providers cpu.naive --seq 16 --heads 1 "
          "--head-dim 8 --dtype fp32 --min-time 1ms --point-timeout 20ms");
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("warning: this run is not recorded in the history"), std::string::npos);
  const Outcome strict =
      cli("run --device cpu --in-process --providers cpu.naive --seq 16 "
          "--heads 1 --head-dim 8 --dtype fp32 --history " +
          db().string());
  EXPECT_EQ(strict.code, 2);
  EXPECT_TRUE(one_line_error(strict)) << strict.err;
}

}  // namespace
}  // namespace attnprof
