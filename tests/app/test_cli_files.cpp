// Files a user can trust (issue 12), end to end through the CLI: one section per guarantee, each
// a test that failed before it held.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "attnprof/journal.hpp"
#include "attnprof/sink.hpp"
#include "cli_runner.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;
using testing_cli::Outcome;
using testing_cli::run_cli;

const std::string kTiny =
    " --device cpu --in-process --providers cpu.naive --seq 16,32 --heads 1 --head-dim 8 "
    "--dtype fp32 --min-time 1ms --point-timeout 20ms --min-samples 3 --no-trace --no-history ";

class FilesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("attnprof_cli_files_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static bool one_line_error(const Outcome& o) {
    return o.err.rfind("attnprof: error: ", 0) == 0 && o.err.find('\n') == o.err.size() - 1;
  }

  // The cells of a CSV line without quoted fields.
  static std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');) out.push_back(cell);
    return out;
  }

  static std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // A passed, timed row with a quiet median: two journals of such rows compare SAME.
  static Result passed_row(const std::string& provider, int64_t seq) {
    Result r;
    r.provider = provider;
    r.status = Status::passed;
    r.spec.batch = 1;
    r.spec.q_heads = r.spec.kv_heads = 1;
    r.spec.q_len = r.spec.kv_len = seq;
    r.spec.head_dim = 8;
    r.spec.dtype = DType::fp32;
    r.timing.mode = "cpu-wall";
    r.timing.median_us = r.timing.p95_us = r.timing.mean_us = 100;
    r.timing.samples = 100;
    r.timing.rel_noise = 0.001;
    return r;
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }
  void write_rows(const std::string& name, const std::vector<Result>& rows) const {
    std::string text;
    for (const Result& r : rows) text += to_json_line(r) + "\n";
    write(name, text);
  }

  fs::path dir_;
};

// ---- 1. a rerun never truncates a journal ------------------------------------------------

