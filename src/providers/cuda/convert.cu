// Element-wise conversion (convert.cuh). Host reference: the inputs' own definition
// (include/attnprof/inputs.hpp) and the verifier, through cuda.math's outputs.
//
// The dtypes are run-time arguments (a uniform branch per element) rather than template
// parameters: these launches move O(B H N D) elements next to the O(B H N^2) softmax, so one
// kernel serves every cast instead of nine instantiations.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "attnprof/inputs.hpp"
#include "cuda/cuda_check.hpp"
#include "providers/cuda/convert.cuh"

namespace attnprof::cuda {
namespace {

__device__ __forceinline__ float load(const void* p, int64_t i, DType t) {
  switch (t) {
    case DType::fp16:
      return __half2float(static_cast<const __half*>(p)[i]);
    case DType::bf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:  // the code's value; the factor applies the tensor's scale
      return fp8_bits_to_float(static_cast<const uint8_t*>(p)[i], int(t) - int(DType::fp8_e4m3));
    default:
      return static_cast<const float*>(p)[i];
  }
}

__device__ __forceinline__ void store(void* p, int64_t i, DType t, float x) {
  switch (t) {
    case DType::fp16:
      static_cast<__half*>(p)[i] = __float2half_rn(x);
      break;
    case DType::bf16:
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(x);
      break;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:  // round to nearest even, saturating (inputs.hpp)
      static_cast<uint8_t*>(p)[i] = float_to_fp8_bits(x, int(t) - int(DType::fp8_e4m3));
      break;
    default:
      static_cast<float*>(p)[i] = x;
  }
}

// Flat index of (b, h, pos, d) in `layout`.
__device__ __forceinline__ int64_t flat(Layout layout, const Dims4& n, int64_t b, int64_t h,
                                        int64_t pos, int64_t d) {
  return layout == Layout::bhsd ? ((b * n.heads + h) * n.len + pos) * n.dim + d
                                : ((b * n.len + pos) * n.heads + h) * n.dim + d;
}

__global__ void convert_kernel(TensorRef src, TensorRef dst, Dims4 n, float factor) {
  const int64_t total = n.batch * n.heads * n.len * n.dim;
  const bool same_layout = src.layout == dst.layout;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    int64_t from = e;
    if (!same_layout) {  // decode e in dst's layout, re-encode in src's
      const int64_t d = e % n.dim;
      int64_t r = e / n.dim;
      int64_t b, h, pos;
      if (dst.layout == Layout::bhsd) {
        pos = r % n.len;
        r /= n.len;
        h = r % n.heads;
        b = r / n.heads;
      } else {
        h = r % n.heads;
        r /= n.heads;
        pos = r % n.len;
        b = r / n.len;
      }
      from = flat(src.layout, n, b, h, pos, d);
    }
    store(dst.data, e, dst.dtype, factor * load(src.data, from, src.dtype));
  }
}

// fp8 to bf16 in one layout, 8 elements a thread: an 8-byte load, 16-byte store (what a
// framework's vectorized cast does). The per-element kernel above moved ~0.9 TB/s on the H200
// here, a byte load and a runtime dtype switch per element.
__global__ void widen_fp8_kernel(const uint2* src, uint4* dst, int64_t packs, int format,
                                 float factor) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < packs;
       k += int64_t{gridDim.x} * blockDim.x) {
    const uint2 in = src[k];
    uint32_t out[4];
#pragma unroll
    for (int e = 0; e < 8; e += 2) {
      const uint32_t word = e < 4 ? in.x : in.y;
      const int shift = (e % 4) * 8;
      const float a = fp8_bits_to_float(uint8_t(word >> shift), format) * factor;
      const float b = fp8_bits_to_float(uint8_t(word >> (shift + 8)), format) * factor;
      out[e / 2] = uint32_t(float_to_bf16_bits(a)) | (uint32_t(float_to_bf16_bits(b)) << 16);
    }
    dst[k] = make_uint4(out[0], out[1], out[2], out[3]);
  }
}

bool aligned(const void* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

}  // namespace

void launch_convert(const TensorRef& src, const TensorRef& dst, const Dims4& dims, float factor,
                    cudaStream_t stream) {
  const int64_t total = dims.elems();
  if (total <= 0) return;
  constexpr int kThreads = 256;
  if ((src.dtype == DType::fp8_e4m3 || src.dtype == DType::fp8_e5m2) && dst.dtype == DType::bf16 &&
      src.layout == dst.layout && total % 8 == 0 && aligned(src.data, 8) && aligned(dst.data, 16)) {
    const int64_t packs = total / 8;
    const int64_t blocks = std::min<int64_t>((packs + kThreads - 1) / kThreads, int64_t{1} << 20);
    widen_fp8_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const uint2*>(src.data), static_cast<uint4*>(dst.data), packs,
        src.dtype == DType::fp8_e4m3 ? 0 : 1, factor);
    ATTNPROF_CUDA(cudaGetLastError());
    return;
  }
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 20);
  convert_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(src, dst, dims, factor);
  ATTNPROF_CUDA(cudaGetLastError());
}

}  // namespace attnprof::cuda
