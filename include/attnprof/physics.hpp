// What no honest measurement can show (docs/method.md, "What a provider cannot fake"): a point
// whose FLOP/s exceed the device's dense matrix rate at its highest clock, or whose bytes per
// second exceed what the memory that must have served them delivers, was not measured: the
// provider skipped work, or ran it where the timer does not see. Such a row is incorrect with
// fault implausible and carries no figures.
#pragma once

#include <optional>
#include <string>

#include "attnprof/device.hpp"
#include "attnprof/peaks.hpp"
#include "attnprof/result.hpp"

namespace attnprof {

struct PhysicalLimits {
  double tflops = 0;  // FLOP/s no point of the dtype can exceed, TFLOP/s; 0: none known
  double tbps = 0;    // B/s a cold working set larger than the L2 cannot exceed, TB/s; 0: none
  std::string tflops_basis, tbps_basis;  // how each was derived, in words
};

// GPU: the dense tensor-core rate of the device's architecture (FLOP per clock per SM) for the
// fastest path a point of `dtype` may take (16-bit units for fp32, fp16 and bf16; fp8 units for
// fp8), times its SMs and its highest clock (cudaDevAttrClockRate); the datasheet's HBM
// bandwidth. Where the architecture or datasheet is not known, 1.5x the measured ceilings.
// CPU: 3x the measured BLAS and stream ceilings (a host's clock and caches move more).
PhysicalLimits physical_limits(const Device& device, DType dtype,
                               const std::optional<Peaks>& peaks);

// Why the timed row `r` (r.flops, r.bytes, r.timing set) cannot be a measurement on `device`, in
// words; "" when it can. Margins: 3% over the GPU limits (timer and clock readings), 25% more
// FLOP/s in modes bwd and fwd_bwd (the FLOP convention counts the recomputation of P, which an
// implementation that keeps P does not run); the bandwidth limit applies only to cold timing of
// working sets larger than the L2 (a warm or small one may be served by the cache).
std::string implausible_reason(const Result& r, const Device& device,
                               const std::optional<Peaks>& peaks);

}  // namespace attnprof
