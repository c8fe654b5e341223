#include "providers/cuda/provider_common.hpp"

#include <fmt/format.h>

#include "measure/cuda/cuda_check.hpp"
#include "providers/cuda/cuda_tensors.hpp"

namespace attnprof::cuda {

Availability device_availability() {
  std::string why = unavailable_reason(0);
  return {why.empty(), std::move(why)};
}

Support supports_forward_on(const Spec& spec, const Device& device, const std::string& provider) {
  if (device.kind != DeviceKind::cuda) return Support::no(provider + " runs on a CUDA device only");
  if (device.cc_major < 8) {
    return Support::no(fmt::format(
        "{} needs compute capability 8.0 or newer (built for sm_80, sm_90a); {} is {}.{}", provider,
        device.name, device.cc_major, device.cc_minor));
  }
  if (spec.mode != Mode::fwd) {
    return Support::no(
        fmt::format("{} is forward only: mode {} needs a backward pass it does not implement",
                    provider, to_string(spec.mode)));
  }
  // Both recipes materialize S (and P): B*Hq*Nq*Nk scores of up to 4 bytes must be countable.
  const double scores =
      double(spec.batch) * double(spec.q_heads) * double(spec.q_len) * double(spec.kv_len);
  if (scores * 4 > 0x1p62) {
    return Support::no(
        fmt::format("{} materializes {:.3g} scores: more bytes than 2^62", provider, scores));
  }
  return Support::yes();
}

namespace {
int64_t bytes_of(int64_t elems, DType dtype) {
  return elems * static_cast<int64_t>(dtype_bytes(dtype));
}
}  // namespace

AttentionIo::AttentionIo(const Spec& spec, const PrepareContext& ctx)
    : spec_(spec),
      q_(bytes_of(spec.q_elems(), spec.dtype), ctx.tracker),
      k_(bytes_of(spec.k_elems(), spec.dtype), ctx.tracker),
      v_(bytes_of(spec.v_elems(), spec.dtype), ctx.tracker),
      o_(bytes_of(spec.o_elems(), spec.dtype), ctx.tracker) {
  fill_input(q_.data(), spec, TensorId::q, ctx.seed, ctx.pattern, nullptr);
  fill_input(k_.data(), spec, TensorId::k, ctx.seed, ctx.pattern, nullptr);
  fill_input(v_.data(), spec, TensorId::v, ctx.seed, ctx.pattern, nullptr);
  ATTNPROF_CUDA(cudaStreamSynchronize(nullptr));
}

int64_t AttentionIo::bytes_for(const Spec& spec) {
  return bytes_of(spec.q_elems() + spec.k_elems() + spec.v_elems() + spec.o_elems(), spec.dtype);
}

int64_t AttentionIo::bytes() const {
  return q_.bytes() + k_.bytes() + v_.bytes() + o_.bytes();
}

void AttentionIo::poison_output() {
  ATTNPROF_CUDA(cudaDeviceSynchronize());
  poison(o_.data(), o_.bytes(), nullptr);
  ATTNPROF_CUDA(cudaStreamSynchronize(nullptr));
}

HostOutputs AttentionIo::read() const {
  ATTNPROF_CUDA(cudaDeviceSynchronize());
  HostOutputs out;
  out.o = to_host_float(o_.data(), spec_.o_elems(), spec_.dtype, nullptr);
  return out;
}

}  // namespace attnprof::cuda
