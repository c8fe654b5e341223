// Device-side inputs and outputs shared by every CUDA provider (cuda.*, cudnn.*): inputs filled
// on the device from include/attnprof/inputs.hpp (bit-identical to the host's values), the NaN
// poison, and copies back to the host as float for verification.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "attnprof/inputs.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::cuda {

// Writes every element of input `tensor` of `spec` into `dst` (storage of spec.dtype: fp32,
// fp16 or bf16 bits, in spec.layout), asynchronously on `stream`.
void fill_input(void* dst, const Spec& spec, TensorId tensor, uint64_t seed, InputPattern pattern,
                cudaStream_t stream);
// Fills `bytes` with 0xFF: NaN in fp32, fp16 and bf16 alike.
void poison(void* dst, int64_t bytes, cudaStream_t stream);
// Copies `elems` elements of `dtype` storage to the host as float (synchronizes the stream).
std::vector<float> to_host_float(const void* src, int64_t elems, DType dtype, cudaStream_t stream);

}  // namespace attnprof::cuda
