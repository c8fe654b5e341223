// Device-side input fill, poison and host copies for every CUDA provider (tensor_fill.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "attnprof/io.hpp"
#include "attnprof/paging.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/tensor_fill.hpp"

namespace attnprof::cuda {

namespace {

// Shape of one input tensor: (batch, heads, seq, dim) in either layout; flat index = position in
// the tensor's own layout order, the same index the host's input_value() is called with.
struct TensorShape {
  int64_t elems;
  int64_t heads, seq, dim;
  bool bshd;
  PageMap pages;  // paged K/V: where each row lies; table null when contiguous
  // A ragged batch's K/V: each sequence's key count (device memory; null: none). Keys past it
  // hold `past` (paging.hpp kPageTailValue) instead of their generated value.
  const int32_t* lens;
  float past;
  int64_t latent_dv;  // K's first columns that are V's (Spec::latent_columns)
};

// One thread per element (grid-stride). Only integer arithmetic and the helpers of inputs.hpp,
// so each value is bit-identical to the host's input_value() for the same (seed, tensor, index).
__global__ void fill_input_kernel(void* dst, TensorShape s, InputPattern pattern, uint64_t seed,
                                  TensorId tensor, int dtype_code) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < s.elems; i += stride) {
    const int64_t d = i % s.dim;
    const int64_t rest = i / s.dim;
    // bhsd: rest = (b * H + h) * S + s;  bshd: rest = (b * S + s) * H + h.
    const int64_t pos = s.bshd ? (rest / s.heads) % s.seq : rest % s.seq;
    const bool padding = s.lens != nullptr && pos >= s.lens[rest / (s.heads * s.seq)];
    const float v = padding ? s.past
                            : input_value_of(pattern, seed, tensor, uint64_t(i), dtype_code, pos, d,
                                             s.dim, s.latent_dv);
    // Element i of the contiguous tensor is stored at i, or at its place in its page.
    int64_t at = i;
    if (s.pages.table != nullptr) {
      const int64_t h = s.bshd ? rest % s.heads : (rest / s.seq) % s.heads;
      at = s.pages.row(rest / (s.heads * s.seq), h, pos) * s.dim + d;
    }
    if (dtype_code == 0) {
      static_cast<float*>(dst)[at] = v;
    } else if (dtype_code >= 3) {
      // v is the real value of a scaled fp8 element: scaling back and converting are exact.
      const int format = dtype_code - 3;
      static_cast<uint8_t*>(dst)[at] = scaled_fp8_code(v, format);
    } else {
      // v is already rounded to the dtype, so these conversions are exact.
      static_cast<uint16_t*>(dst)[at] =
          dtype_code == 1 ? float_to_fp16_bits(v) : float_to_bf16_bits(v);
    }
  }
}

TensorShape shape_of(const Spec& spec, TensorId tensor) {
  TensorShape s{};
  s.bshd = spec.layout == Layout::bshd;
  const bool query_side = tensor == TensorId::q || tensor == TensorId::d_o;
  s.heads = query_side ? spec.q_heads : spec.kv_heads;
  s.seq = query_side ? spec.q_len : spec.kv_len;
  s.dim = (tensor == TensorId::v || tensor == TensorId::d_o) ? spec.dv() : spec.head_dim;
  s.elems = spec.batch * s.heads * s.seq * s.dim;
  s.latent_dv = spec.latent_columns();
  return s;
}

}  // namespace

