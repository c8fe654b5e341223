#include "providers/cuda/provider_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

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

std::string dims_text(std::span<const int64_t> dims) {
  std::string list;
  for (auto d = dims.begin(); d != dims.end(); ++d)
    list += (d == dims.begin() ? "" : d + 1 == dims.end() ? " and " : ", ") + std::to_string(*d);
  return list;
}

Support supports_own_kernel(const Spec& spec, const Device& device, const std::string& provider,
                            std::span<const int64_t> dims, int64_t dv) {
  if (Support base = supports_forward_on(spec, device, provider); !base.ok) return base;
  if (spec.dtype != DType::fp16 && spec.dtype != DType::bf16)
    return Support::no(
        fmt::format("{} takes fp16 and bf16 only, not {}", provider, to_string(spec.dtype)));
  if (spec.dv() == (dv > 0 ? dv : spec.head_dim) &&
      std::find(dims.begin(), dims.end(), spec.head_dim) != dims.end())
    return Support::yes();
  const std::string list = dims_text(dims);
  return Support::no(
      fmt::format("{} is built for head dim{} {} with Dv {}; this spec has D {} and Dv {}",
                  provider, dims.size() > 1 ? "s" : "", list, dv > 0 ? std::to_string(dv) : "== D",
                  spec.head_dim, spec.dv()));
}

AttentionArgs attention_args(const Spec& s, const Io& io) {
  AttentionArgs a;
  a.q = io.q.data;
  a.k = io.k.data;
  a.v = io.v.data;
  a.o = io.o.data;
  a.lse = io.lse.present() ? io.lse.as<float>() : nullptr;
  a.q_sb = io.q.stride_b();
  a.q_sh = io.q.stride_h();
  a.q_ss = io.q.stride_s();
  a.o_sb = io.o.stride_b();
  a.o_sh = io.o.stride_h();
  a.o_ss = io.o.stride_s();
  a.kv_sb = io.k.stride_b();
  a.kv_sh = io.k.stride_h();
  a.kv_ss = io.k.stride_s();
  a.seq_q = io.seq_q;
  a.seq_kv = io.seq_kv;
  a.batch = int(s.batch);
  a.q_heads = int(s.q_heads);
  a.kv_heads = int(s.kv_heads);
  a.q_len = int(s.q_len);
  a.kv_len = int(s.kv_len);
  a.head_dim = int(s.head_dim);
  a.mask = s.mask.kind;
  a.window = int(s.mask.window);
  a.scale = float(s.softmax_scale());
  a.softcap = float(s.softcap);
  a.sink = io.sink.present() ? io.sink.as<const float>() : nullptr;
  a.dtype = s.dtype;
  return a;
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
