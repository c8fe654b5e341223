#include <gtest/gtest.h>

#include "attnprof/model.hpp"

namespace attnprof {
namespace {

TEST(Model, VisiblePairsMatchBruteForceForEveryMask) {
  const int64_t lens[] = {1, 2, 3, 7, 16, 63, 64, 129};
  for (int64_t q : lens) {
    for (int64_t k : lens) {
      std::vector<Mask> masks = {Mask{}, Mask{MaskKind::causal_tl, 0}};
      if (q <= k) {
        masks.push_back({MaskKind::causal_br, 0});
        for (int64_t w : {1, 2, 5, 64, 1000}) masks.push_back({MaskKind::window, w});
      }
      for (const Mask& m : masks) {
        EXPECT_EQ(visible_pairs(m, q, k), visible_pairs_brute_force(m, q, k))
            << to_string(m) << " q=" << q << " k=" << k;
      }
    }
  }
}

TEST(Model, CausalIsAboutHalfNotExactlyHalf) {
  // Exact: N(N+1)/2 pairs, not N^2/2.
  EXPECT_EQ(visible_pairs({MaskKind::causal_tl, 0}, 1024, 1024), 1024 * 1025 / 2);
  EXPECT_EQ(visible_pairs({MaskKind::causal_br, 0}, 1, 8192), 8192);  // decode sees every key
}

TEST(Model, FlopsFollowTheConvention) {
  Spec s{.batch = 2, .q_heads = 4, .kv_heads = 1, .q_len = 128, .kv_len = 128, .head_dim = 64};
  EXPECT_DOUBLE_EQ(forward_flops(s), 4.0 * 64 * 128 * 128 * 2 * 4);
  s.mode = Mode::bwd;
  EXPECT_DOUBLE_EQ(flops(s), 2.5 * forward_flops(s));
  s.mode = Mode::fwd_bwd;
  EXPECT_DOUBLE_EQ(flops(s), 3.5 * forward_flops(s));
  s.v_head_dim = 32;
  s.mode = Mode::fwd;
  EXPECT_DOUBLE_EQ(forward_flops(s), 2.0 * (64 + 32) * 128 * 128 * 2 * 4);
}

TEST(Model, BytesCountKvOncePerKvHead) {
  Spec s{.batch = 1,
         .q_heads = 32,
         .kv_heads = 8,
         .q_len = 1,
         .kv_len = 8192,
         .head_dim = 128,
         .dtype = DType::bf16};
  const double kv = 2.0 * 8 * 8192 * 128 * 2;  // K and V, 8 heads
  const double qo = 2.0 * 32 * 1 * 128 * 2;    // Q and O, 32 heads
  EXPECT_DOUBLE_EQ(min_bytes(s), kv + qo);
  EXPECT_EQ(io_bytes(s), static_cast<int64_t>(kv + qo));
  s.mode = Mode::bwd;  // reads Q K V O dO, writes dQ dK dV
  EXPECT_DOUBLE_EQ(min_bytes(s), 2 * kv + 2 * qo);
}

}  // namespace
}  // namespace attnprof
