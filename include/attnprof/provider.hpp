// The provider interface: one implementation of attention, one file each, one line in the
// registry table (src/core/registry.cpp). "Not supported" is a value, never an exception.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnprof/device.hpp"
#include "attnprof/inputs.hpp"
#include "attnprof/memory.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// Thrown when an allocation fails for lack of memory; the runner records oom.
class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

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

// Host copies of a run's outputs (values converted to float), for verification. Tensors a mode
// does not produce are left empty. Layout is the spec's layout.
struct HostOutputs {
  std::vector<float> o;
  std::vector<float> lse;  // (B, Hq, Nq) natural-log log-sum-exp of the scaled scores, if exposed
  std::vector<float> dq, dk, dv;
};

// What prepare() gets besides the spec: how to fill inputs and where memory is accounted.
struct PrepareContext {
  uint64_t seed = 0;
  InputPattern pattern = InputPattern::random;
  int threads = 1;  // CPU providers: threads to use
  // Where the run reports the buffers it allocates (may be null: then nothing is tracked).
  MemoryTracker* tracker = nullptr;
};

// One prepared point: buffers allocated, inputs filled, plans built. Never timed.
class Run {
 public:
  virtual ~Run() = default;
  // Fill every output buffer with NaN (the poison the verifier scans for).
  virtual void poison_outputs() = 0;
  // Enqueue one execution of the spec's mode on `stream`. Synchronous for CPU providers.
  // Throws on a provider or library error (the runner records it as failed).
  virtual void launch(Stream& stream) = 0;
  // Copy outputs to the host (synchronizes).
  virtual HostOutputs read_outputs() = 0;
  // Bytes this run holds beyond inputs and outputs (scores, workspace, temporaries).
  virtual int64_t workspace_bytes() const { return 0; }
  // Bytes of all buffers this run allocated (inputs, outputs, workspace): its peak footprint,
  // untracked_peak_bytes() included.
  virtual int64_t allocated_bytes() const = 0;
  // Peak bytes the run held outside the MemoryTracker (a framework's own allocator, such as
  // PyTorch's caching allocator) over everything it launched so far; the runner adds them to
  // the tracker's peak.
  virtual int64_t untracked_peak_bytes() const { return 0; }
  // What the provider wants said about this point beside the numbers, in words: for example
  // which backend a dispatcher chose and why it rejected the others. "" for nothing.
  virtual std::string note() const { return {}; }

  // Optional, for cold timing of short launches (the CUDA engine times launches under ~100 us
  // in batches): hold `copies` copies of the inputs and outputs, with the same values, so that
  // consecutive launches read memory that is not in L2. Returns the number of copies now held,
  // at most `copies`; 1 (the default) means "not supported", and batches then re-read one copy.
  // Copies beyond the first are a measurement device, not the point's footprint: allocate them
  // untracked (DeviceBuffer(bytes, nullptr)). rotate_inputs(1) releases them. Never timed.
  virtual int rotate_inputs(int copies) {
    (void)copies;
    return 1;
  }
  // Which copy the following launch() calls and read_outputs() use (0 <= copy < the count
  // rotate_inputs() returned). The engine selects copy 0 and calls rotate_inputs(1) before
  // measure() returns, so the last timed output of copy 0 is what the runner verifies.
  virtual void select_copy(int copy) { (void)copy; }
};

// Thrown by prepare() when a library rejects the point only once it is built (a cuDNN graph
// that fails validation, heuristics or support checks). The runner records Status::not_supported
// with reason() as the row's reason; what() is "not_supported: <reason>".
class NotSupported : public std::runtime_error {
 public:
  explicit NotSupported(const std::string& reason)
      : std::runtime_error("not_supported: " + reason), reason_(reason) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// Where a provider's points run under the supervisor. Providers that bring their own copies of
// libraries others also load (LibTorch ships its own cuBLAS and cuDNN) run in a worker process
// of their own group, started with `library_path` first on LD_LIBRARY_PATH, so that one process
// never mixes two versions of a library. The default group ("") is the worker every other
// provider shares.
struct WorkerGroup {
  std::string name;
  std::string library_path;  // ':'-separated folders to put first; "" leaves the path as it is
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string name() const = 0;         // "cpu.naive", "cuda.naive", "cudnn.sdpa"
  virtual std::string description() const = 0;  // which upstream kernel or algorithm runs
  virtual DeviceKind device_kind() const = 0;
  virtual Availability availability() const { return {}; }
  virtual WorkerGroup worker_group() const { return {}; }
  // Width of the provider's element indexing: a tensor with more elements than 2^index_bits()
  // is not_supported. 63 for 64-bit indexing.
  virtual int index_bits() const { return 63; }
  // Everything the provider cannot do for this spec, in words (shape, dtype, mask, mode).
  virtual Support supports(const Spec& spec, const Device& device) const = 0;
  // Bytes the provider expects to allocate for the spec (inputs, outputs and temporaries);
  // the runner marks a point oom without running it when this exceeds the device's memory.
  virtual int64_t estimate_bytes(const Spec& spec) const = 0;
  virtual std::unique_ptr<Run> prepare(const Spec& spec, const Device& device,
                                       const PrepareContext& ctx) = 0;
};

}  // namespace attnprof
