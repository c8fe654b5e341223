#include "attnprof/supervisor.hpp"
#include "attnprof/env.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "attnprof/child_process.hpp"
#include "run/protocol.hpp"

namespace attnprof {

namespace {

using Clock = ChildProcess::Clock;
using std::chrono::milliseconds;

// A worker that is told to exit gets this long before it is killed.
constexpr milliseconds kExitGrace{2000};

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// "; last stderr: a | b | c", or "" when the worker said nothing.
std::string last_words(const ChildProcess& child) {
  std::string words;
  for (const std::string& line : child.stderr_tail()) {
    words += (words.empty() ? "" : " | ") + line;
  }
  return words.empty() ? "" : "; last stderr: " + words;
}

// The kernel's count of processes its OOM killer has killed (/proc/vmstat oom_kill, Linux 4.13+);
// -1 where unknown.
int64_t oom_kills() {
  std::ifstream in("/proc/vmstat");
  std::string name;
  int64_t value = 0;
  while (in >> name >> value) {
    if (name == "oom_kill") return value;
  }
  return -1;
}

}  // namespace

double default_hang_timeout_s(double point_timeout_s) {
  return 5 * point_timeout_s + 30;
}

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)) {}

Supervisor::~Supervisor() {
  while (!workers_.empty()) retire(workers_.begin()->first, false);
}

const std::vector<WorkerEngine>& Supervisor::start() {
  if (!workers_.contains("")) spawn(WorkerGroup{});
  return engines_.at("");
}

std::vector<std::string> Supervisor::group_environment(const WorkerGroup& group) {
  std::vector<std::string> env = group.env;
  if (group.library_path.empty()) return env;
  const char* current = std::getenv("LD_LIBRARY_PATH");
  std::string path = group.library_path;
  if (current != nullptr && *current != '\0') path += std::string(":") + current;
  env.push_back("LD_LIBRARY_PATH=" + path);
  return env;
}

void Supervisor::spawn(const WorkerGroup& group) {
  std::vector<std::string> argv = group.command;
  if (argv.empty()) argv = {options_.executable, "worker"};
  for (const std::string& a :
       {std::string("--device"), options_.device, std::string("--threads"),
        std::to_string(options_.threads), std::string("--parent"), std::to_string(::getpid())})
    argv.push_back(a);
  const std::string program = group.command.empty() ? options_.executable + " worker"
                                                    : fmt::format("{} {} {}", argv[0], argv[1],
                                                                  argv.size() > 2 ? argv[2] : "");
  const std::string who =
      group.name.empty() ? program : fmt::format("{} of group {}", program, group.name);
  std::unique_ptr<ChildProcess> child;
  try {
    child = std::make_unique<ChildProcess>(argv, group_environment(group));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("worker ({}) did not start: {}", who, e.what()));
  }
  // The worker's one-line notices reach the user as they come.
  child->on_stderr_line([](const std::string& line) {
    if (line.rfind("attnprof: ", 0) != 0) return;
    std::fputs((line + "\n").c_str(), stderr);
    std::fflush(stderr);
  });
  ++workers_started_;
  std::string line;
  const auto wait = child->read_line(line, after(options_.start_timeout_s),
                                     [this] { return options_.stop && options_.stop->stop_now(); });
  std::string why;
  if (wait == ChildProcess::Wait::line) {
    try {
      const protocol::Hello hello = protocol::decode_hello(line);
      // The default group's worker describes the engines; a group's worker has the same
      // engines, but its own fingerprint (its libraries).
      engines_[group.name] = hello.engines;
      provider_entries_[group.name] = hello.providers;
      workers_[group.name] = std::move(child);
      return;
    } catch (const std::exception& e) {
      why = e.what();
    }
    child->kill_and_reap();
  } else if (wait == ChildProcess::Wait::eof) {
    why = describe_wait_status(child->reap(kExitGrace));
  } else {
    child->kill_and_reap();
    why = wait == ChildProcess::Wait::timeout
              ? fmt::format("no hello within {} s; killed", options_.start_timeout_s)
              : "stopped by a signal";
  }
  throw std::runtime_error(
      fmt::format("worker ({}) did not start: {}{}", who, why, last_words(*child)));
}

void Supervisor::retire(const std::string& group, bool kill) {
  auto it = workers_.find(group);
  if (it == workers_.end()) return;
  if (kill) {
    it->second->kill_and_reap();
  } else {
    it->second->finish(kExitGrace);
  }
  workers_.erase(it);
}

ChildProcess* Supervisor::worker(const std::string& group) const {
  auto it = workers_.find(group);
  return it == workers_.end() ? nullptr : it->second.get();
}

