// The fp64 reference of a check's forward rows, kept for the next check that asks for the same
// rows of the same inputs (host_checks.cpp): the check after a point's timed launches, and every
// other provider of the same shape in a sweep (they see bit-identical inputs), reuse it instead
// of computing it again. It holds the reference, never a verdict: each check still compares its
// own outputs. One entry, the latest, within kReferenceCacheBytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/reference_block.hpp"

namespace attnprof {

// The most bytes one kept reference may hold (larger ones are computed and dropped).
inline constexpr int64_t kReferenceCacheBytes = int64_t{512} << 20;

// The blocks of one check, in the order host_checks.cpp computes them: per (batch, head) run of
// rows, its blocks of kReferenceBlockRows rows.
struct ForwardRefs {
  std::vector<std::vector<BlockRef>> runs;
  int64_t bytes() const;
};

// The kept reference for `key`, or null.
std::shared_ptr<const ForwardRefs> find_forward_refs(const std::string& key);
// Keeps `refs` under `key` (replacing the last one) when it fits kReferenceCacheBytes.
void keep_forward_refs(const std::string& key, std::shared_ptr<const ForwardRefs> refs);
// Checks served from the cache so far in this process (for tests and the sweep's time split).
int64_t forward_refs_hits();

}  // namespace attnprof
