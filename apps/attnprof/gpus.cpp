#include "gpus.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "attnprof/child_process.hpp"
#include "attnprof/command_line.hpp"
#include "attnprof/device.hpp"
#include "attnprof/history.hpp"
#include "attnprof/interrupt.hpp"
#include "attnprof/journal.hpp"
#include "attnprof/merge.hpp"
#include "attnprof/sink.hpp"
#include "cli.hpp"
#include "journal_output.hpp"
#include "output_paths.hpp"

namespace attnprof::cli {

namespace {

std::optional<int> whole_number(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// How long a share that has closed its output may take to exit before it is killed.
constexpr auto kExitGrace = std::chrono::seconds(30);

// The options only the parent acts on: it writes these outputs and the history from the merged
// rows (each share gets --shard, its own --out and --no-history instead).
constexpr std::array<std::string_view, 6> kParentOnly = {"--gpus",     "--out",     "--csv",
                                                         "--markdown", "--history", "--no-history"};

// The name an option is given by on a command line: its first long name ("--device").
std::string option_name(const CLI::Option& opt) {
  if (!opt.get_lnames().empty()) return "--" + opt.get_lnames().front();
  return opt.get_snames().empty() ? std::string() : "-" + opt.get_snames().front();
}

// One share: its GPU, its child run and the thread that relays the child's lines.
struct Share {
  int gpu = 0;
  std::unique_ptr<ChildProcess> child;
  std::thread relay;
  int code = 0;
};

std::mutex console;  // one relayed line at a time

void print_line(std::FILE* to, int gpu, const std::string& line) {
  const std::lock_guard<std::mutex> hold(console);
  fmt::print(to, "[gpu {}] {}\n", gpu, line);
  std::fflush(to);
}

// Relays the share's stdout to ours and its stderr to ours, each line prefixed by its GPU, until
// the child closes its stdout.
void relay(Share& s) {
  std::string line;
  while (s.child->read_line(line, ChildProcess::Clock::time_point::max(), nullptr) ==
         ChildProcess::Wait::line)
    print_line(stdout, s.gpu, line);
}

// Waits for every share's output to end, passing each stop signal on to the children (the first:
// each finishes its point and stops; the second: now); then reaps them.
void supervise(std::vector<Share>& shares, const StopRequest& stop) {
  std::atomic<std::size_t> open{shares.size()};
  for (Share& s : shares) {
    s.relay = std::thread([&s, &open] {
      relay(s);
      --open;
    });
  }
  for (int forwarded = 0; open.load() > 0;) {
    if (const int n = stop.count.load(); n > forwarded) {
      for (const Share& s : shares)
        ::kill(s.child->pid(), stop.signal.load() ? stop.signal.load() : SIGTERM);
      forwarded = n;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (Share& s : shares) {
    s.relay.join();
    const int status = s.child->reap(kExitGrace);
    s.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
}

// The shares' rows, merged into --out (beside it, then renamed: never half a journal), and from
// the merged rows the CSV, the Markdown and the history.
void merge_shares(const GpuRunOptions& o, const std::vector<std::string>& journals, int gpus) {
  std::vector<MergeInput> inputs;
  for (const std::string& j : journals) {
    if (!std::filesystem::exists(j)) continue;
    JournalRows rows = read_journal(j);
    if (!rows.warning.empty()) warning(rows.warning);
    inputs.push_back({j, std::move(rows.rows)});
  }
  const Merged merged = merge_journals(inputs);
  write_journal_whole(o.out, merged.rows);
  std::vector<std::unique_ptr<Sink>> sinks;
  if (!o.csv.empty()) sinks.push_back(make_csv_sink(o.csv));
  if (!o.markdown.empty()) sinks.push_back(make_markdown_sink(o.markdown));
  if (!o.no_history) {
    sinks.push_back(open_run_history(
        o.history, {process_command_line(), o.out,
                    fmt::format("{} GPUs: {}", gpus, fmt::join(merged.devices, ", "))}));
  }
  for (auto& s : sinks) {
    s->begin(int64_t(merged.rows.size()));
    for (const Result& r : merged.rows) s->write(r);
    s->end();
  }
  fmt::print(
      "merged {} rows of {} GPUs into {}{}\n", merged.rows.size(), inputs.size(), o.out,
      merged.devices.empty() ? "" : fmt::format(" (devices: {})", fmt::join(merged.devices, ", ")));
}

}  // namespace

std::vector<int> parse_gpus(const std::string& text, int device_count) {
  const std::string here = device_count == 0
                               ? std::string("this host has no CUDA device")
                               : fmt::format("this host has {} CUDA device{} (0..{})", device_count,
                                             device_count == 1 ? "" : "s", device_count - 1);
  std::vector<int> gpus;
  if (text == "all") {
    for (int g = 0; g < device_count; ++g) gpus.push_back(g);
  } else if (text.find(',') == std::string::npos) {
    const auto n = whole_number(text);
    if (!n || *n < 1)
      throw std::invalid_argument(fmt::format(
          "--gpus {}: give all, a count (2: GPUs 0 and 1) or a list of indices (0,1; 1, alone)",
          text));
    if (*n > device_count) throw std::invalid_argument(fmt::format("--gpus {}: {}", text, here));
    for (int g = 0; g < *n; ++g) gpus.push_back(g);
  } else {
    size_t start = 0;
    while (start < text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      const std::string_view item(text.data() + start, comma - start);
      const auto g = whole_number(item);
      if (!g || *g < 0)
        throw std::invalid_argument(
            fmt::format("--gpus {}: '{}' is not a GPU index", text, std::string(item)));
      if (*g >= device_count)
        throw std::invalid_argument(fmt::format("--gpus {}: no GPU {}: {}", text, *g, here));
      if (std::find(gpus.begin(), gpus.end(), *g) != gpus.end())
        throw std::invalid_argument(fmt::format("--gpus {}: GPU {} is named twice", text, *g));
      gpus.push_back(*g);
      start = comma + 1;
    }
  }
  if (gpus.empty()) throw std::invalid_argument(fmt::format("--gpus {}: {}", text, here));
  return gpus;
}

std::string gpu_journal(const std::string& out, int gpu) {
  std::filesystem::path stem(out);
  const std::string ext = stem.has_extension() ? stem.extension().string() : ".jsonl";
  stem.replace_extension();
  return fmt::format("{}.gpu{}{}", stem.string(), gpu, ext);
}

std::vector<std::string> gpu_child_args(const CLI::App& run, int k, int n,
                                        const std::string& journal) {
  std::vector<std::string> out = {"run"};
  for (const CLI::Option* opt : run.get_options()) {
    if (opt->count() == 0) continue;
    const std::string name = option_name(*opt);
    if (std::find(kParentOnly.begin(), kParentOnly.end(), name) != kParentOnly.end()) continue;
    if (opt->get_expected_max() == 0) {  // a flag
      if (opt->as<bool>()) out.push_back(name);
      continue;
    }
    for (const std::string& value : opt->results()) out.insert(out.end(), {name, value});
  }
  out.insert(out.end(), {"--shard", fmt::format("{}/{}", k, n), "--out", journal, "--no-history"});
  return out;
}

bool gpus_stood_in() {
  return std::getenv("ATTNPROF_TEST_GPU_COUNT") != nullptr;
}

int visible_gpu_count() {
  if (gpus_stood_in()) return std::atoi(std::getenv("ATTNPROF_TEST_GPU_COUNT"));
  return cuda_device_count();
}

int run_on_gpus(const GpuRunOptions& o, const CLI::App& run) {
  const bool test = gpus_stood_in();
  const std::vector<int> gpus = parse_gpus(o.gpus, visible_gpu_count());
  if (o.out.empty())
    throw std::invalid_argument("--gpus needs --out FILE: the GPUs' journals are merged into it");
  std::vector<std::string> journals;
  for (int g : gpus) journals.push_back(gpu_journal(o.out, g));
  std::vector<PathOption> paths = {
      {"--out", o.out, /*own_rules=*/true}, {"--csv", o.csv}, {"--markdown", o.markdown}};
  for (const std::string& j : journals) paths.push_back({"--out (a GPU's share)", j, true});
  check_output_paths(paths, {}, o.force);
  const std::unique_ptr<JournalLock> lock = claim_journal({o.out, o.resume, o.force});
  // Each share's journal obeys --resume and --force as --out would (checked by its own run).
  std::vector<std::vector<std::string>> commands;
  for (size_t k = 0; k < gpus.size(); ++k)
    commands.push_back(gpu_child_args(run, int(k), int(gpus.size()), journals[k]));

  StopRequest stop;
  const StopSignals signals(stop, /*second_kills=*/false);
  begin_work();
  if (lock) lock->keep();
  fmt::print("attnprof run --gpus {}: {} GPU{} ({}), a share of the shapes each; journals {}\n",
             o.gpus, gpus.size(), gpus.size() == 1 ? "" : "s", fmt::join(gpus, ", "),
             fmt::join(journals, ", "));
  std::vector<Share> shares(gpus.size());
  for (size_t k = 0; k < gpus.size(); ++k) {
    // What runs, as a command a user could run by hand to redo one share.
    const std::string pin = test ? std::string() : fmt::format("CUDA_VISIBLE_DEVICES={}", gpus[k]);
    fmt::print("  GPU {}: {}{}attnprof {}\n", gpus[k], pin, pin.empty() ? "" : " ",
               shell_join(commands[k]));
  }
  std::cout.flush();
  for (size_t k = 0; k < gpus.size(); ++k) {
    Share& s = shares[k];
    s.gpu = gpus[k];
    std::vector<std::string> argv = {this_executable().string()};
    argv.insert(argv.end(), commands[k].begin(), commands[k].end());
    std::vector<std::string> env;
    if (!test) env.push_back(fmt::format("CUDA_VISIBLE_DEVICES={}", s.gpu));
    s.child = std::make_unique<ChildProcess>(argv, env);
    s.child->on_stderr_line(
        [gpu = s.gpu](const std::string& line) { print_line(stderr, gpu, line); });
  }
  supervise(shares, stop);

  int code = 0;
  for (const Share& s : shares) {
    if (s.code != 0) fmt::print(stderr, "attnprof: the share on GPU {} exited {}\n", s.gpu, s.code);
    code = std::max(code, s.code);
  }
  merge_shares(o, journals, int(gpus.size()));
  if (stop.count.load() > 0) {
    fmt::print(stderr,
               "attnprof: stopped; every finished row is in the GPUs' journals and {}; "
               "run the same command with --resume to continue\n",
               o.out);
    return 128 + (stop.signal.load() ? stop.signal.load() : SIGTERM);
  }
  return code;
}

}  // namespace attnprof::cli
