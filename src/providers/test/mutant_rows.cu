// Device rows for the mutants (mutant.hpp RowAccess): strided copies between the point's device
// tensors (fp32, fp16, bf16 or scaled fp8 storage) and host doubles, synchronous on the point's
// stream.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "attnprof/inputs.hpp"
#include "cuda/cuda_check.hpp"
#include "providers/test/mutant.hpp"

namespace attnprof::test {
namespace {

class DeviceRows final : public RowAccess {
 public:
  std::vector<double> read(const TensorView& t, int64_t b, int64_t h, int64_t pos, int64_t count,
                           Stream& stream) override {
    const size_t elem = size_t(dtype_bytes(t.storage));
    std::vector<unsigned char> raw(size_t(count * t.dim) * elem);
    auto s = static_cast<cudaStream_t>(stream.native);
    ATTNPROF_CUDA(cudaMemcpy2DAsync(raw.data(), size_t(t.dim) * elem, address(t, b, h, pos),
                                    size_t(t.stride_s()) * elem, size_t(t.dim) * elem,
                                    size_t(count), cudaMemcpyDeviceToHost, s));
    ATTNPROF_CUDA(cudaStreamSynchronize(s));
    std::vector<double> out(size_t(count * t.dim));
    for (size_t e = 0; e < out.size(); ++e) {
      if (t.storage == DType::fp32) {
        out[e] = reinterpret_cast<const float*>(raw.data())[e];
      } else if (is_fp8(t.storage)) {
        const int f = fp8_format(t.storage);
        out[e] = scaled_fp8_value(raw[e], f);
      } else {
        const uint16_t bits = reinterpret_cast<const uint16_t*>(raw.data())[e];
        out[e] = t.storage == DType::fp16 ? fp16_bits_to_float(bits) : bf16_bits_to_float(bits);
      }
    }
    return out;
  }

  void write(const TensorView& t, int64_t b, int64_t h, int64_t pos, int64_t count,
             const std::vector<double>& values, Stream& stream) override {
    const size_t elem = size_t(dtype_bytes(t.storage));
    std::vector<unsigned char> raw(values.size() * elem);
    for (size_t e = 0; e < values.size(); ++e) {
      const float x = static_cast<float>(values[e]);
      if (t.storage == DType::fp32) {
        reinterpret_cast<float*>(raw.data())[e] = x;
      } else if (is_fp8(t.storage)) {
        const int f = fp8_format(t.storage);
        raw[e] = scaled_fp8_code(x, f);
      } else {
        reinterpret_cast<uint16_t*>(raw.data())[e] =
            t.storage == DType::fp16 ? float_to_fp16_bits(x) : float_to_bf16_bits(x);
      }
    }
    auto s = static_cast<cudaStream_t>(stream.native);
    ATTNPROF_CUDA(cudaMemcpy2DAsync(address(t, b, h, pos), size_t(t.stride_s()) * elem, raw.data(),
                                    size_t(t.dim) * elem, size_t(t.dim) * elem, size_t(count),
                                    cudaMemcpyHostToDevice, s));
    ATTNPROF_CUDA(cudaStreamSynchronize(s));
  }

 private:
  static unsigned char* address(const TensorView& t, int64_t b, int64_t h, int64_t pos) {
    return static_cast<unsigned char*>(t.data) +
           t.offset(b, h, pos) * int64_t(dtype_bytes(t.storage));
  }
};

}  // namespace

std::unique_ptr<RowAccess> make_device_rows() {
  return std::make_unique<DeviceRows>();
}

}  // namespace attnprof::test
