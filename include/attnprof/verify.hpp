// Verification of a run's outputs against the fp64 reference computed from the same rounded
// inputs. Large shapes check a stratified sample of rows; every output element is scanned for
// the NaN poison.
#pragma once

#include <cstdint>
#include <vector>

#include "attnprof/inputs.hpp"
#include "attnprof/io.hpp"
#include "attnprof/result.hpp"
#include "attnprof/spec.hpp"

namespace attnprof {

struct Tolerance {
  double output = 0;    // bound on the per-row relative L2 error of O
  double gradient = 0;  // bound for dQ, dK, dV rows
  double lse_abs = 0;   // bound on |lse - lse_ref| (fp32 tolerance)
};
// Bounds per dtype (docs/method.md explains each).
Tolerance tolerance_for(DType dtype);

struct VerifyOptions {
  // Check every row when B*Hq*Nq*Nk*D is at most this; otherwise a stratified sample.
  double full_check_work = 1ull << 28;
  int64_t sample_rows = 96;  // random rows on top of the structural ones (edges, diagonal, ...)
  // dK/dV need the whole (batch, KV head) group: every row's softmax. A group is checked when
  // group_size*Nq*Nk*(D+Dv) is at most this (about 1 s of fp64 per group on one core, three
  // groups at most); larger backward shapes check dQ rows only and say so in
  // VerifyResult::detail.
  double grad_group_work = 1ull << 30;
};

// A row of O: (batch, q head, query index).
struct RowIndex {
  int64_t b = 0, h = 0, i = 0;
  bool operator==(const RowIndex&) const = default;
};

// The rows to check: all, or the stratified sample (first and last rows, tile edges at
// multiples of 64 and 128 +-1, the last batch / head / KV group, rows at the mask's diagonal
// edge, plus seeded random rows). Sorted and unique.
std::vector<RowIndex> rows_to_check(const Spec& spec, const VerifyOptions& options, uint64_t seed);

// The full check: NaN scan of every element, then per-row relative L2 errors on the chosen
// rows (and gradient rows for bwd modes), gated on tolerance_for(spec.dtype).
VerifyResult verify_outputs(const Spec& spec, const InputFill& ctx, const HostOutputs& out,
                            const VerifyOptions& options = {});

// The verdict: checked, no NaN/inf left, worst row error within its bound, and the LSE (where
// exposed) within lse_tolerance. passed when true, incorrect otherwise.
bool verify_passed(const VerifyResult& v);

}  // namespace attnprof
