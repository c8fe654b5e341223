// How cuda.decode splits each sequence's keys across CTAs (decode.cpp): chosen from the shape and
// the SM count so that the grid fills the GPU, a ragged batch's long sequences do not set the
// time, and chunks stay long enough to stream. Host code, tested without a GPU
// (tests/gpu/test_decode.cpp, CudaDecodeSplit).
#pragma once

#include "attnprof/spec.hpp"
#include "providers/cuda/decode_kernel.cuh"

namespace attnprof::cuda {

// `splits` chunks of `chunk` keys (a multiple of kDecodeChunkGranule) per sequence.
struct DecodeSplit {
  int chunk = 0, splits = 1;
};

// The split for `spec` on a GPU of `sm_count` SMs running the tensor-core kernel's `pipeline`
// (ATTNPROF_DECODE_SPLIT=W:C overrides the waves and the shortest chunk, for comparing them).
DecodeSplit choose_decode_split(const Spec& spec, int sm_count, DecodePipeline pipeline);

}  // namespace attnprof::cuda
