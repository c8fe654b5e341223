// Where `attnprof run`, `trace` and `tune` run their points: in a worker process under a
// supervisor (the default; a provider's worker group gets a worker of its own) or in this process
// (--in-process). Tells which devices can run before the grid is chosen.
#pragma once

#include <memory>
#include <string>

#include "attnprof/engine.hpp"
#include "attnprof/interrupt.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/supervisor.hpp"
#include "attnprof/sweep.hpp"
#include "provider_choice.hpp"

namespace attnprof::cli {

struct ExecutionOptions {
  bool in_process = false;
  std::string device = "auto";  // --device: auto, cpu, cuda
  int threads = 0;              // --threads (0: all)
  double hang_timeout_s = 40;   // supervisor only
};

class Execution {
 public:
  Execution(ExecutionOptions options, StopRequest& stop)
      : options_(std::move(options)), stop_(stop) {}

  // Creates the engines, or starts the first worker (throws when it cannot start).
  void open();
  // The executor for `ro`; sets ro.threads to the CPU engine's thread count.
  Executor& executor(RunOptions& ro);

  bool cuda_ok() const { return cuda_ok_; }
  // Whether the points run on CUDA, by the user's --device: cuda (refused with the reason where
  // no CUDA device can run: std::runtime_error), or auto where one can. After open().
  bool use_cuda(const std::string& device) const;
  std::string cuda_unavailable() const {
    return cuda_built_ ? cuda_reason_ : "CUDA is not built into this binary";
  }
  // What a run on CUDA (`on_cuda`) or on the CPU can use, for the providers' choice
  // (provider_choice.hpp).
  RunDevices devices(bool on_cuda) const;
  const std::string& device_name(bool on_cuda) const { return on_cuda ? cuda_name_ : cpu_name_; }
  // Total memory of the device of `kind` a point may use (0 when unknown).
  int64_t memory_bytes(DeviceKind kind) const {
    return kind == DeviceKind::cuda ? cuda_memory_ : cpu_memory_;
  }
  std::string where() const { return supervisor_ ? "in a worker process" : "in-process"; }

 private:
  void open_in_process();

  ExecutionOptions options_;
  StopRequest& stop_;
  std::unique_ptr<Supervisor> supervisor_;
  std::unique_ptr<Engine> cpu_, cuda_;
  std::unique_ptr<Executor> in_process_;
  std::string cpu_name_, cuda_name_, cuda_reason_;
  int cpu_threads_ = 1;
  int64_t cpu_memory_ = 0, cuda_memory_ = 0;
  int cuda_cc_major_ = 0, cuda_cc_minor_ = 0, cuda_sm_count_ = 0;
  bool cuda_built_ = false, cuda_ok_ = false;
};

}  // namespace attnprof::cli