TEST_F(FilesCli, AnExistingJournalIsRefusedUnlessResumedOrForced) {
  const std::string journal = path("r.jsonl");
  ASSERT_EQ(run_cli("run" + kTiny + "--out " + journal).code, 0);
  const std::string before = slurp(journal);
  ASSERT_EQ(read_journal(journal).rows.size(), 2u);

  const Outcome again = run_cli("run" + kTiny + "--out " + journal);
  EXPECT_EQ(again.code, 2) << again.err;
  EXPECT_TRUE(one_line_error(again)) << again.err;
  EXPECT_NE(again.err.find("--out " + journal +
                           ": the journal exists and is not empty; --resume continues it, "
                           "--force replaces it"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(slurp(journal), before);

  const Outcome resumed = run_cli("run" + kTiny + "--out " + journal + " --resume");
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("done: 0 of 2 points run (2 already in the journal)"),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(slurp(journal), before);

  const Outcome forced = run_cli("run" + kTiny + "--out " + journal + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(read_journal(journal).rows.size(), 2u);  // replaced, not appended to

  const Outcome both = run_cli("run" + kTiny + "--out " + journal + " --force --resume");
  EXPECT_EQ(both.code, 2);
  EXPECT_TRUE(one_line_error(both)) << both.err;

  // An empty journal holds nothing to lose.
  write("empty.jsonl", "");
  EXPECT_EQ(run_cli("run" + kTiny + "--out " + path("empty.jsonl")).code, 0);
}

TEST_F(FilesCli, TuneRefusesAnExistingJournalUnlessForced) {
  const std::string tune =
      "tune --device cpu --providers cpu.naive --heads 1 --seq 16 --head-dim 8 --dtype fp32 "
      "--max-memory 1KiB --min-time 1ms --point-timeout 20ms --min-samples 3 --out " +
      path("t.jsonl");
  write("t.jsonl", to_json_line(passed_row("cpu.naive", 16)) + "\n");
  const std::string before = slurp(path("t.jsonl"));
  const Outcome o = run_cli(tune);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(one_line_error(o)) << o.err;
  EXPECT_NE(o.err.find("the journal exists and is not empty; --force replaces it"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(slurp(path("t.jsonl")), before);
  const Outcome forced = run_cli(tune + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(slurp(path("t.jsonl")), before);
}

// ---- 2. one run per journal ----------------------------------------------------------------

// The test process holds the lock, as another run would: the CLI is refused at once, names the
// holder (this process) and writes nothing.
TEST_F(FilesCli, ALockedJournalIsRefusedNamingTheHolder) {
  const std::string journal = path("locked.jsonl");
  write("locked.jsonl", to_json_line(passed_row("cpu.naive", 16)) + "\n");
  const std::string before = slurp(journal);
  const int fd = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  for (const char* how : {"", " --resume", " --force"}) {
    const Outcome o = run_cli("run" + kTiny + "--out " + journal + how);
    EXPECT_EQ(o.code, 2) << how << ": " << o.err;
    EXPECT_TRUE(one_line_error(o)) << o.err;
    EXPECT_NE(
        o.err.find(fmt::format("--out: journal {} is in use by pid {} (", journal, ::getpid())),
        std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("test_app"), std::string::npos) << o.err;  // its command line
    EXPECT_EQ(o.out, "");
    EXPECT_EQ(slurp(journal), before);
  }
  ::close(fd);
  EXPECT_EQ(run_cli("run" + kTiny + "--out " + journal + " --resume").code, 0);
}

// ---- 3. outputs checked before any work ---------------------------------------------------

TEST_F(FilesCli, OutputsAreCheckedBeforeAnyWork) {
  fs::create_directories(dir_ / "sub");
  fs::create_symlink(dir_ / "a.jsonl", dir_ / "link.jsonl");
  write("plain.txt", "x");
  const std::string a = path("a.jsonl");
  const std::string trace =
      "trace --providers cpu.naive --batch 1 --heads 1 --seq 16 --head-dim 8 --dtype fp32 ";
  const std::string tune =
      "tune --device cpu --providers cpu.naive --heads 1 --seq 16 --head-dim 8 --dtype fp32 "
      "--max-memory 1KiB ";
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"run" + kTiny + "--out " + a + " --csv " + path("./a.jsonl"),
       fmt::format("--csv {}: the same file as --out {}", path("./a.jsonl"), a)},
      {"run" + kTiny + "--out " + a + " --markdown " + path("sub/../a.jsonl"),
       fmt::format("--markdown {}: the same file as --out {}", path("sub/../a.jsonl"), a)},
      {"run" + kTiny + "--out " + a + " --csv " + path("link.jsonl"),
       fmt::format("--csv {}: the same file as --out {}", path("link.jsonl"), a)},
      {"run" + kTiny + "--out " + a + " --csv " + path("nope/r.csv"),
       fmt::format("--csv {}: folder '{}' does not exist", path("nope/r.csv"), path("nope"))},
      {"run" + kTiny + "--out " + path("plain.txt/r.jsonl"),
       fmt::format("--out {}: '{}' is not a folder", path("plain.txt/r.jsonl"), path("plain.txt"))},
      {"run" + kTiny + "--markdown " + path("sub"),
       fmt::format("--markdown {}: is a folder", path("sub"))},
      {tune + "--out " + a + " --json " + path("./a.jsonl"),
       fmt::format("--json {}: the same file as --out {}", path("./a.jsonl"), a)},
      {tune + "--json " + path("nope/t.json"),
       fmt::format("--json {}: folder", path("nope/t.json"))},
      {trace + "--chrome " + path("t.json") + " --breakdown " + path("sub/../t.json"),
       fmt::format("--breakdown {}: the same file as --chrome", path("sub/../t.json"))},
      {trace + "--chrome " + path("nope/t.json"),
       fmt::format("--chrome {}: folder", path("nope/t.json"))},
      {"report " + path("plain.txt") + " --html " + path("nope/r.html"),
       fmt::format("--html {}: folder", path("nope/r.html"))},
      {"report " + path("plain.txt") + " --html " + path("r.html") + " --markdown " +
           path("r.html"),
       fmt::format("--markdown {}: the same file as --html", path("r.html"))},
      {"report " + path("plain.txt") + " --markdown " + path("./plain.txt"),
       fmt::format("--markdown {}: would overwrite the input journal {}", path("./plain.txt"),
                   path("plain.txt"))},
  };
  for (const Case& c : cases) {
    const Outcome o = run_cli(c.args);
    EXPECT_EQ(o.code, 2) << c.args << "\n" << o.err;
    EXPECT_TRUE(one_line_error(o)) << c.args << "\n" << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << c.args << "\n" << o.err;
    EXPECT_EQ(o.out, "") << c.args;  // before the first point: nothing ran
  }
  EXPECT_FALSE(fs::exists(a));
  EXPECT_EQ(slurp(path("plain.txt")), "x");
}

// Issue 40: an output onto an existing file a user wrote is refused without --force (seen:
// `--csv precious.jsonl` replaced another run's journal with CSV, exit 0).
TEST_F(FilesCli, AnExistingOutputIsReplacedOnlyWithForce) {
  write_rows("journal.jsonl", {passed_row("cpu.naive", 16), passed_row("cpu.naive", 32)});
  const std::string trace =
      "trace --providers cpu.naive --batch 1 --heads 1 --seq 16 --head-dim 8 --dtype fp32 ";
  const std::string tune =
      "tune --device cpu --providers cpu.naive --heads 1 --seq 16 --head-dim 8 --dtype fp32 "
      "--max-memory 1KiB --min-time 1ms --point-timeout 20ms --min-samples 3 ";
  const std::vector<std::string> commands = {
      "run" + kTiny + "--csv " + path("precious"),
      "run" + kTiny + "--markdown " + path("precious"),
      "report " + path("journal.jsonl") + " --html " + path("precious"),
      "report " + path("journal.jsonl") + " --markdown " + path("precious"),
      tune + "--json " + path("precious"),
      trace + "--chrome " + path("precious"),
      trace + "--breakdown " + path("precious"),
  };
  for (const std::string& args : commands) {
    write("precious", "a user's file\n");
    const Outcome refused = run_cli(args);
    EXPECT_EQ(refused.code, 2) << args << "\n" << refused.err;
    EXPECT_TRUE(one_line_error(refused)) << args << "\n" << refused.err;
    EXPECT_NE(refused.err.find("the file exists; --force replaces it"), std::string::npos)
        << args << "\n"
        << refused.err;
    EXPECT_EQ(slurp(path("precious")), "a user's file\n") << args;
    const Outcome forced = run_cli(args + " --force");
    EXPECT_NE(forced.code, 2) << args << " --force\n" << forced.err;
    EXPECT_NE(slurp(path("precious")), "a user's file\n") << args << " --force";
  }
}

// Issue 40: a place that takes no file is found before the first point, not after the sweep.
TEST_F(FilesCli, APlaceThatTakesNoFileIsFoundBeforeAnyWork) {
  struct Case {
    std::string path, expect;
  };
  for (const Case& c : {Case{"/proc/attnprof-x.csv", "cannot be created"},
                        Case{"/dev/full", "writes to it fail"}}) {
    const Outcome o = run_cli("run" + kTiny + "--csv " + c.path);
    EXPECT_EQ(o.code, 2) << c.path << "\n" << o.err;
    EXPECT_TRUE(one_line_error(o)) << o.err;
    EXPECT_NE(o.err.find("--csv " + c.path + ": " + c.expect), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "") << c.path;  // nothing ran
  }
  // A device that takes writes is an output like any other.
  EXPECT_EQ(run_cli("run" + kTiny + "--csv /dev/null").code, 0);
}

TEST_F(FilesCli, ARunRefusedAfterTakingTheJournalLeavesNoFile) {
  // The lock creates the journal; the grid is refused later: the empty file goes again.
  const Outcome o =
      run_cli("run --device cpu --in-process --no-history --providers no.such.provider --out " +
              path("new.jsonl"));
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_FALSE(fs::exists(path("new.jsonl")));
}

// ---- 4. compare counts points that vanished --------------------------------------------------

TEST_F(FilesCli, CompareFailsWhenPointsAreMissingFromTheNewRun) {
  std::vector<Result> base = {passed_row("cpu.naive", 16), passed_row("cpu.naive", 32),
                              passed_row("cpu.naive", 64)};
  Result unsupported = base[2];
  unsupported.status = Status::not_supported;
  unsupported.reason = "not here";
  unsupported.timing = {};
  write_rows("a.jsonl", base);
  write_rows("b.jsonl", {base[0], unsupported});  // N32 absent, N64 no longer passes
  const std::string args = "compare " + path("a.jsonl") + " " + path("b.jsonl");

  const Outcome plain = run_cli(args);
  EXPECT_EQ(plain.code, 0) << plain.err;
  const Outcome gate = run_cli(args + " --fail-on-regression");
  EXPECT_EQ(gate.code, 1) << gate.err;
  EXPECT_EQ(gate.err,
            "attnprof: regression: 0 SLOWER, 2 passed in A and are missing from B "
            "(--allow-missing accepts that)\n");
  EXPECT_NE(gate.out.find("2 points passed in A and have no passed row in B:\n"
                          "  cpu.naive B1 H1 N32 D8 fp32 none fwd: absent\n"
                          "  cpu.naive B1 H1 N64 D8 fp32 none fwd: not_supported\n"),
            std::string::npos)
      << gate.out;
  const Outcome allowed = run_cli(args + " --fail-on-regression --allow-missing");
  EXPECT_EQ(allowed.code, 0) << allowed.err;
}

// ---- 5. one reader for a journal torn by a kill -------------------------------------------

TEST_F(FilesCli, EveryReaderTakesATornLastRowTheSameWay) {
  const std::vector<Result> rows = {passed_row("cpu.naive", 16), passed_row("cpu.naive", 32)};
  const std::string third = to_json_line(passed_row("cpu.naive", 64));
  std::string text;
  for (const Result& r : rows) text += to_json_line(r) + "\n";
  write("torn.jsonl", text + third.substr(0, 60));  // kill -9 inside write(2)
  const std::string warning = fmt::format(
      "attnprof: warning: {}, line 3: dropping a partial last row (60 bytes", path("torn.jsonl"));

  const Outcome report =
      run_cli("report " + path("torn.jsonl") + " --markdown " + path("r.md"), "PATH=/nonexistent");
  EXPECT_EQ(report.code, 0) << report.err;
  EXPECT_EQ(report.err.rfind(warning, 0), 0u) << report.err;
  const Outcome compare = run_cli("compare " + path("torn.jsonl") + " " + path("torn.jsonl"));
  EXPECT_EQ(compare.code, 0) << compare.err;
  EXPECT_EQ(compare.err.rfind(warning, 0), 0u) << compare.err;
  EXPECT_NE(compare.out.find("2 points compared"), std::string::npos) << compare.out;
  const Outcome resume = run_cli("run" + kTiny + "--out " + path("torn.jsonl") + " --resume");
  EXPECT_EQ(resume.code, 0) << resume.err;
  EXPECT_EQ(resume.err.rfind(warning, 0), 0u) << resume.err;
}

// ---- 6. presets ----------------------------------------------------------------------------

TEST_F(FilesCli, BadPresetsAreOneLineNamingTheFileAndTheKey) {
  fs::create_directories(dir_ / "presets");
  std::ofstream(dir_ / "presets" / "typo.toml") << "sequence = 64\n[[series]]\nseq = 64\n";
  std::ofstream(dir_ / "presets" / "inner.toml") << "[[series]]\nseq = 64\nhead_dims = 8\n";
  std::ofstream(dir_ / "presets" / "empty.toml") << "[[series]]\nseq = []\n";
  std::ofstream(dir_ / "presets" / "nomodel.toml") << "[[series]]\nmodel = []\n";
  const std::string file = (dir_ / "presets").string();
  const std::string env = "ATTNPROF_PRESETS=" + file;
  for (const auto& [preset, expect] : std::vector<std::pair<std::string, std::string>>{
           {"typo", "typo.toml: unknown top-level key 'sequence'"},
           {"inner", "inner.toml: series 1: unknown key 'head_dims'"},
           {"empty", "empty.toml: series 1: 'seq' is empty"},
           {"nomodel", "nomodel.toml: series 1: 'model' is empty"}}) {
    const Outcome o = run_cli("run --device cpu --no-history --preset " + preset, env);
    EXPECT_EQ(o.code, 2) << preset << ": " << o.err;
    EXPECT_TRUE(one_line_error(o)) << o.err;
    EXPECT_NE(o.err.find("preset " + file + "/" + expect), std::string::npos) << o.err;
  }
}

// ---- 7. numeric options ----------------------------------------------------------------------

TEST_F(FilesCli, NumericOptionsSayWhatIsAllowedInAFewWords) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --device cpu --min-samples 0", "--min-samples: must be >= 1 (got 0)"},
      {"run --device cpu --warmup -1", "--warmup: must be >= 0 (got -1)"},
      {"run --device cpu --threads many", "--threads: must be a whole number (got 'many')"},
      {"run --device cpu --threads 99999999999",
       "--threads: must be <= 2147483647 (got 99999999999)"},
      {"run --device cpu --seed -1", "--seed: must be >= 0 (got -1)"},
      {"run --device cpu --seed 18446744073709551616",
       "--seed: must be <= 18446744073709551615 (got 18446744073709551616)"},
      {"run --device cpu --seed 0x10", "--seed: must be a whole number (got '0x10')"},
      {"tune --device cpu --max-memory 1GiB --cap 0", "--cap: must be >= 1 (got 0)"},
      {"tune --device cpu --max-memory 1GiB --resolution -3",
       "--resolution: must be >= 1 (got -3)"},
      {"tune --device cpu --max-memory 1GiB --seed -1", "--seed: must be >= 0 (got -1)"},
      {"trace --providers cpu.naive --launches 0", "--launches: must be >= 1 (got 0)"},
      {"trace --providers cpu.naive --launches 0", "--launches: must be >= 1 (got 0)"},
      {"trace --providers cpu.naive --seed 1.5", "--seed: must be a whole number (got '1.5')"},
      {"history --limit -1", "--limit: must be >= 0 (got -1)"},
      {"peaks --gpu x", "--gpu: must be a whole number (got 'x')"},
  };
  for (const auto& [args, expect] : cases) {
    const Outcome o = run_cli(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_EQ(o.err, "attnprof: error: " + expect + "\n") << args;
  }
}

// ---- 8. impossible points get rows; the rest runs ------------------------------------------

TEST_F(FilesCli, ImpossiblePointsAreNotSupportedAndTheRestRuns) {
  const Outcome o = run_cli(
      "run --device cpu --in-process --no-history --providers cpu.naive --seq 64 --kv-seq 32 "
      "--heads 1 --head-dim 8 --dtype fp32 --mask causal,causal-br --min-time 1ms "
      "--point-timeout 20ms --min-samples 3 --fail-on-error --out " +
      path("r.jsonl") + " --csv " + path("r.csv"));
  EXPECT_EQ(o.code, 0) << o.err;  // not_supported is not an error
  const auto rows = read_journal(path("r.jsonl")).rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, Status::passed) << rows[0].reason;
  EXPECT_EQ(rows[1].status, Status::not_supported);
  EXPECT_NE(rows[1].reason.find("needs q_len <= kv_len"), std::string::npos) << rows[1].reason;
  EXPECT_NE(slurp(path("r.csv")).find("cpu.naive,not_supported,"), std::string::npos);
  EXPECT_NE(o.out.find("not_supported"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("1 passed, 1 not_supported"), std::string::npos) << o.out;
}

// ---- 9. the seed is in the rows ---------------------------------------------------------------

TEST_F(FilesCli, RowsCarryTheirSeed) {
  const std::string max = std::to_string(std::numeric_limits<uint64_t>::max());
  const Outcome o = run_cli("run" + kTiny + "--seed " + max + " --out " + path("r.jsonl") +
                            " --csv " + path("r.csv"));
  ASSERT_EQ(o.code, 0) << o.err;
  for (const Result& r : read_journal(path("r.jsonl")).rows) {
    EXPECT_EQ(r.seed, std::numeric_limits<uint64_t>::max());
  }
  // The seed's column is found by its header: columns are appended after it over versions.
  std::istringstream csv(slurp(path("r.csv")));
  std::string header;
  std::string row;
  std::getline(csv, header);
  std::getline(csv, row);
  const std::vector<std::string> names = cells(header);
  const std::vector<std::string> values = cells(row);
  const auto at = std::find(names.begin(), names.end(), "seed");
  ASSERT_NE(at, names.end()) << header;
  const auto column = static_cast<size_t>(at - names.begin());
  ASSERT_LT(column, values.size()) << row;
  EXPECT_EQ(values[column], max) << row;
}

// Every axis is a column: a sweep over the layout alone writes a CSV with a layout column and two
// rows that differ there, and a Markdown table whose one spec column is the layout (before, both
// files printed two identical rows).
TEST_F(FilesCli, EveryAxisIsAColumnSoTwoPointsNeverPrintAlike) {
  const Outcome o = run_cli(
      "run --device cpu --in-process --no-history --no-trace --providers cpu.naive --seq 16 "
      "--heads 2 --head-dim 8 --dtype fp32 --layout bhsd,bshd --min-time 1ms --point-timeout 20ms "
      "--min-samples 3 --csv " +
      path("r.csv") + " --markdown " + path("r.md"));
  ASSERT_EQ(o.code, 0) << o.err;
  std::istringstream csv(slurp(path("r.csv")));
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << slurp(path("r.csv"));
  const std::vector<std::string> names = cells(lines[0]);
  for (const char* axis : {"layout", "scale", "shared_latent"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), axis), names.end()) << axis << ": " << lines[0];
  }
  const auto layout =
      static_cast<size_t>(std::find(names.begin(), names.end(), "layout") - names.begin());
  ASSERT_LT(layout, names.size());
  EXPECT_EQ(cells(lines[1]).at(layout), "bhsd") << lines[1];
  EXPECT_EQ(cells(lines[2]).at(layout), "bshd") << lines[2];
  // The two rows differ in their spec cells (the timing columns aside).
  const auto spec_end =
      static_cast<size_t>(std::find(names.begin(), names.end(), "timing_mode") - names.begin());
  const std::vector<std::string> a = cells(lines[1]), b = cells(lines[2]);
  EXPECT_NE(std::vector<std::string>(a.begin(), a.begin() + spec_end),
            std::vector<std::string>(b.begin(), b.begin() + spec_end));
  const std::string md = slurp(path("r.md"));
  EXPECT_NE(md.find("| provider  | layout | status "), std::string::npos) << md;
  EXPECT_NE(md.find("| cpu.naive | bhsd   | passed "), std::string::npos) << md;
  EXPECT_NE(md.find("| cpu.naive | bshd   | passed "), std::string::npos) << md;
  EXPECT_NE(md.find("- Every row: batch 1, q_heads 2"), std::string::npos) << md;
}

// Charts are the product: a run on a machine without a charting library says so before its first
// point, so nobody finds out from the report an hour later; `attnprof list` says where the
// library comes from, or which package brings it.
TEST_F(FilesCli, ARunWithoutAChartLibrarySaysSoAtTheStart) {
  const Outcome o = run_cli("run" + kTiny, "ATTNPROF_CHARTJS=/nonexistent/chart.js");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find("attnprof: no charts in `attnprof report --html` of this run: "
                       "ATTNPROF_CHARTJS: /nonexistent/chart.js cannot be read"),
            std::string::npos)
      << o.err;
  const Outcome none = run_cli("list", "ATTNPROF_CHARTJS=/nonexistent/chart.js");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_NE(none.out.find("\nreport charts: ATTNPROF_CHARTJS: /nonexistent/chart.js cannot be "
                          "read; point it at Chart.js 3 or 4 (chart.umd.js, or chart.min.js of "
                          "apt-get install libjs-chart.js) or unset it\n"),
            std::string::npos)
      << none.out;
  std::ofstream(path("chart.umd.js")) << "/*!\n * Chart.js v4.4.1\n */\n";
  const Outcome found = run_cli("list", "ATTNPROF_CHARTJS=" + path("chart.umd.js"));
  EXPECT_NE(found.out.find("\nreport charts: Chart.js 4.4.1, inlined in each HTML report from " +
                           path("chart.umd.js") + "\n"),
            std::string::npos)
      << found.out;
}

// ---- 10. one exit-code rule -------------------------------------------------------------------

TEST_F(FilesCli, HelpStatesTheExitCodes) {
  const Outcome o = run_cli("--help");
  EXPECT_EQ(o.code, 0);
  for (const char* line : {"Exit codes (every subcommand):\n", "\n  0      success\n",
                           "\n  1      the work ran and something failed",
                           "\n  2      refused before any work started, nothing written",
                           "\n  128+N  stopped by signal N"}) {
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  }
}

}  // namespace
}  // namespace attnprof
