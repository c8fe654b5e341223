// The supervisor: runs a sweep's points in a worker process (worker.hpp) so that a provider that
// aborts, crashes, hangs or poisons its CUDA context ends its own point only. The worker serves
// point after point (start-up is expensive on a GPU) and is replaced when it
//   - dies (abort, segfault, ...): the point is `failed` with the signal and the worker's last
//     stderr lines; killed by the kernel's OOM killer: `oom`;
//   - gives no answer within the hang limit: it is killed, the point is `timeout`;
//   - answers with a row whose fault is sticky_device (a sticky CUDA error poisoned its context):
//     the row is kept, the worker is replaced before the next point.
// Providers of a worker group of their own (Provider::worker_group(): LibTorch's) run in a
// separate worker of that group, started with the group's library path first; each group's
// worker is replaced on its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnprof/interrupt.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/sweep.hpp"
#include "attnprof/worker.hpp"

namespace attnprof {

struct SupervisorOptions {
  std::string executable = "/proc/self/exe";  // a binary with the `worker` subcommand
  std::string device = "auto";                // the worker's --device
  int threads = 0;                            // the worker's --threads (0: all)
  double hang_timeout_s = 40;         // wall seconds one point may take before its worker is killed
  double start_timeout_s = 60;        // wall seconds a worker may take to start (CUDA, libraries)
  const StopRequest* stop = nullptr;  // stop_now() abandons the point in flight
};

// The hang limit when --hang-timeout is not given: every sampling phase is bounded by
// --point-timeout, and a point has a few besides sampling (prepare, two verifications, warm-up,
// kernel tracing), so 5x that plus 30 s for a slow prepare or verification of a large shape.
double default_hang_timeout_s(double point_timeout_s);

class ChildProcess;

class Supervisor final : public Executor {
 public:
  explicit Supervisor(SupervisorOptions options);
  ~Supervisor() override;
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts the first worker and returns its engines. Throws std::runtime_error with the reason
  // (and the worker's last stderr lines) when it cannot start.
  const std::vector<WorkerEngine>& start();
  // Options sent with every point (set after start(), which tells the CPU's thread count).
  void set_run_options(const RunOptions& options) { run_ = options; }

  bool has_engine(DeviceKind kind) const override;
  using Executor::fingerprint;
  const Fingerprint& fingerprint(DeviceKind kind) override;
  // A group's rows carry its worker's fingerprint (started here if none runs yet; the default
  // worker's where it cannot start).
  const Fingerprint& fingerprint(const Provider& provider) override;
  std::optional<Result> run(const Point& point) override;

  // Workers started so far (the first one included).
  int64_t workers_started() const { return workers_started_; }

 private:
  void spawn(const WorkerGroup& group);  // a new worker of `group`, hello read; throws on failure
  void retire(const std::string& group, bool kill);
  ChildProcess* worker(const std::string& group) const;  // null when none runs
  // The environment a group's worker is started with on top of this process's.
  static std::vector<std::string> group_environment(const WorkerGroup& group);
  // Hands `request` to a live worker of `group`, starting one where needed; "" once sent,
  // else why not.
  std::string send(const WorkerGroup& group, const std::string& request);
  // The row of a point whose worker gave no reply: it died, or it `hung` (killed here). The
  // worker is retired.
  Result lost_point(const Point& point, const std::string& group, bool hung,
                    int64_t oom_kills_before);
  // The engine of `kind` that a group's worker has (null when none, or no such worker yet).
  const WorkerEngine* engine(DeviceKind kind, const std::string& group = "") const;
  Result fault_row(const Point& point, Status status, Fault fault, std::string reason) const;

  SupervisorOptions options_;
  RunOptions run_;
  std::map<std::string, std::unique_ptr<ChildProcess>> workers_;  // by group name
  // Each group's engines, as its worker's hello described them ("": the default group).
  std::map<std::string, std::vector<WorkerEngine>> engines_;
  // Each group's providers' own fingerprint entries, from its worker's hello.
  std::map<std::string, std::map<std::string, Fingerprint>> provider_entries_;
  // The fingerprint of each provider's rows, built once.
  std::map<std::string, Fingerprint> provider_fingerprints_;
  int64_t workers_started_ = 0;
};

}  // namespace attnprof
