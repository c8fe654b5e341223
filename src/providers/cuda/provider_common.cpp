#include "providers/cuda/provider_common.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cuda/cuda_check.hpp"

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

std::vector<const void*> bind_gemms(AttentionGemms& gemms, std::span<const Io> sets,
                                    const std::function<GemmOperands(const Io&)>& operands) {
  std::vector<GemmOperands> ops;
  std::vector<const void*> bound_q;
  for (const Io& io : sets) {
    ops.push_back(operands(io));
    bound_q.push_back(io.q.data);
  }
  gemms.bind(ops);
  return bound_q;
}

std::size_t bound_index(const std::vector<const void*>& bound_q, const Io& io) {
  for (std::size_t i = 0; i < bound_q.size(); ++i) {
    if (bound_q[i] == io.q.data) return i;
  }
  throw std::logic_error("launch on a set of tensors that was never bound (Run::bind)");
}

}  // namespace attnprof::cuda
