// The CLI end to end: a tiny grid runs and its journal parses; every bad input exits 2 with one
// line naming the option and what is allowed.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <cstdlib>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "attnprof/journal.hpp"
#include "attnprof/sink.hpp"
#include "cli_runner.hpp"

extern char** environ;

namespace attnprof {
namespace {

using testing_cli::Outcome;
using testing_cli::run_cli;

const std::string kQuick = " --min-time 1ms --point-timeout 50ms --min-samples 3 ";

TEST(Cli, TinyGridRunsAndTheJournalParses) {
  const auto journal = std::filesystem::temp_directory_path() / "attnprof_cli_test.jsonl";
  const auto md = std::filesystem::temp_directory_path() / "attnprof_cli_test.md";
  const Outcome o = run_cli(
      "run --device cpu --providers cpu.naive,cpu.flash --seq 16,33 --heads 4 "
      "--kv-heads 2 --head-dim 16 --dtype fp32,bf16 --mask causal --out " +
      journal.string() + " --markdown " + md.string() + kQuick);
  ASSERT_EQ(o.code, 0) << o.err;
  const auto rows = read_journal(journal).rows;
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

// Every option docs/tracing.md's usage names is one `attnprof trace` takes (those it says it has
// no such option for aside).
TEST(Cli, TheOptionsTheTracingDocNamesAreTraceOptions) {
  std::ifstream doc(std::filesystem::path(ATTNPROF_TEST_PRESETS).parent_path() / "docs" /
                    "tracing.md");
  std::stringstream text;
  text << doc.rdbuf();
  const std::string all = text.str();
  const size_t from = all.find("## Usage"), to = all.find("\n## ", from + 1);
  ASSERT_NE(from, std::string::npos);
  const std::string usage = all.substr(from, to - from);
  const Outcome help = run_cli("trace --help");
  ASSERT_EQ(help.code, 0) << help.err;
  const std::regex option(R"((no `)?(--[a-z][a-z0-9-]*))");
  int named = 0;
  for (auto it = std::sregex_iterator(usage.begin(), usage.end(), option);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[1].matched) continue;
    const std::string o = (*it)[2].str();
    ++named;
    const std::regex offered("(^|[ ,])" + o + "([ ,=\\n]|$)");
    EXPECT_TRUE(std::regex_search(help.out, offered))
        << o << " is in docs/tracing.md but not in trace --help:\n"
        << help.out;
  }
  EXPECT_GT(named, 15);
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
      // Issue 40: an axis given empty is refused, not the default run; limits are bounded.
      {"run --device cpu --seq ''", "--seq: an empty list; give at least one value"},
      {"run --device cpu --mask ''", "--mask: an empty list"},
      {"run --device cpu --dtype ''", "--dtype: an empty list"},
      {"run --device cpu --providers ''", "--providers: an empty list"},
      {"run --device cpu --point-timeout 2000000000s", "--point-timeout: at most 86400 s"},
      {"run --device cpu --hang-timeout 1000000000000000000000000000000000000000s",
       "--hang-timeout: at most 86400 s"},
      {"run --device cpu --hang-timeout 40", "--hang-timeout: '40' has no unit"},
      {"run --device cpu --providers cudnn.sdpa", "--providers: cudnn.sdpa cannot run here: "},
      {"run --device cpu --seqlens 7/0/3", "a sequence of 0 keys"},
      {"run --device cpu --mode sideways", "--mode"},
      {"run --device cpu --mask causal-br --seq 64 --kv-seq 32", "needs q_len <= kv_len"},
      {"run --device cpu --providers nope", "--providers: 'nope' matches no provider"},
      {"run --device cpu --preset nope", "--preset: unknown preset 'nope'"},
      {"run --device cpu --point-timeout 0", "--point-timeout"},
      {"run --device cpu --point-timeout -1s", "--point-timeout"},
      {"run --device cpu --hang-timeout 0", "--hang-timeout"},
      {"run --device cpu --hang-timeout -5s", "--hang-timeout"},
      {"run --device cpu --in-process --hang-timeout 5s", "--hang-timeout needs the supervisor"},
      {"run --device cpu --resume", "--resume needs --out"},
      {"run --device cpu --providers test.abort", "--providers: 'test.abort' matches no provider"},
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

// ---- faults and resume (the supervisor is the default path of `attnprof run`) ------------

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("attnprof_cli_" + std::to_string(::getpid()) + "_" + name);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t complete_lines(const fs::path& path) {
  const std::string text = slurp(path);
  return std::count(text.begin(), text.end(), '\n');
}

// The CLI started in the background with stdout and stderr to files, so that it can be signalled.
struct Background {
  pid_t pid = -1;
  fs::path out, err;
};

Background spawn_cli(const std::vector<std::string>& args, const std::string& tag) {
  Background b;
  b.out = temp_file(tag + ".out");
  b.err = temp_file(tag + ".err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, b.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, b.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> all = {ATTNPROF_TEST_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  EXPECT_EQ(posix_spawn(&b.pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  return b;
}

// Waits (at most `seconds`) until `path` holds `rows` complete rows; false on timeout.
bool wait_for_rows(const fs::path& path, int64_t rows, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(path) && complete_lines(path) >= rows) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// Whether a worker started by process `parent` still runs (its command line names the parent).
bool worker_of_alive(pid_t parent) {
  const std::string needle = std::string("worker") + '\0' + "--device";
  const std::string parent_arg = std::string("--parent") + '\0' + std::to_string(parent) + '\0';
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string cmdline = slurp(entry.path() / "cmdline");
    if (cmdline.find(needle) != std::string::npos &&
        cmdline.find(parent_arg) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// Ten points of at least 40 ms of sampling each: slow enough to be interrupted in the middle.
std::vector<std::string> slow_grid(const fs::path& journal) {
  return {"run",    "--device",   "cpu",  "--providers",     "cpu.naive", "--seq",
          "8:80:8", "--heads",    "1",    "--head-dim",      "8",         "--dtype",
          "fp32",   "--min-time", "40ms", "--point-timeout", "1s",        "--min-samples",
          "3",      "--threads",  "1",    "--no-trace",      "--out",     journal.string()};
}

// A slow_grid run in the background on a fresh journal; its files go with it.
struct SlowRun {
  fs::path journal;
  std::vector<std::string> args;
  Background process;
  bool started = false;  // the rows waited for were written
  ~SlowRun() {
    fs::remove(journal);
    fs::remove(process.out);
    fs::remove(process.err);
  }
};

// Starts it and waits (at most 20 s) until it has written `rows` rows.
std::unique_ptr<SlowRun> start_slow_run(const std::string& tag, int64_t rows) {
  auto run = std::make_unique<SlowRun>();
  run->journal = temp_file(tag + ".jsonl");
  fs::remove(run->journal);
  run->args = slow_grid(run->journal);
  run->process = spawn_cli(run->args, tag);
  run->started = wait_for_rows(run->journal, rows, 20);
  return run;
}

std::string join_args(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += " " + a;
  return s;
}

TEST(CliFaults, FaultProvidersAreListedOnlyWhenAskedFor) {
  const Outcome plain = run_cli("list");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("test."), std::string::npos) << plain.out;
  const Outcome with = run_cli("list", "ATTNPROF_TEST_PROVIDERS=1");
  ASSERT_EQ(with.code, 0) << with.err;
  for (const char* name : {"test.abort", "test.segv", "test.hang", "test.oom", "test.sticky"}) {
    EXPECT_NE(with.out.find(name), std::string::npos) << name;
  }
}

// --set is checked before any work, in one line; `list` shows each provider's settings.
TEST(Cli, ProviderSettingsAreCheckedFirstAndListed) {
  const fs::path journal = temp_file("settings.jsonl");
  const Outcome bad = run_cli(
      "run --device cpu --providers cpu.naive --seq 16 --heads 2 "
      "--head-dim 16 --dtype fp32 --set cuda.decode.pipeline=9x9 --out " +
      journal.string());
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--set cuda.decode.pipeline=9x9: cuda.decode.pipeline takes one of"),
            std::string::npos)
      << bad.err;
  EXPECT_FALSE(fs::exists(journal));
  const Outcome unused = run_cli(
      "run --device cpu --providers cpu.naive --seq 16 --heads 2 "
      "--head-dim 16 --dtype fp32 --set cuda.decode.pipeline=4x3 --out " +
      journal.string());
  EXPECT_EQ(unused.code, 2) << unused.err;
  EXPECT_NE(unused.err.find("cuda.decode is not among this run's providers"), std::string::npos)
      << unused.err;
  EXPECT_FALSE(fs::exists(journal));
  const Outcome list = run_cli("list");
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("    --set cuda.decode.pipeline=auto|4x3|"), std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("    --set cuda.flash.deterministic=0|1"), std::string::npos);
  EXPECT_NE(list.out.find("    --set cuda.flash.sm90.deterministic=0|1"), std::string::npos);
}

// A setting's values sweep like an axis: one point per value, in a supervised worker of the
// provider's group, each value reaching prepare() there (the note says it) and recorded in the
// row's env, where --resume's key sees it.
TEST(Cli, ASettingWithSeveralValuesIsSweptAndTravelsWithThePoint) {
  const fs::path journal = temp_file("settings-sweep.jsonl");
  const std::string cmd =
      "run --device cpu --providers test.group,cpu.naive --seq 16 --heads 2 --head-dim 16 "
      "--dtype fp32 --threads 1 --set test.group.tag=a,b --out " +
      journal.string() + kQuick;
  const Outcome o = run_cli(cmd, "ATTNPROF_TEST_PROVIDERS=1");
  ASSERT_EQ(o.code, 0) << o.err;
  const std::vector<Result> rows = read_journal(journal).rows;
  ASSERT_EQ(rows.size(), 3u) << o.out;
  std::map<std::string, const Result*> by;
  for (const Result& r : rows) {
    const auto tag = r.env.find("setting.tag");
    by[r.provider + (tag == r.env.end() ? "" : "/" + tag->second)] = &r;
  }
  ASSERT_TRUE(by.count("test.group/a") && by.count("test.group/b") && by.count("cpu.naive"))
      << o.out;
  EXPECT_NE(by.at("test.group/a")->provider_note.find("; tag a"), std::string::npos)
      << by.at("test.group/a")->provider_note;
  EXPECT_NE(by.at("test.group/b")->provider_note.find("; tag b"), std::string::npos)
      << by.at("test.group/b")->provider_note;
  const Outcome again = run_cli(cmd + " --resume", "ATTNPROF_TEST_PROVIDERS=1");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(read_journal(journal).rows.size(), 3u) << again.out;  // every point already ran
  fs::remove(journal);
}

TEST(CliFaults, ASweepWithEveryFaultProviderCompletesAndRecordsEachFault) {
#if defined(__SANITIZE_ADDRESS__)
  // Under ASan the worker's deliberate segfault would be caught by ASan's handler and reported
  // as "exit 1"; let it die of SIGSEGV as it does in a plain build (workers inherit this).
  setenv("ASAN_OPTIONS", "handle_segv=0", 1);
#endif
  const fs::path journal = temp_file("faults.jsonl");
  // The hang limit is what test.hang waits out; 3 s, not 1, so that a healthy point of a worker
  // starved by the other tests of `ctest -j2` on a 2-core machine is not taken for a hang (seen
  // once: the test failed in a full run and passed alone).
  const Outcome o = run_cli(
      "run --device cpu --providers cpu.naive,test.* --seq 16 --heads 2 --head-dim 16 "
      "--dtype fp32 --threads 1 --hang-timeout 3s --out " +
          journal.string() + kQuick,
      "ATTNPROF_TEST_PROVIDERS=1");
  ASSERT_EQ(o.code, 0) << o.err;
  std::vector<Result> rows = read_journal(journal).rows;
  const size_t points = rows.size();
  // The mutants (test.mutant.*) are tests/run/test_mutants.cpp's.
  std::erase_if(rows, [](const Result& r) { return r.provider.starts_with("test.mutant."); });
  // cpu.naive, five fault providers, test.group and test.pid (cpu.reference in two workers).
  ASSERT_EQ(rows.size(), 8u) << o.out;
#if defined(ATTNPROF_WITH_CUDA)
  // CUDA builds have test.illegal_address too, which cannot run in a --device cpu run: the glob
  // leaves it out, saying so once on stderr, not as a row.
  EXPECT_NE(o.err.find("test.illegal_address"), std::string::npos) << o.err;
#endif
  std::map<std::string, const Result*> by;
  for (const Result& r : rows) by[r.provider] = &r;
  EXPECT_EQ(by.at("test.group")->status, Status::passed) << by.at("test.group")->reason;
  EXPECT_EQ(by.at("test.pid")->status, Status::passed) << by.at("test.pid")->reason;
  EXPECT_EQ(by.at("cpu.naive")->status, Status::passed);
  EXPECT_EQ(by.at("test.oom")->status, Status::passed);  // within its budget at this size
  EXPECT_EQ(by.at("test.abort")->status, Status::failed);
  EXPECT_NE(by.at("test.abort")->reason.find("SIGABRT"), std::string::npos);
  EXPECT_EQ(by.at("test.segv")->status, Status::failed);
  EXPECT_NE(by.at("test.segv")->reason.find("SIGSEGV"), std::string::npos);
  EXPECT_EQ(by.at("test.segv")->seed, 20261129u);  // a crash is reproduced from its seed
  EXPECT_EQ(by.at("test.hang")->status, Status::timeout);
  EXPECT_EQ(by.at("test.sticky")->status, Status::failed);
  EXPECT_NE(o.out.find(fmt::format("done: {0} of {0} points run", points)), std::string::npos)
      << o.out;
  fs::remove(journal);
}

TEST(CliFaults, KillNineLosesAtMostThePointInFlightAndResumeRunsExactlyTheRest) {
  const auto run = start_slow_run("kill9", 2);
  const fs::path& journal = run->journal;
  const Background& b = run->process;
  ASSERT_TRUE(run->started) << slurp(b.err);
  ::kill(b.pid, SIGKILL);
  EXPECT_EQ(wait_exit(b.pid), 128 + SIGKILL);
  // The worker dies with its supervisor, even mid-point.
  bool alive = true;
  for (int i = 0; i < 200 && alive; ++i) {
    alive = worker_of_alive(b.pid);
    if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(alive) << "the worker outlived its supervisor";

  const std::size_t before = read_journal(journal).rows.size();
  ASSERT_GE(before, 2u);
  ASSERT_LT(before, 10u) << "the sweep ended before the kill";
  const Outcome o = run_cli(join_args(run->args) + " --resume");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(fmt::format("done: {} of 10 points run ({} already in the journal)",
                                   10 - before, before)),
            std::string::npos)
      << o.out;
  const auto rows = read_journal(journal).rows;
  EXPECT_EQ(rows.size(), 10u);
  std::set<std::string> keys;
  for (const Result& r : rows) {
    EXPECT_EQ(r.status, Status::passed) << r.reason;
    keys.insert(r.provider + " " + r.spec.key());
  }
  EXPECT_EQ(keys.size(), 10u);
}

TEST(CliFaults, SigintAndSigtermStopCleanlyWithAParseableJournal) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const auto run = start_slow_run("stop", 2);
    const fs::path& journal = run->journal;
    const Background& b = run->process;
    ASSERT_TRUE(run->started) << slurp(b.err);
    EXPECT_TRUE(worker_of_alive(b.pid));  // the check below can see a worker
    ::kill(b.pid, sig);
    EXPECT_EQ(wait_exit(b.pid), 128 + sig);
    const std::string err = slurp(b.err);
    EXPECT_NE(err.find(sig == SIGINT ? "stopped by SIGINT" : "stopped by SIGTERM"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("resume with:"), std::string::npos) << err;
    EXPECT_NE(err.find("--resume"), std::string::npos) << err;
    const auto rows = read_journal(journal).rows;  // throws on a bad line
    EXPECT_GE(rows.size(), 2u);
    EXPECT_LT(rows.size(), 10u);
    EXPECT_EQ(static_cast<int64_t>(rows.size()), complete_lines(journal));
    EXPECT_FALSE(worker_of_alive(b.pid));
    // The history marks the run as stopped, not as complete.
    const Outcome h = run_cli("history --limit 0");
    const size_t at = h.out.find(journal.string());
    ASSERT_NE(at, std::string::npos) << h.out;
    const std::string line = h.out.substr(at, h.out.find('\n', at) - at);
    EXPECT_NE(line.find(sig == SIGINT ? "(stopped by SIGINT)" : "(stopped by SIGTERM)"),
              std::string::npos)
        << line;
  }
}

// Ctrl-C on tune: exit 130, and the --json it writes says the search was stopped (a batch found
// before the stop must not read as the answer).
TEST(CliFaults, SigintStopsTuneWithAJsonThatSaysSo) {
  const fs::path journal = temp_file("tune-stop.jsonl");
  const fs::path json = temp_file("tune-stop.json");
  fs::remove(journal);
  fs::remove(json);
  const Background b =
      spawn_cli({"tune", "--providers",  "cpu.naive", "--device",       "cpu",    "--seq",
                 "256",  "--heads",      "2",         "--head-dim",     "32",     "--dtype",
                 "fp32", "--max-memory", "1GiB",      "--min-time",     "100ms",  "--threads",
                 "1",    "--no-history", "--out",     journal.string(), "--json", json.string()},
                "tune-stop");
  ASSERT_TRUE(wait_for_rows(journal, 1, 20)) << slurp(b.err);
  ::kill(b.pid, SIGINT);
  EXPECT_EQ(wait_exit(b.pid), 128 + SIGINT) << slurp(b.err);
  EXPECT_NE(slurp(b.err).find("tune stopped by SIGINT before its search ended"), std::string::npos)
      << slurp(b.err);
  const std::string text = slurp(json);
  EXPECT_NE(text.find("\"stopped_by\": \"SIGINT\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"complete\": false"), std::string::npos) << text;
  fs::remove(journal);
  fs::remove(json);
  fs::remove(b.out);
  fs::remove(b.err);
}

// Ctrl-C on `run --gpus`: the signal reaches every share (each ends its point and stops), the
// parent merges what they finished into --out, exits 130 with no child left, and --resume runs
// the rest. ATTNPROF_TEST_GPU_COUNT=2 stands for two GPUs (the shares run on the CPU).
TEST(CliFaults, SigintStopsEveryGpuShareAndResumeFinishesTheGrid) {
  const fs::path journal = temp_file("gpus-stop.jsonl");
  const fs::path share0 = temp_file("gpus-stop.gpu0.jsonl"),
                 share1 = temp_file("gpus-stop.gpu1.jsonl");
  for (const fs::path& p : {journal, share0, share1}) fs::remove(p);
  std::vector<std::string> args = slow_grid(journal);
  // Forty points, twenty a share: neither share is at its last point when the signal comes.
  *(std::find(args.begin(), args.end(), "--seq") + 1) = "8:320:8";
  args.insert(args.end(), {"--gpus", "2", "--no-history"});
  ::setenv("ATTNPROF_TEST_GPU_COUNT", "2", 1);
  const Background b = spawn_cli(args, "gpus-stop");
  const bool started = wait_for_rows(share0, 1, 20) && wait_for_rows(share1, 1, 20);
  ::kill(b.pid, SIGINT);
  EXPECT_EQ(wait_exit(b.pid), 128 + SIGINT) << slurp(b.err);
  ASSERT_TRUE(started) << slurp(b.err);
  const std::string err = slurp(b.err);
  for (int g : {0, 1})
    EXPECT_NE(err.find("[gpu " + std::to_string(g) + "] attnprof: stopped by SIGINT"),
              std::string::npos)
        << err;
  EXPECT_NE(err.find("run the same command with --resume"), std::string::npos) << err;
  const int64_t finished = complete_lines(share0) + complete_lines(share1);
  EXPECT_EQ(complete_lines(journal), finished);
  EXPECT_LT(finished, 40);
  // No share outlived the parent.
  for (const auto& entry : fs::directory_iterator("/proc"))
    EXPECT_EQ(slurp(entry.path() / "cmdline").find(share0.string()), std::string::npos);

  args.push_back("--resume");
  const Background again = spawn_cli(args, "gpus-resume");
  EXPECT_EQ(wait_exit(again.pid), 0) << slurp(again.err);
  ::unsetenv("ATTNPROF_TEST_GPU_COUNT");
  EXPECT_EQ(complete_lines(journal), 40) << slurp(again.out);
  for (const fs::path& p : {journal, share0, share1, b.out, b.err, again.out, again.err})
    fs::remove(p);
}

// Ctrl-C on trace: the point in flight ends, the rest are not traced, the exit is 130 with a line
// that says so, and the Chrome trace and breakdown hold what was traced (a trace ran every point
// and exited 0 after a Ctrl-C before).
TEST(CliFaults, SigintStopsTraceAfterThePointInFlightAndKeepsIt) {
  const fs::path chrome = temp_file("trace-stop.json"), md = temp_file("trace-stop.md");
  fs::remove(chrome);
  fs::remove(md);
  const Background b =
      spawn_cli({"trace",    "--device",      "cpu",         "--providers", "cpu.naive,cpu.flash",
                 "--seq",    "2048",          "--heads",     "4",           "--head-dim",
                 "64",       "--dtype",       "fp32",        "--threads",   "1",
                 "--chrome", chrome.string(), "--breakdown", md.string(),   "--no-history"},
                "trace-stop");
  bool started = false;
  for (int i = 0; i < 2000 && !started; ++i) {
    started = slurp(b.out).find("== cpu.naive") != std::string::npos;
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(b.pid, SIGINT);
  EXPECT_EQ(wait_exit(b.pid), 128 + SIGINT) << slurp(b.err);
  ASSERT_TRUE(started) << slurp(b.err);
  const std::string out = slurp(b.out), err = slurp(b.err);
  EXPECT_NE(err.find("trace stopped by SIGINT with 1 of 2 points traced"), std::string::npos)
      << err;
  EXPECT_EQ(out.find("== cpu.flash"), std::string::npos) << out;
  EXPECT_NE(slurp(chrome).find("cpu.naive"), std::string::npos);
  EXPECT_EQ(slurp(chrome).find("cpu.flash"), std::string::npos);
  EXPECT_NE(slurp(md).find("## cpu.naive"), std::string::npos);
  for (const fs::path& p : {chrome, md, b.out, b.err}) fs::remove(p);
}

// Two runs on one journal: the second is refused at once, naming the first by pid and command
// line, and writes nothing; the first finishes its sweep with every row intact.
TEST(CliFaults, ASecondRunOnAJournalInUseIsRefusedNamingTheFirst) {
  const auto run = start_slow_run("two", 1);
  const fs::path& journal = run->journal;
  const Background& first = run->process;
  ASSERT_TRUE(run->started) << slurp(first.err);
  const Outcome second = run_cli(join_args(run->args) + " --resume");
  EXPECT_EQ(second.code, 2) << second.err;
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << second.err;
  EXPECT_NE(second.err.find(fmt::format("--out: journal {} is in use by pid {} (", journal.string(),
                                        first.pid)),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("attnprof run --device cpu"), std::string::npos) << second.err;
  EXPECT_EQ(second.out, "");
  EXPECT_EQ(wait_exit(first.pid), 0) << slurp(first.err);
  const auto rows = read_journal(journal).rows;
  EXPECT_EQ(rows.size(), 10u);
  EXPECT_EQ(static_cast<int64_t>(rows.size()), complete_lines(journal));
}

// A journal of another build: --resume says in one line that its points run again, and why
// (the fingerprint field that differs); the old rows stay, the new ones go in beside them.
TEST(CliFaults, ResumeOfAnotherBuildsJournalSaysItsPointsRunAgain) {
  const fs::path journal = temp_file("other_build.jsonl");
  const std::string args =
      "run --device cpu --providers cpu.naive --seq 16,32 --heads 1 --head-dim 8 --dtype fp32 "
      "--no-history --out " +
      journal.string() + kQuick;
  ASSERT_EQ(run_cli(args).code, 0);
  std::string text = slurp(journal);
  for (size_t at = 0; (at = text.find("\"git_commit\":\"", at)) != std::string::npos;) {
    at += 14;
    text.replace(at, text.find('"', at) - at, "0123abcd");
  }
  { std::ofstream(journal, std::ios::binary) << text; }
  const Outcome o = run_cli(args + " --resume");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("resuming " + journal.string() +
                       ": 2 rows in the journal; 2 of its points were measured by another build, "
                       "device or setting (git_commit 0123abcd -> "),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("done: 2 of 2 points run"), std::string::npos) << o.out;
  EXPECT_EQ(read_journal(journal).rows.size(), 4u);
  // Resumed again, every point has its row from this build: nothing runs, nothing is said.
  const Outcome again = run_cli(args + " --resume");
  EXPECT_EQ(again.out.find("another build"), std::string::npos) << again.out;
  EXPECT_EQ(read_journal(journal).rows.size(), 4u);
  fs::remove(journal);
}

TEST(CliFaults, ResumeRefusesABadJournalWithOneLineAndLeavesItAlone) {
  Result r;
  r.provider = "cpu.naive";
  r.status = Status::passed;
  std::string other = to_json_line(r) + "\n";
  other.replace(other.find("\"schema_version\":3"), 18, "\"schema_version\":4");
  struct Case {
    std::string text;
    const char* expect;
  };
  const Case cases[] = {
      {other, "schema_version 4, this build reads 1 to 3"},
      {to_json_line(r) + "\n{\"schema_version\":2,\n" + to_json_line(r) + "\n", "line 2"},
      {"provider,status\ncpu.naive,passed\n", "line 1"},
  };
  const fs::path journal = temp_file("bad.jsonl");
  for (const Case& c : cases) {
    { std::ofstream(journal, std::ios::binary) << c.text; }
    const Outcome o = run_cli(
        "run --device cpu --providers cpu.naive --seq 16 --heads 1 "
        "--head-dim 8 --dtype fp32 --resume --out " +
        journal.string() + kQuick);
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_NE(o.err.find("--resume: " + journal.string()), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(c.expect), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_EQ(slurp(journal), c.text);
  }
  fs::remove(journal);
}

}  // namespace
}  // namespace attnprof
