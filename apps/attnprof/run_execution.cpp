#include "run_execution.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "composition.hpp"

namespace attnprof::cli {

bool Execution::use_cuda(const std::string& device) const {
  if (device == "cuda" && !cuda_ok_)
    throw std::runtime_error(fmt::format("--device cuda: {}", cuda_unavailable()));
  return device == "cuda" || (device == "auto" && cuda_ok_);
}

void Execution::open_in_process() {
  cpu_ = make_cpu_engine(options_.threads);
  if (options_.device != "cpu") cuda_ = make_cuda_engine(0);
  cpu_name_ = cpu_->device().name;
  cpu_threads_ = cpu_->device().threads;
  cpu_memory_ = cpu_->device().memory_bytes;
  cuda_built_ = cuda_ != nullptr;
  if (cuda_) {
    cuda_ok_ = cuda_->availability().available;
    cuda_reason_ = cuda_->availability().reason;
    cuda_name_ = cuda_->device().name;
    cuda_memory_ = cuda_->device().memory_bytes;
    cuda_cc_major_ = cuda_->device().cc_major;
    cuda_cc_minor_ = cuda_->device().cc_minor;
    cuda_sm_count_ = cuda_->device().sm_count;
  }
}

void Execution::open() {
  if (options_.in_process) {
    open_in_process();
    return;
  }
  SupervisorOptions so;
  // --device cpu: a worker without a CUDA context; otherwise the worker looks for a GPU.
  so.device = options_.device == "cpu" ? "cpu" : "auto";
  so.threads = options_.threads;
  so.hang_timeout_s = options_.hang_timeout_s;
  so.stop = &stop_;
  supervisor_ = std::make_unique<Supervisor>(so);
  for (const WorkerEngine& e : supervisor_->start()) {
    if (e.kind == DeviceKind::cpu) {
      cpu_name_ = e.device;
      cpu_threads_ = e.threads;
      cpu_memory_ = e.memory_bytes;
    } else {
      cuda_built_ = true;
      cuda_ok_ = e.available;
      cuda_reason_ = e.reason;
      cuda_name_ = e.device;
      cuda_memory_ = e.memory_bytes;
      cuda_cc_major_ = e.cc_major;
      cuda_cc_minor_ = e.cc_minor;
      cuda_sm_count_ = e.sm_count;
    }
  }
}

RunDevices Execution::devices(bool on_cuda) const {
  Device d;
  d.kind = on_cuda ? DeviceKind::cuda : DeviceKind::cpu;
  d.name = device_name(on_cuda);
  d.memory_bytes = memory_bytes(d.kind);
  d.threads = cpu_threads_;
  if (on_cuda) {
    d.cc_major = cuda_cc_major_;
    d.cc_minor = cuda_cc_minor_;
    d.sm_count = cuda_sm_count_;
    return {true, "", d};
  }
  if (options_.device == "cpu") return {false, "this run is on the CPU (--device cpu)", d};
  return {false, cuda_unavailable(), d};
}

Executor& Execution::executor(RunOptions& ro) {
  ro.threads = cpu_threads_;
  if (supervisor_) {
    supervisor_->set_run_options(ro);
    return *supervisor_;
  }
  in_process_ = make_in_process_executor(Engines{cpu_.get(), cuda_.get()}, ro, point_hooks());
  return *in_process_;
}

}  // namespace attnprof::cli