const WorkerEngine* Supervisor::engine(DeviceKind kind, const std::string& group) const {
  const auto it = engines_.find(group);
  if (it == engines_.end()) return nullptr;
  for (const WorkerEngine& e : it->second) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

bool Supervisor::has_engine(DeviceKind kind) const {
  return engine(kind) != nullptr;
}

const Fingerprint& Supervisor::fingerprint(DeviceKind kind) {
  const auto it = engines_.find("");
  if (it == engines_.end() || it->second.empty()) {
    throw std::logic_error("Supervisor::fingerprint before start()");
  }
  const WorkerEngine* e = engine(kind);
  if (e == nullptr) e = engine(DeviceKind::cpu);
  if (e == nullptr) e = &it->second.front();
  return e->env;
}

const Fingerprint& Supervisor::fingerprint(const Provider& provider) {
  const std::string name = provider.name();
  if (auto it = provider_fingerprints_.find(name); it != provider_fingerprints_.end()) {
    return it->second;
  }
  const WorkerGroup group = provider.worker_group();
  std::string source = group.name;
  if (!group.name.empty() && !engines_.contains(group.name)) {
    try {
      spawn(group);
    } catch (const std::exception&) {
      // Its points will fail with the reason; their rows carry the default worker's fingerprint.
      source = "";
    }
  }
  const WorkerEngine* e = engine(provider.device_kind(), source);
  Fingerprint f = e ? e->env : fingerprint(provider.device_kind());
  // The provider's own entries (library versions) as its group's worker loads them.
  if (auto g = provider_entries_.find(source); g != provider_entries_.end()) {
    if (auto p = g->second.find(name); p != g->second.end()) {
      for (const auto& [k, v] : p->second) f[k] = v;
    }
  }
  return provider_fingerprints_.emplace(name, std::move(f)).first->second;
}

Result Supervisor::fault_row(const Point& point, Status status, Fault fault,
                             std::string reason) const {
  Result r = unrun_row(*point.provider, point.spec, run_.seed, status, fault, std::move(reason));
  if (const WorkerEngine* e = engine(point.provider->device_kind())) r.device = e->device;
  return r;
}

std::string Supervisor::send(const WorkerGroup& group, const std::string& request) {
  // A worker found dead before the point started (killed from outside between points) is
  // replaced and the point goes to the new one: the point is not charged for it.
  for (int attempt = 0;; ++attempt) {
    if (ChildProcess* w = worker(group.name); w != nullptr && w->exited())
      retire(group.name, false);
    if (worker(group.name) == nullptr) {
      try {
        spawn(group);
      } catch (const std::exception& e) {
        return e.what();
      }
    }
    ChildProcess& w = *worker(group.name);
    w.clear_stderr();
    if (w.write_line(request)) return "";
    if (attempt == 1) {
      const std::string why =
          "worker died before the point started: " + describe_wait_status(w.reap(kExitGrace)) +
          last_words(w);
      retire(group.name, true);
      return why;
    }
    retire(group.name, false);
  }
}

Result Supervisor::lost_point(const Point& point, const std::string& group, bool hung,
                              int64_t oom_kills_before) {
  ChildProcess& w = *worker(group);
  Result r;
  if (hung) {
    w.kill_and_reap();
    const double allowance = point.provider->traits().prepare_allowance_s;
    r = fault_row(point, Status::timeout, Fault::timeout,
                  fmt::format("no answer within the hang limit ({} s, --hang-timeout{}); worker "
                              "killed{}",
                              options_.hang_timeout_s + allowance,
                              allowance > 0 ? fmt::format(", with the provider's {} s for its "
                                                          "prepare",
                                                          allowance)
                                            : std::string(),
                              last_words(w)));
  } else {
    const int status = w.reap(kExitGrace);
    // SIGKILL that attnprof did not send, while the kernel's OOM killer killed someone.
    const bool oom_killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
                            !w.killed_here() && oom_kills_before >= 0 &&
                            oom_kills() > oom_kills_before;
    r = oom_killed ? fault_row(point, Status::oom, Fault::oom,
                               "worker killed by the kernel's out-of-memory killer (SIGKILL; "
                               "/proc/vmstat oom_kill rose)" +
                                   last_words(w))
                   : fault_row(point, Status::failed, Fault::crash,
                               "worker " + describe_wait_status(status) + last_words(w));
  }
  retire(group, true);
  return r;
}

std::optional<Result> Supervisor::run(const Point& point) {
  const std::string started_at = utc_now_iso8601();
  const auto stop_now = [this] { return options_.stop && options_.stop->stop_now(); };
  const WorkerGroup group = point.provider->worker_group();
  const std::string unsent = send(
      group, protocol::encode_request({point.provider->name(), point.spec, run_, point.settings}));
  if (!unsent.empty()) {
    if (stop_now()) return std::nullopt;
    Result r = fault_row(point, Status::failed, Fault::crash, unsent);
    r.started_at = started_at;
    return r;
  }

  ChildProcess& w = *worker(group.name);
  const int64_t oom_kills_before = oom_kills();
  std::string line;
  // A provider that JIT-compiles in prepare is given its declared allowance on top.
  const double limit_s = options_.hang_timeout_s + point.provider->traits().prepare_allowance_s;
  const auto wait = w.read_line(line, after(limit_s), stop_now);
  if (wait == ChildProcess::Wait::stopped) {
    retire(group.name, true);
    return std::nullopt;
  }
  Result r;
  if (wait == ChildProcess::Wait::line) {
    try {
      protocol::Reply reply = protocol::decode_reply(line);
      // A sticky device fault poisoned the worker's context: replace it before the next point.
      if (reply.row.fault == Fault::sticky_device) retire(group.name, true);
      return std::move(reply.row);
    } catch (const std::exception& e) {
      w.kill_and_reap();
      r = fault_row(point, Status::failed, Fault::crash, e.what() + last_words(w));
      retire(group.name, true);
    }
  } else {
    r = lost_point(point, group.name, wait == ChildProcess::Wait::timeout, oom_kills_before);
  }
  r.started_at = started_at;
  return r;
}

}  // namespace attnprof
