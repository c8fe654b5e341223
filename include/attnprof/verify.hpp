// Verification of a run's outputs against the fp64 reference computed from the same rounded
// inputs (docs/method.md, "Verification"). A check compares output rows with their reference
// (RowChecks); judge_rows() turns the comparisons into the verdict. The host checks every row up
// to a cost budget (fp64 BLAS) and a sample that covers every (batch, head) beyond it; the CUDA
// engine checks every row of every output on the device (src/measure/cuda/device_check.cu).
// Every output element is scanned for the NaN poison.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
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
// The bounds a provider's rows are judged against: the dtype's, with the output bound loosened
// to what a quantized provider declares (ProviderTraits::output_tolerance, at most
// kMaxDeclaredTolerance).
Tolerance tolerance_for(DType dtype, const ProviderTraits& traits);

struct VerifyOptions {
  // Host: every row is checked (an fp64 BLAS reference) when the forward reference of all rows,
  // 2*B*Hq*Nq*Nk*(D+Dv) fp64 FLOPs, is at most this (about a second on two cores); beyond it
  // the sample of rows_to_check. `full` (--verify full) checks every row whatever it costs. The
  // CUDA engine checks every row on the device whatever the shape.
  double full_check_flops = double(1ull << 35);
  bool full = false;
  int64_t sample_rows = 96;  // random rows on top of the sample's structural ones
  // Launches checked after the measurement beyond the last timed one (a race that corrupts one
  // launch in ten): -1 lets the engine choose (the CUDA engine checks up to 10 more while their
  // checks cost under ~0.5 s together; the CPU engine none), N checks N more.
  int repeats = -1;
  // dK/dV need the whole (batch, KV head) group: every row's softmax. Beyond the full check the
  // host checks the first, the last and a random group when group_size*Nq*Nk*(D+Dv) is at most
  // this (about 1 s of fp64 per group on one core); larger backward shapes check dQ rows only
  // and say so in VerifyResult::detail.
  double grad_group_work = 1ull << 30;
};

// A row of O: (batch, q head, query index).
struct RowIndex {
  int64_t b = 0, h = 0, i = 0;
  bool operator==(const RowIndex&) const = default;
};
// Its flat index over the query rows, (b * q_heads + h) * q_len + i: RowCheck::row of O and dQ,
// and the LSE's element.
inline int64_t flat_row(const Spec& spec, const RowIndex& r) {
  return (r.b * spec.q_heads + r.h) * spec.q_len + r.i;
}

// The rows a host check compares: every row within options.full_check_flops (or with
// options.full); beyond it, in every (batch, head), the first and last row of every query tile of
// 16 (so a wrong tile of any size from 16 to 256, a wrong (batch, head), a wrong first or last
// row are seen wherever they are), the mask's structural rows (where the diagonal or the window's
// edge enters the keys or crosses a key-tile edge of 16..256) in the edge (batch, head) pairs,
// and options.sample_rows seeded random rows. Sorted and unique.
std::vector<RowIndex> rows_to_check(const Spec& spec, const VerifyOptions& options, uint64_t seed);
// A small stratified sample (the first, last and structural rows of the first and last (batch,
// head), 16 random rows): the rows a device check is cross-checked on against the host's fp64.
std::vector<RowIndex> cross_check_rows(const Spec& spec, uint64_t seed);
// The rows the launch on new input values is checked on (the stale check): the first, last and
// structural rows and 8 random rows of one seeded (batch, head) pair, so that the host's fp64
// regenerates one head's keys and values, not one per random row.
std::vector<RowIndex> fresh_check_rows(const Spec& spec, uint64_t seed);

// One output row compared with its reference. `row` is flat: (b * heads + h) * len + pos, over
// the tensor's own heads and length (query heads for O and dQ, KV heads for dK and dV).
struct RowCheck {
  int64_t row = 0;
  double err2 = 0;     // sum of squared errors (inf when an element is not finite)
  double ref2 = 0;     // sum of squared reference values
  double max_abs = 0;  // largest absolute error
  // A norm the row's error is also measured against, the magnitude a kernel's rounding moves the
  // row by even where the row itself nearly cancels (0: none). O rows: sqrt(sum_j P_ij^2 |v_j|^2),
  // what rounding P to the dtype before PV moves O_i by (in units of the roundoff); a row whose
  // weighted values happen to cancel has |O_i| far below it. dQ rows: scale * |sum_j P_ij k_j| *
  // sum_c |dO_ic O_ic|, how far dQ_i moves when D_i = dO_i . O_i is off by its own magnitude:
  // kernels compute D_i from O rounded to the dtype, and where dP_ij - D_i nearly cancels (a row
  // that sees few keys) that rounding is most of dQ_i's error.
  double floor = 0;
};

// What a check compared, per output.
struct RowChecks {
  std::vector<RowCheck> o, dq, dk, dv;
  // The LSE per row: (row, |lse - lse_ref|); 0 where both are the same infinity (a row that
  // sees no key), inf for a NaN.
  std::vector<std::pair<int64_t, double>> lse;
  int64_t nonfinite = 0;           // output elements that are NaN or inf (every element scanned)
  std::string first_nonfinite;     // the first of them, in words
  std::string sampling;            // "all", "all (device)", "sample"
  int64_t rows_checked = 0;        // rows of O (or dQ in mode bwd) compared
  std::vector<std::string> notes;  // what was left unchecked, and why
  std::string problem;             // a tensor of the wrong size: nothing is comparable
  // Device checks: the largest difference between a cross-checked row's error against the
  // device's reference and against the host's fp64 (check_disagreement); -1 when not checked.
  double disagreement = -1;
};

// The verdict: each row's relative L2 error against its tensor's bound, measured against the
// larger of the row's norm and its floor (gradients also against the RMS row norm of their tensor
// (dQ) or (batch, KV head) group (dK, dV)), the LSE's absolute error, the non-finite elements;
// the worst row named.
VerifyResult judge_rows(const Spec& spec, const RowChecks& checks);
// The same against given bounds (tolerance_for(dtype, traits)).
VerifyResult judge_rows(const Spec& spec, const RowChecks& checks, const Tolerance& tol);

// The host's check of host copies of the outputs: every element scanned, then the rows of
// rows_to_check (O, LSE, dQ) and whole (batch, KV head) groups of dK/dV for backward modes.
RowChecks check_on_host(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                        const VerifyOptions& options);
// The same on given rows (O, LSE and dQ rows) and (batch, KV head) groups (dK, dV; flat
// b * kv_heads + kv_head), without the scan: what a device check is cross-checked with.
RowChecks check_rows_on_host(const Spec& spec, const InputFill& fill, const HostOutputs& out,
                             const std::vector<RowIndex>& rows, const std::vector<int64_t>& groups);
// The largest difference, over the rows `host` compared, between each row's judged error in
// `device` and in `host` (both measured against the device's RMS row norms, which cover every
// row), and between their LSE errors: 0 when the two references agree, inf when `device` lacks a
// row `host` has.
double check_disagreement(const Spec& spec, const RowChecks& device, const RowChecks& host);
// check_on_host, then judge_rows.
VerifyResult verify_outputs(const Spec& spec, const InputFill& ctx, const HostOutputs& out,
                            const VerifyOptions& options = {});

// The verdict: checked, no NaN/inf left, worst row error within its bound, and the LSE (where
// exposed) within lse_tolerance. passed when true, incorrect otherwise.
bool verify_passed(const VerifyResult& v);

}  // namespace attnprof
