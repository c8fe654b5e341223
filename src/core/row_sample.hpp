// The rows a host check compares (internal to src/core): all of them within the cost budget, a
// seeded sample that covers every (batch, head) and query-tile edge beyond it. rows_to_check and
// cross_check_rows themselves are public (verify.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "attnprof/inputs.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/verify.hpp"

namespace attnprof {

// The sample's query tile: its first and last rows are checked in every (batch, head).
inline constexpr int64_t kSampleTile = 16;

// fp64 FLOPs of the forward reference of every row: 2*B*Hq*Nq*Nk*(D+Dv).
double forward_check_flops(const Spec& s);
// True when every row is checked: options.full, or the forward reference within
// options.full_check_flops.
bool check_all_rows(const Spec& s, const VerifyOptions& options);

// Small deterministic generator for the seeded samples (splitmix64 stream).
struct Rng {
  uint64_t state;
  uint64_t next() { return state = splitmix64(state); }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

}  // namespace attnprof
