// The fp64 reference: attention computed in double precision from the exact (already rounded)
// inputs of include/attnprof/inputs.hpp. The oracle behind every verified point and behind the
// cpu.reference provider.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "attnprof/inputs.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

// Flat index of element (b, h, pos, d) of a tensor with `heads` heads, `len` positions and
// `dim` features in the spec's layout.
int64_t flat_index(const Spec& spec, int64_t b, int64_t h, int64_t pos, int64_t dim_index,
                   int64_t heads, int64_t len, int64_t dim);

// Host copies of one (batch, head) slice of an input, regenerated from the seed: len x dim,
// row-major, in double.
std::vector<double> input_slice(const Spec& spec, uint64_t seed, InputPattern pattern,
                                TensorId tensor, int64_t b, int64_t h);

// Forward reference for one query row: out (Dv values) and lse (natural log).
// k and v are the (kv_len x D) and (kv_len x Dv) slices of the row's KV head. The spec's softcap
// caps each scaled score; `sink` is the row's head's sink logit (Spec::sinks; -inf: none), which
// joins the denominator and the LSE.
// A query that sees no key (bottom-right or window masks with q_len > kv_len) has o = 0 and
// lse = -inf (log of an empty sum; the sink's logit with sinks); the verifier accepts an
// infinite lse of either sign there.
struct RowRef {
  std::vector<double> o;
  double lse = 0;
};
inline constexpr double kNoSink = -std::numeric_limits<double>::infinity();
RowRef reference_row(const Spec& spec, const double* q_row, const std::vector<double>& k,
                     const std::vector<double>& v, int64_t i, double sink);
// The sink logit of query head h under `fill` (kNoSink when the spec has no sinks).
double sink_of(const Spec& spec, const InputFill& fill, int64_t h);
// A scaled score after the spec's softcap (unchanged without one).
double capped(const Spec& spec, double s);

// dQ of one query row (D values): the backward of reference_row for the loss sum(dO * O), from
// the row's q and dO (Dv values). Cost O(kv_len * (D + Dv)); the verifier checks dQ rows of
// large shapes with it without computing a whole group.
std::vector<double> reference_row_dq(const Spec& spec, const double* q_row, const double* do_row,
                                     const std::vector<double>& k, const std::vector<double>& v,
                                     int64_t i);

// Backward reference for one (batch, KV head) group: dQ for the group's query heads, dK and dV
// for the KV head. Sizes: dq (group x q_len x D), dk (kv_len x D), dv (kv_len x Dv).
struct GroupGrads {
  std::vector<double> dq, dk, dv;
};
GroupGrads reference_group_grads(const Spec& spec, uint64_t seed, InputPattern pattern, int64_t b,
                                 int64_t kv_head);
// The same from slices already in hand: q (group x q_len x D) and d_o (group x q_len x Dv) hold
// the group's query heads back to back; k (kv_len x D), v (kv_len x Dv).
GroupGrads group_grads_from_slices(const Spec& spec, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v,
                                   const std::vector<double>& d_o);

}  // namespace attnprof
