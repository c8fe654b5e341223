// Typed faults: why a point did not pass, classified once, where the failure is caught, never by
// searching its message later (docs/design.md, "Faults"). Code that fails throws a FaultError of
// the right kind (the CUDA check throws sticky_device or device by the error code, cuBLAS and
// cuDNN wrappers library or oom, providers NotSupported or OutOfMemory); the point lifecycle
// catches once and writes the kind into the row; the supervisor adds timeout and crash.
#pragma once

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace attnprof {

enum class Fault {
  none,           // the point passed (or was judged incorrect: a verdict, not a fault)
  invalid,        // the spec is not a valid problem
  not_supported,  // the provider cannot run this spec (a value, never an error)
  oom,            // memory ran out (device or host), or would have by the estimate
  sticky_device,  // a CUDA error that poisons the context (illegal address, launch failure...)
  device,         // any other CUDA runtime error
  library,        // a library the provider calls failed (cuBLAS, cuDNN, PyTorch...)
  provider,       // the provider threw an error of no known kind
  timeout,        // no answer within the hang limit: the worker was killed
  crash,          // the worker died (signal or exit) during the point
  harness,        // attnprof itself failed (its device reference disagreed with the fp64 host's)
  // The harness's audits (docs/method.md, "What a provider cannot fake"):
  modified_inputs,  // the provider changed an input (the reason names it)
  out_of_bounds,    // the provider wrote past the end of a tensor (into its guard bytes)
  off_stream,       // kernels ran on a stream the timed stream does not wait for
  unwritten,        // a checked launch left output elements holding the poison
  stale,            // the outputs did not follow new inputs (a memoized result)
  implausible,      // a figure beyond what the device can physically do
};
std::string_view to_string(Fault f);
std::optional<Fault> parse_fault(std::string_view s);

class FaultError : public std::runtime_error {
 public:
  FaultError(Fault fault, const std::string& what) : std::runtime_error(what), fault_(fault) {}
  Fault fault() const { return fault_; }

 private:
  Fault fault_;
};

// A library rejected the point once it was built (a cuDNN graph failing its support checks);
// reason() is the row's reason, what() is "not_supported: <reason>".
class NotSupported : public FaultError {
 public:
  explicit NotSupported(const std::string& reason)
      : FaultError(Fault::not_supported, "not_supported: " + reason), reason_(reason) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// An allocation failed for lack of memory.
class OutOfMemory : public FaultError {
 public:
  explicit OutOfMemory(const std::string& what) : FaultError(Fault::oom, what) {}
};

// The kind of whatever was caught: a FaultError's own, oom for std::bad_alloc, provider for
// anything else.
Fault classify(const std::exception& e);
// The text of a row's reason for `e` (NotSupported's bare reason, else what()).
std::string fault_reason(const std::exception& e);

}  // namespace attnprof
