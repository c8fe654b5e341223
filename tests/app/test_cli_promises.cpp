// The README's promises on the command line (issue 57): a request that cannot be met is refused
// before any work (one line, exit 2); a run that measured nothing says so and --fail-on-error
// fails it; quantities take units; options that would change nothing are refused or said to be
// ignored; run, tune and trace share one vocabulary (--device, --history) and record their runs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "attnprof/journal.hpp"
#include "cli_runner.hpp"
#include "journal_dir.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;
using testing_cli::Outcome;
using testing_cli::run_cli;

const std::string kTiny =
    " --device cpu --seq 16 --heads 2 --head-dim 16 --dtype fp32 --min-time 1ms "
    "--point-timeout 50ms --min-samples 3 --no-trace --no-history ";

class CliPromises : public testing_cli::JournalDirTest {
 protected:
  CliPromises() : JournalDirTest("attnprof_promises") {}
  static int64_t lines(const std::string& text) {
    return std::count(text.begin(), text.end(), '\n');
  }
};

// `--providers cudnn.sdpa` on a CPU run is a request that cannot be met: refused with list's
// reason before anything is written, not a sweep of not_supported rows that exits 0.
TEST_F(CliPromises, ANamedProviderThatCannotRunHereIsRefused) {
  const fs::path out = dir_ / "r.jsonl";
  for (const char* name : {"cudnn.sdpa", "cuda.decode"}) {
    const Outcome o = run_cli(
        fmt::format("run --providers {}{} --fail-on-error --out {}", name, kTiny, out.string()));
    EXPECT_EQ(o.code, 2) << o.out << o.err;
    EXPECT_EQ(lines(o.err), 1) << o.err;
    EXPECT_NE(o.err.find(fmt::format("--providers: {} cannot run here: ", name)), std::string::npos)
        << o.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // tune and trace follow the same rule.
  const Outcome tune = run_cli(
      "tune --providers cudnn.sdpa --device cpu --seq 16 --heads 2 "
      "--head-dim 16 --dtype fp32 --p95 1ms --no-history");
  EXPECT_EQ(tune.code, 2) << tune.err;
  EXPECT_NE(tune.err.find("--providers: cudnn.sdpa cannot run here"), std::string::npos)
      << tune.err;
  const Outcome trace = run_cli(
      "trace --device cpu --providers cuda.naive --seq 16 --heads 2 "
      "--head-dim 16 --dtype fp32 --no-history");
  EXPECT_EQ(trace.code, 2) << trace.err;
  EXPECT_NE(trace.err.find("--providers: cuda.naive cannot run here"), std::string::npos)
      << trace.err;
}

// A glob keeps what can run and says in one line what it left out.
TEST_F(CliPromises, AGlobLeavesOutWhatCannotRunAndSaysSo) {
  const fs::path out = dir_ / "r.jsonl";
  const Outcome o = run_cli("run --providers 'cpu.naive,cuda.*'" + kTiny + "--out " + out.string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("--providers 'cpu.naive,cuda.*' leaves out"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cuda.naive ("), std::string::npos) << o.err;
  const auto rows = read_journal(out).rows;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].provider, "cpu.naive");
  // Nothing the globs match can run: refused.
  const Outcome none = run_cli("run --providers 'cuda.*'" + kTiny);
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_NE(none.err.find("--providers: nothing 'cuda.*' matches can run here"), std::string::npos)
      << none.err;
}

// Every point not supported: the run says it measured nothing, and --fail-on-error fails it.
TEST_F(CliPromises, ARunInWhichNoPointPassedSaysSoAndFailOnErrorFailsIt) {
  const std::string args = "run --providers cpu.naive --mode bwd" + kTiny;
  const Outcome plain = run_cli(args);
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.err.find("no point passed: this run measured nothing"), std::string::npos)
      << plain.out << plain.err;
  const Outcome strict = run_cli(args + "--fail-on-error");
  EXPECT_EQ(strict.code, 1) << strict.err;
}

// A bare number for a quantity with a unit is refused, naming the units.
TEST_F(CliPromises, QuantitiesTakeUnits) {
  const std::string tune =
      "tune --providers cpu.naive --device cpu --seq 16 --heads 2 "
      "--head-dim 16 --dtype fp32 --no-history ";
  const Outcome p95 = run_cli(tune + "--p95 20");
  EXPECT_EQ(p95.code, 2) << p95.err;
  EXPECT_NE(p95.err.find("--p95: '20' has no unit (allowed: a number with ns, us, ms, s, min)"),
            std::string::npos)
      << p95.err;
  const Outcome memory = run_cli(tune + "--max-memory 40");
  EXPECT_EQ(memory.code, 2) << memory.err;
  EXPECT_NE(memory.err.find("--max-memory: '40' has no unit"), std::string::npos) << memory.err;
  const Outcome timeout = run_cli("run --providers cpu.naive" + kTiny + "--hang-timeout 400");
  EXPECT_EQ(timeout.code, 2) << timeout.err;
  EXPECT_NE(timeout.err.find("--hang-timeout: '400' has no unit"), std::string::npos)
      << timeout.err;
}

// A memory limit above the host's is searched within the host's memory, said in one line.
TEST_F(CliPromises, TuneKeepsAMemoryLimitWithinTheDevice) {
  const Outcome o = run_cli(
      "tune --providers cpu.naive --device cpu --seq 16 --heads 2 --head-dim 16 --dtype fp32 "
      "--max-memory 1000TiB --p95 200us --min-time 1ms --no-history");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("--max-memory 1024000.0 GiB is more than the host has ("), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("the search stays within it"), std::string::npos) << o.err;
}

