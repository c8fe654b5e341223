#include "providers/cuda/tensor_map.hpp"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <stdexcept>

namespace attnprof::cuda {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                           cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr)
      throw std::runtime_error(
          fmt::format("the CUDA driver has no cuTensorMapEncodeTiled (Hopper's tensor maps): {}",
                      cudaGetErrorString(e)));
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

}  // namespace

CUtensorMap swizzled_tensor_map(const TensorView4& t, DType dtype, int box_rows) {
  if (dtype != DType::bf16 && dtype != DType::fp16)
    throw std::runtime_error(
        fmt::format("a tensor map here is of bf16 or fp16, not {}", to_string(dtype)));
  const auto base = reinterpret_cast<uintptr_t>(t.data);
  constexpr int64_t kElem = 2;
  if (base % 16 != 0 || (t.sb * kElem) % 16 != 0 || (t.sh * kElem) % 16 != 0 ||
      (t.ss * kElem) % 16 != 0)
    throw std::runtime_error(fmt::format(
        "the tensor memory accelerator needs a 16-byte aligned base and strides of multiples of "
        "16 bytes; this tensor is at {:#x} with element strides ({}, {}, {})",
        base, t.sb, t.sh, t.ss));
  CUtensorMap map{};
  const cuuint64_t dims[4] = {cuuint64_t(t.dim), cuuint64_t(t.seq), cuuint64_t(t.heads),
                              cuuint64_t(t.batch)};
  const cuuint64_t strides[3] = {cuuint64_t(t.ss * kElem), cuuint64_t(t.sh * kElem),
                                 cuuint64_t(t.sb * kElem)};
  const cuuint32_t box[4] = {64, cuuint32_t(box_rows), 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = encoder()(
      &map,
      dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
      const_cast<void*>(t.data), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(fmt::format(
        "cuTensorMapEncodeTiled refused a ({}, {}, {}, {}) tensor with element strides ({}, {}, "
        "{}) and boxes of 64 x {}: CUresult {}",
        t.batch, t.heads, t.seq, t.dim, t.sb, t.sh, t.ss, box_rows, int(r)));
  return map;
}

}  // namespace attnprof::cuda
