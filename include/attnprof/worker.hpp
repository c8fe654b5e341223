// The worker: `attnprof worker`, the process a supervisor (supervisor.hpp) runs points in. It
// owns the engines (CUDA context, library handles) and serves one point after another until
// its input ends; the supervisor replaces it when it dies, hangs or says it is poisoned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/engine.hpp"
#include "attnprof/env.hpp"
#include "attnprof/runner.hpp"

namespace attnprof {

// One engine of a worker as the supervisor sees it (the worker's hello).
struct WorkerEngine {
  DeviceKind kind = DeviceKind::cpu;
  bool available = false;
  std::string reason;  // why not, when !available
  std::string device;  // the device's name
  int threads = 1;     // CPU: threads available to providers
  int64_t memory_bytes = 0;
  // CUDA: what providers' supports() read (the default set is chosen in the supervisor's
  // process); 0 from a worker that did not send them.
  int cc_major = 0, cc_minor = 0, sm_count = 0;
  Fingerprint env;  // engine_fingerprint(engine)
};

struct WorkerOptions {
  std::string device = "auto";  // auto or cuda: a CUDA engine too, where built; cpu: CPU only
  int threads = 0;              // CPU threads (0: all)
  int64_t parent_pid = 0;       // exit at once when the parent is not this process (0: no check)
};

// Speaks the protocol of src/run/protocol.hpp on the process's stdin and stdout: a hello, then
// one reply per request until end of input. Anything the providers or their libraries print to
// stdout is moved to stderr, which the supervisor keeps the last lines of. `providers` are the
// ones it serves (the registry: the composition root hands them in, so this layer knows no
// provider); `hooks` makes the hooks a request's options ask for (attnprof trace). Returns the
// exit code.
int serve_worker(const WorkerOptions& options, const std::vector<Provider*>& providers,
                 const HooksFactory& hooks = {});

// The environment fingerprint of rows run on `engine`: environment_fingerprint(device) plus the
// engine's own entries (driver, library versions).
Fingerprint engine_fingerprint(Engine& engine);

}  // namespace attnprof
