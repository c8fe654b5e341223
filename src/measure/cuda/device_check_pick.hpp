// The rows of a forward check's per-row sums the verdict needs, found on the device
// (device_check_pick.cu): a check of every row at large shapes has tens of millions of rows, and
// copying their sums to the host took seconds per check. The verdict (verify.hpp judge_rows)
// needs only the worst O row, the largest absolute error and the worst LSE row; the cross-check
// needs its own rows. Internal to src/measure/cuda.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace attnprof::cuda {

// Per query row, device memory (device_check_gemm.hpp ForwardRowSums's layout). Null arrays are
// absent: no O (mode bwd), no LSE.
struct ForwardSums {
  const double* err2 = nullptr;
  const double* ref2 = nullptr;
  const double* max_abs = nullptr;
  const double* floor = nullptr;
  const double* lse_err = nullptr;
};

// Flat query rows, -1 where the array is absent. Ties go to the lowest row, as judge_rows does
// when it walks every row in order; a NaN counts as inf.
struct ForwardPicks {
  int64_t worst_o = -1;      // the largest relative error (the verify.cpp rel_error formula)
  int64_t largest_abs = -1;  // the largest max_abs
  int64_t worst_lse = -1;    // the largest lse_err
};
ForwardPicks pick_forward_rows(const ForwardSums& sums, int64_t rows, cudaStream_t stream);

// srcs[k][rows[t]] for every source k and row t, copied to the host as out[k][t] (rows sorted or
// not, each within every source): the rows travel to the device once. Synchronous.
std::vector<std::vector<double>> gather_rows(const std::vector<const double*>& srcs,
                                             const std::vector<int64_t>& rows, cudaStream_t stream);

}  // namespace attnprof::cuda
