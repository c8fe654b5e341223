#include "attnprof/worker.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "attnprof/runner.hpp"
#include "run/protocol.hpp"

namespace attnprof {

namespace {

// Writes one line to the protocol descriptor; false once the supervisor is gone.
bool put_line(int fd, const std::string& line) {
  const std::string data = line + '\n';
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

WorkerEngine describe(Engine& engine) {
  WorkerEngine w;
  w.kind = engine.kind();
  const Availability a = engine.availability();
  w.available = a.available;
  w.reason = a.reason;
  w.device = engine.device().name;
  w.threads = engine.device().threads;
  w.memory_bytes = engine.device().memory_bytes;
  w.cc_major = engine.device().cc_major;
  w.cc_minor = engine.device().cc_minor;
  w.sm_count = engine.device().sm_count;
  w.env = engine_fingerprint(engine);
  return w;
}

Provider* find(const std::vector<Provider*>& providers, const std::string& name) {
  for (Provider* p : providers) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

Result serve(const protocol::Request& request, const std::vector<Provider*>& providers,
             const HooksFactory& hooks, Engine* cpu, Engine* cuda) {
  Provider* provider = find(providers, request.provider);
  if (provider == nullptr) {
    Result r;
    r.provider = request.provider;
    r.spec = request.spec;
    r.seed = request.options.seed;
    r.status = Status::failed;
    r.fault = Fault::provider;
    r.reason = fmt::format("the worker has no provider '{}'", request.provider);
    return r;
  }
  Engine* engine = provider->device_kind() == DeviceKind::cpu ? cpu : cuda;
  if (engine == nullptr) {
    return unrun_row(
        *provider, request.spec, request.options.seed, Status::not_supported, Fault::not_supported,
        fmt::format("no {} engine in this worker", to_string(provider->device_kind())));
  }
  std::unique_ptr<PointHooks> h = hooks ? hooks(request.options, *engine) : nullptr;
  return run_point(request.spec, *provider, *engine, request.options, h.get(), request.settings);
}

}  // namespace

int serve_worker(const WorkerOptions& options, const std::vector<Provider*>& providers,
                 const HooksFactory& hooks) {
  // Die with the supervisor, even when it is killed with SIGKILL: a hung point must not outlive
  // the sweep. The parent check closes the window before prctl() took effect.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (options.parent_pid != 0 && ::getppid() != options.parent_pid) return 1;

  // Replies go to a private copy of stdout; stdout itself becomes stderr, so whatever providers
  // and libraries print cannot break the protocol (and ends up in the supervisor's stderr tail).
  std::fflush(stdout);
  const int protocol_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("attnprof worker: cannot set up its output");
    return 1;
  }

  std::unique_ptr<Engine> cpu = make_cpu_engine(options.threads);
  std::unique_ptr<Engine> cuda;
  if (options.device != "cpu") cuda = make_cuda_engine(0);

  protocol::Hello hello;
  hello.pid = ::getpid();
  hello.engines.push_back(describe(*cpu));
  if (cuda) hello.engines.push_back(describe(*cuda));
  for (Provider* p : providers) {
    if (Fingerprint f = p->fingerprint(); !f.empty()) hello.providers[p->name()] = std::move(f);
  }
  if (!put_line(protocol_fd, protocol::encode_hello(hello))) return 1;

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    protocol::Request request;
    try {
      request = protocol::decode_request(line);
    } catch (const std::exception& e) {
      fmt::print(stderr, "attnprof worker: {}\n", e.what());
      return 2;
    }
    const Result r = serve(request, providers, hooks, cpu.get(), cuda.get());
    if (!put_line(protocol_fd, protocol::encode_reply(r))) return 1;
  }
  return 0;
}

}  // namespace attnprof
