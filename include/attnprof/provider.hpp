// The provider interface: one implementation of attention, one file each, one line in the
// registry table (src/registry/registry.cpp). "Not supported" is a value, never an exception.
// The harness owns every tensor of a point (io.hpp); a provider brings only its own workspace
// and plans. docs/design.md, "Adding a provider", walks through one.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/env.hpp"
#include "attnprof/fault.hpp"
#include "attnprof/io.hpp"
#include "attnprof/memory.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/traits.hpp"

namespace attnprof {

struct Support {
  bool ok = true;
  std::string reason;  // why not, in words, when !ok
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// Whether a provider can run at all in this process (built, library loaded, device present).
struct Availability {
  bool available = true;
  std::string reason;  // e.g. "not built: cuDNN frontend headers not found", "no CUDA driver"
};

// An execution stream. For CPU providers `native` is null and launches are synchronous; for
// CUDA providers it is the cudaStream_t the engine times on.
struct Stream {
  void* native = nullptr;
};

// What prepare() gets besides the spec and the tensors.
struct PrepareContext {
  int threads = 1;  // CPU providers: threads to use
  // The stream every launch of the run will use (engine.stream()); for providers whose
  // untimed setup must happen on it (an autograd graph follows the stream it was built on).
  Stream* stream = nullptr;
  // Where the run reports the buffers it allocates besides the harness's tensors (may be null:
  // then nothing is tracked).
  MemoryTracker* tracker = nullptr;
  // The point's values of the provider's declared settings (traits().settings); a setting not
  // given is absent: the provider's default. setting_of(ctx.settings, "name") reads one.
  Settings settings;
};

// One prepared point: workspace allocated, plans built. Never timed.
class Run {
 public:
  virtual ~Run() = default;
  // Every set of tensors later launches use, copy 0 first; never timed. The harness calls it
  // once after prepare() with copy 0, and again whenever it changes its copies (cold timing of
  // short launches rotates through copies, so that no launch reads inputs L2 still holds). A run
  // that keeps state tied to buffer addresses (pointer arrays, tensors wrapping the memory)
  // builds it here for every set; launches then name one of them.
  virtual void bind(std::span<const Io> sets) { (void)sets; }
  // Enqueue one execution of the spec's mode on `stream`, reading and writing `io` (one of the
  // bound sets). Synchronous for CPU providers. Throws on a provider or library error.
  virtual void launch(Stream& stream, const Io& io) = 0;
  // Untimed, after a launch whose outputs the harness is about to read: outputs a framework
  // keeps in memory of its own (PyTorch's allocator) are copied into `io`'s. Default: the launch
  // wrote `io` itself.
  virtual void publish(Stream& stream, const Io& io) {
    (void)stream;
    (void)io;
  }
  // Bytes this run holds beyond the harness's tensors (scores, workspace, temporaries).
  virtual int64_t workspace_bytes() const { return 0; }
  // Peak bytes the run held outside the MemoryTracker (a framework's own allocator, such as
  // PyTorch's caching allocator) over everything it launched so far; the harness adds them to
  // the tracker's peak.
  virtual int64_t untracked_peak_bytes() const { return 0; }
  // What the provider wants said about this point beside the numbers, in words: for example
  // which backend a dispatcher chose and why it rejected the others. "" for nothing.
  virtual std::string note() const { return {}; }
};

// Where a provider's points run under the supervisor. Providers that bring their own copies of
// libraries others also load (LibTorch ships its own cuBLAS and cuDNN) run in a worker process
// of their own group, started with `library_path` first on LD_LIBRARY_PATH, so that one process
// never mixes two versions of a library. The default group ("") is the worker every other
// provider shares. A group may start another program (`command`: Python providers run in
// `python3 -m attnprof._worker`), which is given `attnprof worker`'s options after it.
struct WorkerGroup {
  std::string name;
  std::string library_path;  // ':'-separated folders to put first; "" leaves the path as it is
  std::vector<std::string> command;  // argv before the worker options; empty: `attnprof worker`
  std::vector<std::string> env;      // "NAME=value" entries for the worker's environment
};

class Provider {
 public:
  virtual ~Provider() = default;
  // The declared facts (traits.hpp). name, description and device are traits too.
  virtual ProviderTraits traits() const = 0;
  std::string name() const { return traits().name; }
  DeviceKind device_kind() const { return traits().device; }

  virtual Availability availability() const { return {}; }
  virtual WorkerGroup worker_group() const { return {}; }
  // Entries this provider adds to its rows' environment fingerprint: the versions of the
  // libraries it loads ({"cudnn": "9.19.0"}, {"torch": "2.11.0"}).
  virtual Fingerprint fingerprint() const { return {}; }
  // Width of the provider's element indexing: a tensor with more elements than 2^index_bits()
  // is not_supported. 63 for 64-bit indexing.
  virtual int index_bits() const { return 63; }
  // Everything the provider cannot do for this spec, in words (shape, dtype, mask, mode).
  virtual Support supports(const Spec& spec, const Device& device) const = 0;
  // Bytes the provider expects to allocate for the spec beyond the harness's tensors (scores,
  // workspace, temporaries); the harness adds the tensors and marks a point oom without running
  // it when the sum exceeds the device's memory. `settings`: the point's (PrepareContext's).
  virtual int64_t workspace_estimate(const Spec& spec, const Settings& settings = {}) const = 0;
  // Builds the point over copy 0 of the tensors. Inputs are filled; in mode bwd, prepare()
  // computes the forward state its backward reads (O and, where it writes one, the LSE in `io`).
  virtual std::unique_ptr<Run> prepare(const Spec& spec, const Device& device,
                                       const PrepareContext& ctx, const Io& io) = 0;
};

}  // namespace attnprof
