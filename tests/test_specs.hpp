// Helpers the test files share: the usual way to write a Spec, and what the mask-coverage
// pattern (include/attnprof/inputs.hpp) must produce for a query row.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "attnprof/device.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::testing_specs {

// The masks, dtypes and layout the GPU provider tables are written in.
inline constexpr Mask kNone{MaskKind::none, 0};
inline constexpr Mask kCausal{MaskKind::causal_tl, 0};
inline constexpr Mask kCausalBr{MaskKind::causal_br, 0};
inline Mask window(int64_t w) {
  return {MaskKind::window, w};
}
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType fp16 = DType::fp16;
inline constexpr DType fp32 = DType::fp32;
inline constexpr Layout bshd = Layout::bshd;

// Shape, dtype and mask, then optionally mode, layout and Dv (0: same as D).
inline Spec make_spec(int64_t b, int64_t hq, int64_t hkv, int64_t nq, int64_t nk, int64_t d,
                      DType t, Mask mask = {}, Mode mode = Mode::fwd, Layout layout = Layout::bhsd,
                      int64_t dv = 0) {
  return {.batch = b,
          .q_heads = hq,
          .kv_heads = hkv,
          .q_len = nq,
          .kv_len = nk,
          .head_dim = d,
          .v_head_dim = dv,
          .dtype = t,
          .mask = mask,
          .mode = mode,
          .layout = layout};
}

// A CUDA device described, not opened: what the providers' support checks read (host tests).
inline Device described_gpu(std::string name, int cc_major, int cc_minor = 0) {
  Device d;
  d.kind = DeviceKind::cuda;
  d.name = std::move(name);
  d.cc_major = cc_major;
  d.cc_minor = cc_minor;
  return d;
}

// `s` with its K and V in a paged cache of `page_size` keys per page.
inline Spec paged(Spec s, int64_t page_size) {
  s.page_size = page_size;
  return s;
}

// `s` as a decode kernel's test case varies it: a ragged batch's lengths, pages of `page` keys,
// a softcap, sinks.
inline Spec variant(Spec s, std::string lens = "", int64_t page = 0, double softcap = 0,
                    bool sinks = false) {
  s.seqlens = std::move(lens);
  s.page_size = page;
  s.softcap = softcap;
  s.sinks = sinks;
  return s;
}

// B 1, 2 heads, D 16, fp32 at length n: the tests' smallest real point.
inline Spec sized(int64_t n) {
  return make_spec(1, 2, 2, n, n, 16, DType::fp32);
}

// With Q = 0 every visible key gets the same weight, so O's dims 0, 1 and 2 are the means of
// j % 64, j / 64 % 256 and j % 7 over the keys j that Mask::visible lets query i see; computed
// here from the mask definition alone, so a mask off by one key shows as a shifted mean.
struct CoverageMeans {
  double mean[3] = {0, 0, 0};
  int64_t visible = 0;  // 0: the row sees no key (means stay 0)
};

inline CoverageMeans coverage_means(const Spec& s, int64_t i) {
  CoverageMeans c;
  double sum[3] = {0, 0, 0};
  for (int64_t j = 0; j < s.kv_len; ++j) {
    if (!s.mask.visible(i, j, s.q_len, s.kv_len)) continue;
    sum[0] += double(j % 64);
    sum[1] += double(j / 64 % 256);
    sum[2] += double(j % 7);
    ++c.visible;
  }
  if (c.visible > 0) {
    for (int k = 0; k < 3; ++k) c.mean[k] = sum[k] / double(c.visible);
  }
  return c;
}

}  // namespace attnprof::testing_specs
