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

CUtensorMapL2promotion promotion_of(L2Promotion p) {
  switch (p) {
    case L2Promotion::none:
      return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case L2Promotion::b64:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case L2Promotion::b128:
      return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case L2Promotion::b256:
      break;
  }
  return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

// The view's checks, then a map of `rank` dims (4: columns, row, head, batch; 5: 64 columns,
// block of 64, row, head, batch) in boxes of 64 columns x `box_rows` rows (and every block).
CUtensorMap encode(const TensorView4& t, DType dtype, int box_rows, L2Promotion promotion,
                   int rank) {
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
  if (rank == 5 && t.dim % 64 != 0)
    throw std::runtime_error(
        fmt::format("boxes of whole rows need a head dim of 64s, not {}", t.dim));
  CUtensorMap map{};
  const cuuint64_t d4[4] = {cuuint64_t(t.dim), cuuint64_t(t.seq), cuuint64_t(t.heads),
                            cuuint64_t(t.batch)};
  const cuuint64_t d5[5] = {64, cuuint64_t(t.dim / 64), cuuint64_t(t.seq), cuuint64_t(t.heads),
                            cuuint64_t(t.batch)};
  const cuuint64_t s4[3] = {cuuint64_t(t.ss * kElem), cuuint64_t(t.sh * kElem),
                            cuuint64_t(t.sb * kElem)};
  const cuuint64_t s5[4] = {64 * kElem, cuuint64_t(t.ss * kElem), cuuint64_t(t.sh * kElem),
                            cuuint64_t(t.sb * kElem)};
  const cuuint32_t b4[4] = {64, cuuint32_t(box_rows), 1, 1};
  const cuuint32_t b5[5] = {64, cuuint32_t(t.dim / 64), cuuint32_t(box_rows), 1, 1};
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = encoder()(
      &map,
      dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      cuuint32_t(rank), const_cast<void*>(t.data), rank == 5 ? d5 : d4, rank == 5 ? s5 : s4,
      rank == 5 ? b5 : b4, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      promotion_of(promotion), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(fmt::format(
        "cuTensorMapEncodeTiled refused a ({}, {}, {}, {}) tensor with element strides ({}, {}, "
        "{}) and boxes of {} x {}: CUresult {}",
        t.batch, t.heads, t.seq, t.dim, t.sb, t.sh, t.ss, rank == 5 ? t.dim : 64, box_rows,
        int(r)));
  return map;
}

}  // namespace

CUtensorMap swizzled_tensor_map(const TensorView4& t, DType dtype, int box_rows,
                                L2Promotion promotion) {
  return encode(t, dtype, box_rows, promotion, 4);
}

CUtensorMap row_tensor_map(const TensorView4& t, DType dtype, int box_rows, L2Promotion promotion) {
  return encode(t, dtype, box_rows, promotion, 5);
}

}  // namespace attnprof::cuda