// --set for a provider the run does not use would change nothing: refused.
TEST_F(CliPromises, ASettingForAProviderNotInTheRunIsRefused) {
  const Outcome o = run_cli("run --providers cpu.naive" + kTiny + "--set cuda.decode.split=8:2048");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--set cuda.decode.split=8:2048: cuda.decode is not among this run's "
                       "providers"),
            std::string::npos)
      << o.err;
}

// --timing and --clock time CUDA points; on a CPU-only run they are said to be ignored.
TEST_F(CliPromises, CudaOnlyOptionsOnACpuRunAreSaidToBeIgnored) {
  const Outcome o = run_cli("run --providers cpu.naive" + kTiny + "--timing graph --clock recover");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("--timing graph and --clock recover time CUDA points only; this run has "
                       "none"),
            std::string::npos)
      << o.err;
}

// One vocabulary: --device on peaks and trace as on run and tune.
TEST_F(CliPromises, PeaksAndTraceTakeDevice) {
  const Outcome trace = run_cli(
      "trace --device cpu --providers cpu.naive --seq 16 --heads 2 "
      "--head-dim 16 --dtype fp32 --no-history");
  EXPECT_EQ(trace.code, 0) << trace.err;
  EXPECT_NE(trace.out.find("== cpu.naive"), std::string::npos) << trace.out;
  const Outcome peaks = run_cli("peaks --device x");
  EXPECT_EQ(peaks.code, 2) << peaks.err;
  EXPECT_NE(peaks.err.find("--device"), std::string::npos) << peaks.err;
}

// The README says the history records every run: tune and trace too.
TEST_F(CliPromises, TuneAndTraceAreRecordedInTheHistory) {
  const fs::path db = dir_ / "history.sqlite";
  const std::string point = " --device cpu --seq 16 --heads 2 --head-dim 16 --dtype fp32 ";
  ASSERT_EQ(run_cli("tune --providers cpu.naive" + point +
                    "--p95 200us --min-time 1ms "
                    "--history " +
                    db.string())
                .code,
            0);
  ASSERT_EQ(run_cli("trace --providers cpu.naive" + point + "--history " + db.string()).code, 0);
  const Outcome h = run_cli("history --commands --history " + db.string());
  ASSERT_EQ(h.code, 0) << h.err;
  EXPECT_NE(h.out.find("attnprof tune "), std::string::npos) << h.out;
  EXPECT_NE(h.out.find("attnprof trace "), std::string::npos) << h.out;
}

// Console text: counts agree with their nouns; a long provider name does not shift its row.
TEST_F(CliPromises, ConsoleCountsAndColumns) {
  const Outcome o = run_cli("run --providers cpu.naive" + kTiny);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("attnprof run: 1 shape x 1 provider = 1 point on"), std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace attnprof
