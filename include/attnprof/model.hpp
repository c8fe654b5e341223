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
// A ragged batch (ragged.hpp): the sum over its sequences, each at its own lengths.
double forward_flops(const Spec& s);
// Backward FLOPs: 2.5x the forward matmul work (five matmuls of the size of the forward's two).
double backward_flops(const Spec& s);
// FLOPs of the spec's mode: fwd, bwd, or fwd + bwd (3.5x forward).
double flops(const Spec& s);

// The keys some query of the spec sees, [first, first + keys): rows' visible intervals never move
// back and consecutive ones overlap, so their union is one interval (a sliding window's decode
// step: its W keys; causal prefill: all of them). `pages`: the pages of a paged cache that hold
// them (0 when contiguous).
struct KeysRead {
  int64_t first = 0, keys = 0, pages = 0;
};
KeysRead keys_read(const Spec& s);

// Minimum bytes moved through device memory by the spec's mode: each tensor read or written
// exactly once; K and V once per KV head (GQA-aware), not once per query head, and only the keys
// some query sees (keys_read: a windowed decode step reads its window, not the cache). A paged
// cache counts the whole pages that hold those keys and their int32 block table entries. A ragged
// batch: the sum over its sequences (their rows only, none of the padding) and its lengths.
double min_bytes(const Spec& s);

// Bytes of the tensors a provider must hold: inputs and outputs of the mode (Q, K, V, O,
// and for backward dO, dQ, dK, dV). The floor of any implementation's peak memory.
int64_t io_bytes(const Spec& s);

inline constexpr std::string_view kFlopConvention =
    "fwd=2*(D+Dv)*visible_pairs*B*Hq (exact mask count); bwd=2.5*fwd; fwd_bwd=3.5*fwd";
inline constexpr std::string_view kByteConvention =
    "each tensor once; K,V once per KV head, visible keys only";

}  // namespace attnprof