void fill_input(void* dst, const Spec& spec, TensorId tensor, uint64_t seed, InputPattern pattern,
                cudaStream_t stream, const int32_t* block_table, const int32_t* kv_lens) {
  TensorShape s = shape_of(spec, tensor);
  if (spec.ragged() && (tensor == TensorId::k || tensor == TensorId::v)) {
    if (kv_lens == nullptr)
      throw std::invalid_argument("fill_input: a ragged K/V needs its lengths");
    s.lens = kv_lens;
    s.past = kPageTailValue;
  }
  if (spec.paged() && (tensor == TensorId::k || tensor == TensorId::v)) {
    if (block_table == nullptr)
      throw std::invalid_argument("fill_input: a paged K/V needs its table");
    s.pages = PageMap::of(block_table, spec.page_size, spec.pages_per_seq(), s.heads, s.bshd);
  }
  if (s.elems <= 0) return;
  constexpr int kThreads = 256;
  // Enough blocks to fill any GPU several times over; the grid-stride loop covers the rest.
  const int64_t blocks = std::min<int64_t>((s.elems + kThreads - 1) / kThreads, int64_t{1} << 16);
  fill_input_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      dst, s, pattern, seed, tensor, static_cast<int>(spec.dtype));
  ATTNPROF_CUDA(cudaGetLastError());
}

namespace {

template <class Bits>
__global__ void constant_kernel(Bits* dst, int64_t n, Bits bits) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = bits;
}

}  // namespace

void fill_constant(void* dst, int64_t elems, DType dtype, float value, cudaStream_t stream) {
  if (elems <= 0) return;
  constexpr int kThreads = 256;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>((elems + kThreads - 1) / kThreads, int64_t{1} << 16));
  if (dtype == DType::fp32) {
    constant_kernel<uint32_t>
        <<<blocks, kThreads, 0, stream>>>(static_cast<uint32_t*>(dst), elems, float_to_bits(value));
  } else if (is_fp8(dtype)) {
    const int format = fp8_format(dtype);
    constant_kernel<uint8_t><<<blocks, kThreads, 0, stream>>>(static_cast<uint8_t*>(dst), elems,
                                                              scaled_fp8_code(value, format));
  } else {
    const uint16_t bits =
        dtype == DType::fp16 ? float_to_fp16_bits(value) : float_to_bf16_bits(value);
    constant_kernel<uint16_t>
        <<<blocks, kThreads, 0, stream>>>(static_cast<uint16_t*>(dst), elems, bits);
  }
  ATTNPROF_CUDA(cudaGetLastError());
}

void poison(void* dst, int64_t bytes, cudaStream_t stream) {
  if (bytes <= 0) return;
  ATTNPROF_CUDA(cudaMemsetAsync(dst, 0xFF, static_cast<size_t>(bytes), stream));
}

std::vector<float> to_host_float(const void* src, int64_t elems, DType dtype, cudaStream_t stream) {
  if (elems < 0) throw std::invalid_argument("to_host_float: negative element count");
  std::vector<float> out(static_cast<size_t>(elems));
  if (elems == 0) return out;
  if (dtype == DType::fp32) {
    ATTNPROF_CUDA(cudaMemcpyAsync(out.data(), src, out.size() * sizeof(float),
                                  cudaMemcpyDeviceToHost, stream));
    ATTNPROF_CUDA(cudaStreamSynchronize(stream));
    return out;
  }
  if (is_fp8(dtype)) {
    std::vector<uint8_t> bytes(static_cast<size_t>(elems));
    ATTNPROF_CUDA(cudaMemcpyAsync(bytes.data(), src, bytes.size(), cudaMemcpyDeviceToHost, stream));
    ATTNPROF_CUDA(cudaStreamSynchronize(stream));
    const int format = fp8_format(dtype);
    for (size_t i = 0; i < bytes.size(); ++i) out[i] = scaled_fp8_value(bytes[i], format);
    return out;
  }
  std::vector<uint16_t> bits(static_cast<size_t>(elems));
  ATTNPROF_CUDA(cudaMemcpyAsync(bits.data(), src, bits.size() * sizeof(uint16_t),
                                cudaMemcpyDeviceToHost, stream));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < bits.size(); ++i) {
    out[i] = dtype == DType::fp16 ? fp16_bits_to_float(bits[i]) : bf16_bits_to_float(bits[i]);
  }
  return out;
}

}  // namespace attnprof::cuda
