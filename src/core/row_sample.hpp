// The rows and groups verification checks (internal to src/core): all of them on small shapes,
// a stratified, seeded sample on large ones. rows_to_check itself is public (verify.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "attnprof/inputs.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/verify.hpp"

namespace attnprof {

// True when B*Hq*Nq*Nk*D is small enough to check every row.
bool check_all_rows(const Spec& s, const VerifyOptions& options);

// Small deterministic generator for the seeded samples (splitmix64 stream).
struct Rng {
  uint64_t state;
  uint64_t next() { return state = splitmix64(state); }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

}  // namespace attnprof
