// The backward run cuda.flash and cuda.flash.sm90 share (flash_backward.hpp).
#include "providers/cuda/flash_backward.hpp"
#include "attnprof/provider_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "providers/cuda/provider_common.hpp"

namespace attnprof::cuda {

bool flash_deterministic(const Settings& settings) {
  return setting_of(settings, "deterministic") == "1";
}

Support flash_backward_supports(const Spec& spec, const std::string& provider,
                                std::span<const int64_t> head_dims) {
  if (spec.mode == Mode::fwd) return Support::yes();
  if (std::find(head_dims.begin(), head_dims.end(), spec.head_dim) == head_dims.end())
    return Support::no(
        fmt::format("{}'s backward is built for head dims {}; this spec has D {} in "
                    "mode {}",
                    provider, dims_text(head_dims), spec.head_dim, to_string(spec.mode)));
  if (spec.softcap > 0 || spec.sinks)
    return Support::no(fmt::format(
        "{}'s backward has no logit softcap or sinks (its forward has); mode {} with {}", provider,
        to_string(spec.mode), spec.softcap > 0 ? "a softcap" : "sinks"));
  if (spec.ragged())
    return Support::no(
        fmt::format("{}'s backward takes a uniform batch, not a ragged one", provider));
  return Support::yes();
}

int64_t flash_backward_workspace_bytes(const Spec& spec, const Settings& settings) {
  if (spec.mode == Mode::fwd) return 0;
  return flash_bwd_workspace_floats(spec.batch, spec.q_heads, spec.q_len, spec.head_dim,
                                    flash_deterministic(settings)) *
         int64_t(sizeof(float));
}

FlashBackward::FlashBackward(const Spec& spec, const PrepareContext& ctx)
    : spec_(spec), deterministic_(flash_deterministic(ctx.settings)) {
  if (spec.mode == Mode::fwd) return;
  const int64_t floats = flash_bwd_workspace_floats(spec.batch, spec.q_heads, spec.q_len,
                                                    spec.head_dim, deterministic_);
  workspace_ = DeviceBuffer(floats * int64_t(sizeof(float)), ctx.tracker);
}

FlashBwdArgs FlashBackward::args(const Io& io) const {
  FlashBwdArgs a;
  static_cast<AttentionArgs&>(a) = attention_args(spec_, io);
  a.d_o = io.d_o.data;
  a.dq = io.dq.data;
  a.dk = io.dk.data;
  a.dv = io.dv.data;
  a.do_sb = io.d_o.stride_b();
  a.do_sh = io.d_o.stride_h();
  a.do_ss = io.d_o.stride_s();
  a.dq_sb = io.dq.stride_b();
  a.dq_sh = io.dq.stride_h();
  a.dq_ss = io.dq.stride_s();
  a.dkv_sb = io.dk.stride_b();
  a.dkv_sh = io.dk.stride_h();
  a.dkv_ss = io.dk.stride_s();
  place_flash_bwd_workspace(a, static_cast<float*>(workspace_.data()), deterministic_);
  return a;
}

std::string FlashBackward::note(const std::string& forward, std::string_view how, int step_queries,
                                int smem_bytes) const {
  if (spec_.mode == Mode::fwd) return forward;
  std::string dq = "dQ summed in fp32 by atomic adds";
  if (deterministic_) {
    const int64_t blocks = (spec_.q_len + kFlashBwdQueries - 1) / kFlashBwdQueries;
    dq = fmt::format(
        "deterministic: dQ summed in key order by {} CTAs of {} queries "
        "(setting deterministic=1)",
        blocks * spec_.q_heads * spec_.batch, kFlashBwdQueries);
  }
  const int64_t key_blocks = (spec_.kv_len + kFlashBwdKeys - 1) / kFlashBwdKeys;
  const std::string backward = fmt::format(
      "backward: {} CTAs of {} keys{}, steps of {} queries, {} B of shared memory each; {}",
      key_blocks * spec_.kv_heads * spec_.batch, kFlashBwdKeys, how, step_queries, smem_bytes, dq);
  return spec_.mode == Mode::fwd_bwd ? forward + "; " + backward : backward;
}

}  // namespace attnprof::cuda
