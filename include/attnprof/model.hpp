// The FLOP and byte model: exact operation counts and minimum traffic for a Spec.
// The formulas are printed in docs/method.md; every result row names the convention.
#pragma once

#include <cstdint>
#include <string_view>

#include "attnprof/spec.hpp"

namespace attnprof {

// Number of (query, key) pairs the mask leaves visible, per (batch, head). Exact, O(1).
int64_t visible_pairs(const Mask& mask, int64_t q_len, int64_t kv_len);
// Same count by looping over every pair; the definition the closed form is tested against.
int64_t visible_pairs_brute_force(const Mask& mask, int64_t q_len, int64_t kv_len);

// Forward FLOPs: 2*D per visible pair for S = QK^T and 2*Dv for O = PV
// (D == Dv gives the usual 4*D), times batch * q_heads. Softmax and scaling are not counted.
double forward_flops(const Spec& s);
// Backward FLOPs: 2.5x the forward matmul work (five matmuls of the size of the forward's two).
double backward_flops(const Spec& s);
// FLOPs of the spec's mode: fwd, bwd, or fwd + bwd (3.5x forward).
double flops(const Spec& s);

// Minimum bytes moved through device memory by the spec's mode: each tensor read or written
// exactly once; K and V once per KV head (GQA-aware), not once per query head. A paged cache
// counts the whole pages its sequences hold and its int32 block table.
double min_bytes(const Spec& s);

// Bytes of the tensors a provider must hold: inputs and outputs of the mode (Q, K, V, O,
// and for backward dO, dQ, dK, dV). The floor of any implementation's peak memory.
int64_t io_bytes(const Spec& s);

inline constexpr std::string_view kFlopConvention =
    "fwd=2*(D+Dv)*visible_pairs*B*Hq (exact mask count); bwd=2.5*fwd; fwd_bwd=3.5*fwd";
inline constexpr std::string_view kByteConvention = "each tensor once; K,V once per KV head";

}  // namespace attnprof
