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
// fp16 or bf16 bits, or fp8 bits of the value times fp8_tensor_scale, in spec.layout),
// asynchronously on `stream`. Each value is keyed on its flat index in the contiguous layout; K and
// V of a paged spec are written to the pages `block_table` (device memory, io.hpp) names, so their
// values are those of the contiguous tensor, wherever the pages lie. K and V of a ragged spec hold
// paging.hpp's kPageTailValue past each sequence's keys (`kv_lens`, device memory, io.hpp Io).
void fill_input(void* dst, const Spec& spec, TensorId tensor, uint64_t seed, InputPattern pattern,
                cudaStream_t stream, const int32_t* block_table = nullptr,
                const int32_t* kv_lens = nullptr);
// Every one of `elems` elements of `dtype` storage set to `value` (exact in the dtype), async.
void fill_constant(void* dst, int64_t elems, DType dtype, float value, cudaStream_t stream);
// Fills `bytes` with 0xFF: NaN in fp32, fp16, bf16 and both fp8 formats alike.
void poison(void* dst, int64_t bytes, cudaStream_t stream);
// Copies `elems` elements of `dtype` storage to the host as float (synchronizes the stream); fp8
// elements as the real values they hold (divided by fp8_tensor_scale).
std::vector<float> to_host_float(const void* src, int64_t elems, DType dtype, cudaStream_t stream);

}  // namespace attnprof::cuda
