// Paged K/V gathered into a contiguous tensor (io.hpp TensorView: pages through a block table):
// what an unfused implementation must do before its GEMMs can read a paged cache (vLLM's
// "gather_cache"). cuda.naive runs it inside the timed launch, so its price is measured.
#pragma once

#include <cuda_runtime.h>

#include "attnprof/io.hpp"

namespace attnprof::cuda {

// dst (contiguous, in src's layout and storage, src.len positions) = the paged tensor `src`,
// whose block table lies in device memory. A byte copy of whole rows; enqueued on `stream`.
void launch_gather_pages(const TensorView& src, void* dst, cudaStream_t stream);

}  // namespace attnprof::cuda
