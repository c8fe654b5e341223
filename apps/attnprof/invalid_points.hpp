// Points of a grid that cannot exist, e.g. causal-br with q_len > kv_len when --seq and --kv-seq
// are crossed: the point lifecycle gives each a not_supported row (fault `invalid`) with
// Spec::validate()'s reason and hands it to no provider, while the rest of the grid runs. A grid
// with no valid point is refused instead, here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnprof/spec.hpp"
#include "attnprof/sweep.hpp"

namespace attnprof::cli {

// Why `spec` cannot exist, in one line ("; " between reasons); "" when it is valid.
std::string invalid_reason(const Spec& spec);

// Throws std::invalid_argument "point <label>: <reason>" with the first spec's reason when no
// spec of `specs` is valid (a grid of nothing but impossible points is a mistake, not a sweep).
void require_a_valid_spec(const std::vector<Spec>& specs);

}  // namespace attnprof::cli
