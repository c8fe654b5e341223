// The block table of a paged KV cache (Spec::page_size): which page of the cache holds each
// sequence's keys. Pages are scattered by the seed, so no provider reads pages that happen to lie
// in order, and the table is the same for every provider of a point.
#pragma once

#include <cstdint>
#include <vector>

#include "attnprof/spec.hpp"

namespace attnprof {

// What the last page's unused tail holds (keys kv_len .. pages_per_seq * page_size - 1), and the
// keys past each sequence's end in a ragged batch (ragged.hpp): a
// finite value far from any input (|inputs| < 3.5), exact in every dtype, so a kernel that gives a
// tail key weight fails verification, while one that reads the tail and multiplies it by zero
// (cuDNN's paged prefill engine does) passes, as it would with any finite data there. NaN would
// fail the latter too: see docs/method.md, "Paged KV caches".
inline constexpr float kPageTailValue = 1024.0f;

// (batch, pages_per_seq) page ids, row-major: entry b * pages_per_seq + p is the page holding
// keys [p * page_size, (p + 1) * page_size) of sequence b. A permutation of 0 .. batch *
// pages_per_seq - 1 drawn from `seed` (Fisher-Yates on splitmix64). Empty when not paged.
std::vector<int32_t> block_table(const Spec& spec, uint64_t seed);

}  // namespace attnprof
