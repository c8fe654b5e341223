// The device check's kernels (device_check.cu) and the raw sums they return, for the check itself
// (device_verify.cpp), which turns them into RowChecks. Internal to src/measure/cuda.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnprof/io.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::cuda {

// Per output row, indexed by its flat row ((b * heads + h) * len + pos): squared error, squared
// reference, largest absolute error (and dQ's floor). Empty for an output the mode does not
// produce.
struct DeviceRowSums {
  std::vector<double> err2, ref2, max_abs;
  std::vector<double> floor;  // dQ only: RowCheck::floor
};

// The non-finite elements of one output: how many, the first (flat index) and its value.
struct DeviceScan {
  TensorRole role = TensorRole::o;
  int64_t count = 0;
  int64_t first = 0;
  double value = 0;
};

struct DeviceCheck {
  DeviceRowSums o, dq, dk, dv;
  std::vector<double> lse_err;  // |lse - lse_ref| per query row, where the provider writes one
  // The flat query rows o's and lse_err's entries are for, sorted; empty when they hold every
  // row in order (DeviceRows::all).
  std::vector<int64_t> o_rows, lse_rows;
  std::vector<DeviceScan> scans;  // one per output of the launch (launch_outputs)
};

// Which forward rows (O, LSE) come back to the host: every one (tests compare them row by row),
// or the verdict's (device_check_pick.hpp: the worst O row, the largest absolute error, the worst
// LSE row) and `keep` (the cross-check's flat rows). Gradient rows always come back whole.
struct DeviceRows {
  bool all = true;
  std::vector<int64_t> keep;
};

// The rows per shared-memory tile the kernels use for `spec` on the current device: 32, 16 or 8;
// 0 when even 8 do not fit. `need_bytes` gets what 8 need, `optin` what a block may have.
int device_check_tile(const Spec& spec, size_t& need_bytes, size_t& optin);

// How mode fwd is checked: through fp64 GEMMs where their scratch fits, else the shared-memory
// kernel (fastest); or forced either way (tests compare them).
enum class DeviceCheckPath { fastest, gemm, kernels };

// Runs the kernels over io's launch outputs and copies the sums of `rows` back. Synchronous.
// `gemm_budget` bounds the GEMM path's scratch in bytes (0: its own choice; tests force chunks).
DeviceCheck run_device_check(const Spec& spec, const Io& io, cudaStream_t stream,
                             DeviceCheckPath path = DeviceCheckPath::fastest,
                             int64_t gemm_budget = 0, const DeviceRows& rows = {});

}  // namespace attnprof::cuda
