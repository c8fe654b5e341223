// Running points: one (Spec, Provider) at a time, every failure caught at the point boundary
// and turned into a Result. The sweep feeds each Result to the sinks as it finishes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/provider.hpp"
#include "attnprof/result.hpp"
#include "attnprof/sink.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/verify.hpp"

namespace attnprof {

struct RunOptions {
  uint64_t seed = 20261129;
  MeasureOptions measure{};
  VerifyOptions verify{};
  int warmup_launches = 1;
  bool trace_kernels = true;
  int threads = 1;  // CPU providers
};

// Runs one point end to end: supports -> memory estimate -> prepare -> poison, launch,
// verify -> warm-up -> measure -> verify the last timed output -> kernels. Never throws.
Result run_point(const Spec& spec, Provider& provider, Engine& engine, const RunOptions& options);

// Fills the derived figures of a passed row (TFLOP/s, GB/s, tokens/s, bound).
void derive_rates(Result& r);

}  // namespace attnprof
