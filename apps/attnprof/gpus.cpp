#include "gpus.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

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

// One child: its GPU, pid and the read end of its output.
struct Child {
  int gpu = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string pending;  // a partial line
  int code = 0;
};

// Starts `attnprof <args>` (this executable) with stdout and stderr into a pipe, seeing only
// `gpu` unless `pin` is false.
Child start_child(int gpu, bool pin, const std::vector<std::string>& args) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) throw std::runtime_error("--gpus: cannot create a pipe");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("--gpus: cannot start a child process");
  if (pid == 0) {
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::dup2(pipefd[1], STDERR_FILENO);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    if (pin) ::setenv("CUDA_VISIBLE_DEVICES", std::to_string(gpu).c_str(), 1);
    std::vector<std::string> argv = {"attnprof"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c;
    for (std::string& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv("/proc/self/exe", c.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  Child ch;
  ch.gpu = gpu;
  ch.pid = pid;
  ch.fd = pipefd[0];
  return ch;
}

// Prints the complete lines of `chunk` with the child's prefix; keeps a partial one.
void relay(Child& c, std::string_view chunk) {
  c.pending.append(chunk);
  size_t start = 0;
  for (size_t nl; (nl = c.pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::cout << "[gpu " << c.gpu << "] " << std::string_view(c.pending).substr(start, nl - start)
              << '\n';
  }
  c.pending.erase(0, start);
  std::cout.flush();
}

// Relays every child's output until all have closed it, passing a stop signal on to them; then
// reaps them.
void supervise(std::vector<Child>& children, const StopRequest& stop) {
  int forwarded = 0;
  size_t open = children.size();
  char buf[4096];
  while (open > 0) {
    if (const int n = stop.count.load(); n > forwarded) {
      // The first signal: each child finishes its point and stops; the second: now.
      for (const Child& c : children)
        ::kill(c.pid, stop.signal.load() ? stop.signal.load() : SIGTERM);
      forwarded = n;
    }
    std::vector<pollfd> fds;
    std::vector<Child*> who;
    for (Child& c : children) {
      if (c.fd < 0) continue;
      fds.push_back({c.fd, POLLIN, 0});
      who.push_back(&c);
    }
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        relay(*who[i], std::string_view(buf, size_t(got)));
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (!who[i]->pending.empty()) relay(*who[i], "\n");
      ::close(who[i]->fd);
      who[i]->fd = -1;
      --open;
    }
  }
  for (Child& c : children) {
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
}

bool is_option(const std::string& a, const char* name) {
  return a == name || a.rfind(std::string(name) + "=", 0) == 0;
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

std::vector<std::string> gpu_child_args(const std::vector<std::string>& args, int k, int n,
                                        const std::string& journal) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool dropped = false;
    for (const char* name : {"--gpus", "--out", "--csv", "--markdown", "--history"}) {
      if (!is_option(a, name)) continue;
      dropped = true;
      if (a == name) ++i;  // its value follows
    }
    if (dropped || a == "--no-history") continue;
    out.push_back(a);
  }
  out.insert(out.end(), {"--shard", fmt::format("{}/{}", k, n), "--out", journal, "--no-history"});
  return out;
}

int visible_gpu_count() {
  if (const char* test = std::getenv("ATTNPROF_TEST_GPU_COUNT")) return std::atoi(test);
  return cuda_device_count();
}

int run_on_gpus(const GpuRunOptions& o) {
  const bool test = std::getenv("ATTNPROF_TEST_GPU_COUNT") != nullptr;
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
  std::vector<std::string> args = command_line_args(static_cast<int>(::getpid()));
  if (!args.empty()) args.erase(args.begin());  // the program
  if (!args.empty() && args.front() == "run") args.erase(args.begin());

  StopRequest stop;
  const StopSignals signals(stop, /*second_kills=*/false);
  begin_work();
  if (lock) lock->keep();
  fmt::print("attnprof run --gpus {}: {} GPU{} ({}), a share of the shapes each; journals {}\n",
             o.gpus, gpus.size(), gpus.size() == 1 ? "" : "s", fmt::join(gpus, ", "),
             fmt::join(journals, ", "));
  std::cout.flush();
  std::vector<Child> children;
  for (size_t k = 0; k < gpus.size(); ++k) {
    std::vector<std::string> child = {"run"};
    const auto rest = gpu_child_args(args, int(k), int(gpus.size()), journals[k]);
    child.insert(child.end(), rest.begin(), rest.end());
    children.push_back(start_child(gpus[k], !test, child));
  }
  supervise(children, stop);

  int code = 0;
  for (const Child& c : children) {
    if (c.code != 0) fmt::print(stderr, "attnprof: the share on GPU {} exited {}\n", c.gpu, c.code);
    code = std::max(code, c.code);
  }
  // The shares' rows, merged into --out (beside it, then renamed: never half a journal).
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
                    fmt::format("{} GPUs: {}", gpus.size(), fmt::join(merged.devices, ", "))}));
  }
  for (auto& s : sinks) {
    s->begin(int64_t(merged.rows.size()));
    for (const Result& r : merged.rows) s->write(r);
    s->end();
  }
  fmt::print(
      "merged {} rows of {} GPUs into {}{}\n", merged.rows.size(), inputs.size(), o.out,
      merged.devices.empty() ? "" : fmt::format(" (devices: {})", fmt::join(merged.devices, ", ")));
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
