// Device-filled inputs (src/providers/cuda/cuda_tensors.cu) equal the host's input_value()
// bit for bit, for every dtype, both layouts and both input patterns; the poison is NaN.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "attnprof/paging.hpp"
#include "cuda/tensor_fill.hpp"
#include "engine_test_util.hpp"

namespace attnprof::testing {
namespace {

// Storage bits of a host value in `dtype` (fp32 widened to 32 bits).
uint32_t storage_bits(float v, DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return float_to_bits(v);
    case DType::fp16:
      return float_to_fp16_bits(v);
    case DType::bf16:
      return float_to_bf16_bits(v);
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      return scaled_fp8_code(v, fp8_format(dtype));
  }
  return 0;
}

struct Dims {
  int64_t heads, seq, dim;
};

Dims dims_of(const Spec& s, TensorId t) {
  const bool query_side = t == TensorId::q || t == TensorId::d_o;
  return {query_side ? s.q_heads : s.kv_heads, query_side ? s.q_len : s.kv_len,
          (t == TensorId::v || t == TensorId::d_o) ? s.dv() : s.head_dim};
}

void expect_fill_matches_host(const Spec& spec, TensorId tensor, InputPattern pattern,
                              cudaStream_t stream) {
  const Dims d = dims_of(spec, tensor);
  const int64_t n = spec.batch * d.heads * d.seq * d.dim;
  const size_t esize = dtype_bytes(spec.dtype);
  cuda::DeviceBuffer buf(n * static_cast<int64_t>(esize), nullptr);
  const uint64_t seed = 0xC0FFEE;
  cuda::fill_input(buf.data(), spec, tensor, seed, pattern, stream);
  std::vector<unsigned char> raw(static_cast<size_t>(n) * esize);
  ATTNPROF_CUDA(
      cudaMemcpyAsync(raw.data(), buf.data(), raw.size(), cudaMemcpyDeviceToHost, stream));
  ATTNPROF_CUDA(cudaStreamSynchronize(stream));

  int64_t mismatches = 0;
  // Walk the logical (b, h, s, d) order and compute each element's flat index per layout,
  // independently of the kernel's decomposition of the flat index.
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      for (int64_t s = 0; s < d.seq; ++s) {
        for (int64_t k = 0; k < d.dim; ++k) {
          const int64_t flat = spec.layout == Layout::bhsd
                                   ? ((b * d.heads + h) * d.seq + s) * d.dim + k
                                   : ((b * d.seq + s) * d.heads + h) * d.dim + k;
          const float v = input_value(pattern, seed, tensor, static_cast<uint64_t>(flat),
                                      static_cast<int>(spec.dtype), s, k);
          const uint32_t want = storage_bits(v, spec.dtype);
          uint32_t got = 0;
          if (esize == 4) {
            std::memcpy(&got, raw.data() + flat * 4, 4);
          } else {
            uint16_t g16 = 0;
            std::memcpy(&g16, raw.data() + flat * 2, 2);
            got = g16;
          }
          if (got != want && ++mismatches <= 3) {
            ADD_FAILURE() << spec.key() << " tensor " << int(tensor) << " pattern " << int(pattern)
                          << " (b" << b << " h" << h << " s" << s << " d" << k << "): device 0x"
                          << std::hex << got << ", host 0x" << want;
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(CudaEngineTest, DeviceFillEqualsHostInputValueBitForBit) {
  Spec spec{.batch = 2,
            .q_heads = 4,
            .kv_heads = 2,
            .q_len = 33,
            .kv_len = 47,
            .head_dim = 24,
            .v_head_dim = 40};
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    for (Layout layout : {Layout::bhsd, Layout::bshd}) {
      for (InputPattern pattern : {InputPattern::random, InputPattern::mask_coverage}) {
        spec.dtype = dtype;
        spec.layout = layout;
        for (TensorId t : {TensorId::q, TensorId::k, TensorId::v, TensorId::d_o}) {
          expect_fill_matches_host(spec, t, pattern, stream());
        }
      }
    }
  }
}

// A paged K and V: the device's pages hold, element for element, what the CPU engine's pages of
// the same point hold (the same table, the contiguous values in their pages, the tail value).
TEST_F(CudaEngineTest, PagedTensorsLieWhereTheHostsLie) {
  for (Layout layout : {Layout::bhsd, Layout::bshd}) {
    const Spec spec{.batch = 3,
                    .q_heads = 4,
                    .kv_heads = 2,
                    .q_len = 1,
                    .kv_len = 45,
                    .head_dim = 24,
                    .v_head_dim = 40,
                    .dtype = DType::bf16,
                    .layout = layout,
                    .page_size = 8};
    const InputFill fill{.seed = 77};
    auto device = engine().allocate(spec, false, fill);
    auto host = make_cpu_engine(1)->allocate(spec, false, fill);
    for (TensorRole r : {TensorRole::k, TensorRole::v}) {
      const TensorView& d = device->io()[r];
      const TensorView& h = host->io()[r];
      ASSERT_EQ(d.elems(), h.elems());
      const std::vector<float> got = cuda::to_host_float(d.data, d.elems(), d.storage, stream());
      int64_t differ = 0, tail = 0;
      for (int64_t e = 0; e < d.elems(); ++e) {
        const float want = h.as<float>()[e];
        tail += want == kPageTailValue;
        differ += got[size_t(e)] != want;
      }
      EXPECT_EQ(differ, 0) << to_string(layout) << " " << to_string(r);
      EXPECT_EQ(tail, 3 * 2 * 3 * d.dim) << "the tails of the last pages";
    }
  }
}

TEST_F(CudaEngineTest, HostCopyAndPoison) {
  Spec spec;
  spec.q_len = 100;
  spec.head_dim = 64;
  for (DType dtype : {DType::fp32, DType::fp16, DType::bf16}) {
    spec.dtype = dtype;
    const int64_t n = spec.q_len * spec.head_dim;
    cuda::DeviceBuffer buf(n * static_cast<int64_t>(dtype_bytes(dtype)), nullptr);
    cuda::fill_input(buf.data(), spec, TensorId::q, 7, InputPattern::random, stream());
    const std::vector<float> host = cuda::to_host_float(buf.data(), n, dtype, stream());
    ASSERT_EQ(host.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const float want = input_value(InputPattern::random, 7, TensorId::q, static_cast<uint64_t>(i),
                                     static_cast<int>(dtype), 0, i % spec.head_dim);
      ASSERT_EQ(float_to_bits(host[static_cast<size_t>(i)]), float_to_bits(want)) << i;
      ASSERT_NE(host[static_cast<size_t>(i)], 0.0f) << "inputs are never zero";
    }
    cuda::poison(buf.data(), buf.bytes(), stream());
    for (float v : cuda::to_host_float(buf.data(), n, dtype, stream())) ASSERT_TRUE(std::isnan(v));
  }
}

}  // namespace
}  // namespace attnprof::testing
