#include <gtest/gtest.h>

#include "attnprof/model.hpp"

#include <utility>
#include <vector>

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

// A paged cache: the pages each sequence holds (the last one whole) and the int32 block table,
// counted here by walking the pages one by one.
TEST(Model, PagedBytesCountWholePagesAndTheTable) {
  for (int64_t page : {1, 16, 64, 1024}) {
    for (int64_t kv : {1, 15, 16, 17, 1000, 8192}) {
      Spec s{.batch = 3,
             .q_heads = 8,
             .kv_heads = 2,
             .q_len = 1,
             .kv_len = kv,
             .head_dim = 64,
             .v_head_dim = 32,
             .dtype = DType::bf16,
             .mask = Mask{MaskKind::causal_br, 0},
             .page_size = page};
      int64_t pages = 0, held = 0;
      for (int64_t first = 0; first < kv; first += page) {
        ++pages;
        held += page;
      }
      const double kv_bytes = 3.0 * 2 * held * (64 + 32) * 2;
      const double qo = 3.0 * 8 * 1 * (64 + 32) * 2;
      const double table = 3.0 * pages * 4;
      EXPECT_DOUBLE_EQ(min_bytes(s), kv_bytes + qo + table) << page << " " << kv;
      EXPECT_EQ(io_bytes(s), static_cast<int64_t>(kv_bytes + qo + table));
      s.page_size = 0;  // contiguous: exactly kv keys, no table
      EXPECT_DOUBLE_EQ(min_bytes(s), 3.0 * 2 * kv * (64 + 32) * 2 + qo);
    }
  }
}

// Only the keys some query sees are read: counted here key by key over every query row.
TEST(Model, BytesCountTheKeysSomeQuerySees) {
  for (const Mask& mask : {Mask{}, Mask{MaskKind::causal_tl, 0}, Mask{MaskKind::causal_br, 0},
                           Mask{MaskKind::window, 1}, Mask{MaskKind::window, 128}}) {
    for (const auto& [nq, nk] : {std::pair<int64_t, int64_t>{1, 8192}, {7, 300}, {300, 300}}) {
      for (int64_t page : {0, 16}) {
        Spec s{.batch = 2,
               .q_heads = 4,
               .kv_heads = 2,
               .q_len = nq,
               .kv_len = nk,
               .head_dim = 64,
               .dtype = DType::bf16,
               .mask = mask,
               .page_size = page};
        std::vector<bool> seen(size_t(nk), false);
        for (int64_t i = 0; i < nq; ++i)
          for (int64_t j = 0; j < nk; ++j)
            seen[size_t(j)] = seen[size_t(j)] || mask.visible(i, j, nq, nk);
        int64_t keys = 0;
        std::vector<bool> page_seen(size_t(page > 0 ? (nk + page - 1) / page : 0), false);
        for (int64_t j = 0; j < nk; ++j) {
          keys += seen[size_t(j)];
          if (page > 0 && seen[size_t(j)]) page_seen[size_t(j / page)] = true;
        }
        int64_t pages = 0;
        for (bool p : page_seen) pages += p;
        const double rows = page > 0 ? double(pages * page) : double(keys);
        const double want = 2.0 * 4 * nq * 64 * 2 * 2      // Q and O
                            + 2.0 * 2 * rows * 64 * 2 * 2  // K and V read
                            + 2.0 * pages * 4;             // block table entries
        EXPECT_DOUBLE_EQ(min_bytes(s), want)
            << to_string(mask) << " " << nq << " " << nk << " " << page;
        EXPECT_EQ(keys_read(s).keys, keys);
      }
    }
  }
}

}  // namespace
}  // namespace attnprof
