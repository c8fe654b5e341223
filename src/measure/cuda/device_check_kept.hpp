// The device check's kept forward reference (device_check_kept.cu). A forward check computes the
// fp64 reference of every query row (device_check.cu's kernel or device_check_gemm.cu's DGEMMs);
// its rows (O per element, and per row the LSE, the squared reference and the floor) are kept on
// the device for the next check of the same inputs: the check of a point's last timed launch, its
// repeat launches, and every other provider of the same shape in a sweep. The harness fills each
// point's inputs from the same seed, so they are bit-identical; that is checked, not assumed: the
// key holds Spec::key() and a hash of every input byte (Q, K, V, the block table, the ragged
// lengths, the sink logits), taken on the device before each check. A kept check reads the
// provider's O and the kept rows only (memory-bound) where the reference costs a kernel over
// every visible (query, key) pair. It keeps the reference, never a verdict: every check compares
// its own outputs. One entry, of at most kKeptBytes and 1/16 of the device's memory; untracked
// (the check's memory, not the point's), dropped before a point of another shape allocates, and
// given back to any allocation that fails for want of memory while no check uses it.
// Internal to src/measure/cuda.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "attnprof/io.hpp"
#include "attnprof/spec.hpp"
#include "measure/cuda/device_check_gemm.hpp"

namespace attnprof::cuda {

inline constexpr int64_t kKeptBytes = int64_t{2} << 30;

// Device rows of one kept reference: O (q_rows x dv), and per query row the LSE (-inf: a row
// that sees no key), the squared reference and the floor (ForwardRowSums).
struct KeptRows {
  double* o = nullptr;
  double* lse = nullptr;
  double* ref2 = nullptr;
  double* floor = nullptr;
};

// What kept_forward found: the reference of these inputs (filled), or rows for the check to fill
// and commit, or nothing (rows.o null: mode bwd, disabled, or over the budget).
// While a slot with rows lives, the kept buffer is in use: an allocation that fails then does
// not reclaim it (device_buffer.hpp), since the check reads or writes it.
struct KeptInUse {
  void operator()(bool* in_use) const { *in_use = false; }
};
struct KeptSlot {
  KeptRows rows;
  bool filled = false;
  std::string key;
  std::unique_ptr<bool, KeptInUse> hold;
};

// The kept reference of io's inputs for `spec` (mode fwd), or space for it. Synchronous (the
// inputs' hash). ATTNPROF_KEEP_REFERENCE=0 keeps nothing (every check computes its reference).
KeptSlot kept_forward(const Spec& spec, const Io& io, cudaStream_t stream);
// Marks a slot's rows as the reference of its key, once the check that filled them completed.
void commit_kept(const KeptSlot& slot);
// Frees the kept reference unless it is of a point of `spec`'s shape.
void drop_kept_unless(const Spec& spec);
// Checks served from a kept reference in this process (tests, the sweep's time split).
int64_t kept_hits();

// out's sums (err2, ref2, max_abs, floor, and lse_err where out.lse) for io's O against `kept`;
// a ragged batch's padding rows get zeros, as the reference kernels give them.
void compare_with_kept(const Spec& spec, const Io& io, cudaStream_t stream, const KeptRows& kept,
                       const ForwardRowSums& out);

}  // namespace attnprof::cuda
