// The fp64 reference of many query rows of one (batch, head) at once through BLAS (dgemm), for the
// host's checks (host_checks.cpp): S = scale * Q K^T over the keys the rows can see, each row's
// softmax over its visible keys, O = P V. The same function as reference_row, for a block.
#pragma once

#include <cstdint>
#include <vector>

#include "attnprof/spec.hpp"

namespace attnprof {

// Rows per block: the score block is kReferenceBlockRows x kv_len doubles.
inline constexpr int64_t kReferenceBlockRows = 128;

struct BlockRef {
  std::vector<double> o;    // n x Dv
  std::vector<double> lse;  // n (natural log; -inf for a row that sees no key)
  // n: sqrt(sum_j P_ij^2 |v_j|^2), the norm rounding P moves O_i by (RowCheck::floor of O rows)
  std::vector<double> floor;
};

// The n query rows rows[0..n) (ascending) of one (batch, head): q is its (q_len x D) slice, k and
// v the (kv_len x D) and (kv_len x Dv) slices of its KV head, all row-major doubles; `sink` the
// head's sink logit (kNoSink: none). The spec's softcap caps the scores.
BlockRef reference_block(const Spec& spec, const std::vector<double>& q,
                         const std::vector<double>& k, const std::vector<double>& v,
                         const int64_t* rows, int64_t n, double sink);

}  // namespace attnprof
