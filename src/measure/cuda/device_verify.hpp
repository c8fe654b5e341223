// Every row of a launch's outputs checked on the device (docs/method.md, "Verification"): an fp64
// reference computed by our own kernels from the harness's inputs (a warp per row, lanes over keys
// in shared-memory tiles, every product and sum in double), compared with every element of every
// output the mode produces: O and LSE per query row, dQ per query row, dK and dV per key row. Only
// per-row sums (squared error, squared reference, largest error) come back to the host, which
// judges them (verify.hpp judge_rows): of O and the LSE only the rows the verdict needs
// (device_check_pick.hpp) and the ones asked for, unless every row is asked for. Outside the
// timed region; allocations untracked.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "attnprof/io.hpp"
#include "attnprof/spec.hpp"
#include "attnprof/verify.hpp"
#include "measure/cuda/device_check.hpp"

namespace attnprof::cuda {

// Why the device cannot check `spec` on the current device ("" when it can): the shared memory
// its tiles need beyond what a block may have.
std::string device_check_unavailable(const Spec& spec);

// The row checks of io's launch outputs (launch_outputs: O and LSE in mode fwd, the gradients in
// mode bwd, all in fwd_bwd), every row and every element compared; sampling "all (device)". The
// O and LSE entries are those of `rows`; judge_rows gives the verdict of every row either way.
// Synchronous.
RowChecks check_on_device(const Spec& spec, const Io& io, cudaStream_t stream,
                          const DeviceRows& rows = {});

}  // namespace attnprof::cuda
