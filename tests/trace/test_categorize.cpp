// categorize() on kernel names the H200 runs printed (bench/results/h200/*.jsonl, `kernels`),
// plus names of the libraries we cross-check against (PyTorch, FlashAttention).
#include <gtest/gtest.h>

#include "attnprof/trace.hpp"

namespace attnprof {
namespace {

struct Case {
  const char* name;
  KernelCategory category;
};

using C = KernelCategory;
const Case kCases[] = {
    // cuBLAS 13 on sm_90 (cuda.naive, bf16/fp16)
    {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", C::gemm},
    {"nvjet_sm90_hsh_64x512_64x2_1x2_h_bz_coopB_NNT", C::gemm},
    {"nvjet_sm90_tst_64x8_64x16_2x1_v_bz_NNT", C::gemm},
    // cuBLAS fp32 (cuda.math)
    {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_"
     "alignc4_execute_kernel__5x_cublas",
     C::gemm},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_tn_align1>(cutlass_80_simt_sgemm_"
     "128x256_8x4_tn_align1::Params)",
     C::gemm},
    {"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, "
     "float, false, true, false, false, 6, false, cublasGemvParamsEx<int, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParamsEx<int, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float>, float>)",
     C::gemm},
    {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", C::gemm},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", C::gemm},
    // cuDNN SDPA (cudnn.sdpa)
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_"
     "cga1x1x1_kernel0_0",
     C::fused_attention},
    {"cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_3_64x64x128_4x1x1_cga1x1x1_"
     "kernel0_0",
     C::fused_attention},
    // PyTorch SDPA backends
    {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)",
     C::fused_attention},
    {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
     "cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
     C::fused_attention},
    // our own kernels (cuda.naive, cuda.math): the parameter list names attnprof types
    {"void attnprof::cuda::(anonymous namespace)::masked_softmax_kernel<__nv_bfloat16, "
     "8>(__nv_bfloat16 const*, __nv_bfloat16*, long, long, long, attnprof::cuda::RowMask)",
     C::softmax_reduction},
    {"void attnprof::cuda::(anonymous namespace)::masked_softmax_kernel<float, 4>(float const*, "
     "float*, long, long, long, attnprof::cuda::RowMask)",
     C::softmax_reduction},
    {"attnprof::cuda::(anonymous namespace)::convert_kernel(attnprof::cuda::TensorRef, "
     "attnprof::cuda::TensorRef, attnprof::cuda::Dims4, float)",
     C::elementwise_copy},
    {"attnprof::cuda::(anonymous namespace)::mask_scores_kernel(float*, long, long, long, "
     "attnprof::cuda::RowMask)",
     C::elementwise_copy},
    {"void attnprof::cuda::(anonymous namespace)::repeat_kv_kernel<attnprof::cuda::(anonymous "
     "namespace)::Bytes16>(attnprof::cuda::(anonymous namespace)::Bytes16 const*, "
     "attnprof::cuda::(anonymous namespace)::Bytes16*, long, long, long, long)",
     C::elementwise_copy},
    // PyTorch elementwise and reductions
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3>)",
     C::elementwise_copy},
    {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
     "TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>(int)",
     C::elementwise_copy},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
     C::softmax_reduction},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(at::native::ReduceOp<"
     "float>)",
     C::softmax_reduction},
    {"memcpy DtoD", C::elementwise_copy},
    // our timing instruments are none of these
    {"attnprof::cuda::spin_ns_kernel(unsigned long)", C::other},
    {"", C::other},
};

TEST(Categorize, RealKernelNames) {
  for (const Case& c : kCases) {
    EXPECT_EQ(to_string(categorize(c.name)), to_string(c.category)) << c.name;
  }
}

TEST(Categorize, IgnoresCaseAndTheParameterList) {
  EXPECT_EQ(categorize("NVJET_SM90_X"), KernelCategory::gemm);
  // A parameter type that says "Softmax" does not make a copy kernel a softmax.
  EXPECT_EQ(categorize("copy_kernel(SoftmaxParams)"), KernelCategory::elementwise_copy);
  // A kernel named only by its template argument is still read there.
  EXPECT_EQ(categorize("void cutlass::Kernel<cutlass_sgemm_x>(int)"), KernelCategory::gemm);
}

TEST(Categorize, NamesEveryCategory) {
  EXPECT_EQ(to_string(KernelCategory::gemm), "GEMM");
  EXPECT_EQ(to_string(KernelCategory::fused_attention), "fused attention");
  EXPECT_EQ(to_string(KernelCategory::softmax_reduction), "softmax/reduction");
  EXPECT_EQ(to_string(KernelCategory::elementwise_copy), "elementwise/cast/copy");
  EXPECT_EQ(to_string(KernelCategory::other), "other");
}

}  // namespace
}  // namespace attnprof
