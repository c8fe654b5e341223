#include <gtest/gtest.h>

#include <climits>

#include "attnprof/spec.hpp"

namespace attnprof {
namespace {

Spec valid() {
  return {.batch = 2, .q_heads = 8, .kv_heads = 2, .q_len = 128, .kv_len = 256, .head_dim = 64};
}

TEST(Spec, ValidSpecHasNoErrors) {
  EXPECT_TRUE(valid().validate().empty());
}

struct BadCase {
  const char* name;
  void (*mutate)(Spec&);
  const char* expect;  // a substring the one error must contain (names the field)
};

TEST(Spec, EveryBadInputIsRejectedNamingTheField) {
  const BadCase cases[] = {
      {"zero batch", [](Spec& s) { s.batch = 0; }, "batch must be >= 1"},
      {"negative heads", [](Spec& s) { s.q_heads = -4; }, "q_heads must be >= 1"},
      {"zero kv heads", [](Spec& s) { s.kv_heads = 0; }, "kv_heads must be >= 1"},
      {"zero q_len", [](Spec& s) { s.q_len = 0; }, "q_len must be >= 1"},
      {"negative kv_len", [](Spec& s) { s.kv_len = -1; }, "kv_len must be >= 1"},
      {"zero head dim", [](Spec& s) { s.head_dim = 0; }, "head_dim must be >= 1"},
      {"negative v head dim", [](Spec& s) { s.v_head_dim = -2; }, "v_head_dim"},
      {"kv heads not dividing", [](Spec& s) { s.kv_heads = 3; },
       "kv_heads (3) must divide q_heads (8)"},
      {"unknown dtype", [](Spec& s) { s.dtype = static_cast<DType>(7); },
       "dtype must be one of fp32, fp16, bf16"},
      {"unknown mode", [](Spec& s) { s.mode = static_cast<Mode>(9); },
       "mode must be one of fwd, bwd, fwd_bwd"},
      {"unknown mask", [](Spec& s) { s.mask.kind = static_cast<MaskKind>(11); },
       "mask must be one of"},
      {"window of zero",
       [](Spec& s) {
         s.mask = {MaskKind::window, 0};
       },
       "mask window must be >= 1"},
      {"window on causal",
       [](Spec& s) {
         s.mask = {MaskKind::causal_tl, 5};
       },
       "only allowed with mask window:W"},
      {"bottom-right with q > kv",
       [](Spec& s) {
         s.mask = {MaskKind::causal_br, 0};
         s.q_len = 512;
       },
       "needs q_len <= kv_len"},
      {"window with q > kv",
       [](Spec& s) {
         s.mask = {MaskKind::window, 16};
         s.q_len = 512;
       },
       "needs q_len <= kv_len"},
      {"negative scale", [](Spec& s) { s.scale = -1; }, "scale must be finite"},
      {"page size not a power of two", [](Spec& s) { s.page_size = 24; },
       "page_size must be a power of two, or 0 for contiguous K and V (got 24)"},
      {"negative page size", [](Spec& s) { s.page_size = -16; }, "page_size must be a power"},
      {"paged backward",
       [](Spec& s) {
         s.page_size = 16;
         s.mode = Mode::fwd_bwd;
       },
       "a paged KV cache is forward only here (mode fwd_bwd needs --page-size 0)"},
      {"negative softcap", [](Spec& s) { s.softcap = -1; }, "softcap must be finite and >= 0"},
      {"softcap backward",
       [](Spec& s) {
         s.softcap = 50;
         s.mode = Mode::fwd_bwd;
       },
       "softcap is forward only here (mode fwd_bwd needs --softcap 0)"},
      {"sinks backward",
       [](Spec& s) {
         s.sinks = true;
         s.mode = Mode::bwd;
       },
       "sinks is forward only here (mode bwd needs --sinks off)"},
      {"more pages than int32 ids",
       [](Spec& s) {
         s.page_size = 1;
         s.batch = 1 << 16;
         s.kv_len = 1 << 16;
         s.q_len = 1;
         s.q_heads = s.kv_heads = 1;
         s.head_dim = 1;
       },
       "do not fit the block table's 32-bit page ids"},
      {"element overflow",
       [](Spec& s) {
         s.batch = INT64_MAX / 4;
         s.q_heads = 8;
         s.kv_heads = 8;
       },
       "overflows 64-bit"},
  };
  for (const BadCase& c : cases) {
    Spec s = valid();
    c.mutate(s);
    const auto errors = s.validate();
    ASSERT_FALSE(errors.empty()) << c.name;
    bool found = false;
    for (const auto& e : errors) found = found || e.find(c.expect) != std::string::npos;
    EXPECT_TRUE(found) << c.name << ": got '" << errors.front() << "'";
  }
}

// A paged cache holds whole pages: K and V count them, keys and labels name the page size, and a
// contiguous spec keeps the key it always had.
TEST(Spec, PagedCacheCountsWholePagesAndIsNamed) {
  Spec s = valid();  // kv_len 256
  EXPECT_FALSE(s.paged());
  EXPECT_EQ(s.pages_per_seq(), 0);
  EXPECT_EQ(s.kv_rows(), 256);
  EXPECT_EQ(s.block_table_elems(), 0);
  const std::string contiguous = s.key();
  s.page_size = 64;
  s.kv_len = 200;  // 4 pages, the last one 8 keys short
  EXPECT_TRUE(s.validate().empty());
  EXPECT_EQ(s.pages_per_seq(), 4);
  EXPECT_EQ(s.kv_rows(), 256);
  EXPECT_EQ(s.block_table_elems(), 8);
  EXPECT_EQ(s.k_elems(), 2 * 2 * 256 * 64);
  EXPECT_EQ(s.key(), "b2.hq8.hkv2.q128.k200.d64.dv64.fp16.none.fwd.bhsd.p64");
  EXPECT_EQ(s.label(), "B2 H8/2 Nq128 Nk200 D64 fp16 none fwd paged64");
  s.kv_len = 256;
  s.page_size = 0;
  EXPECT_EQ(s.key(), contiguous);
}

TEST(Spec, MaskVisibilityFollowsTheDefinition) {
  // key j visible to query i iff j <= i + off (causal) and j > i + off - W (window).
  Mask tl{MaskKind::causal_tl, 0}, br{MaskKind::causal_br, 0}, w{MaskKind::window, 3};
  EXPECT_TRUE(tl.visible(0, 0, 4, 8));
  EXPECT_FALSE(tl.visible(0, 1, 4, 8));
  EXPECT_TRUE(br.visible(0, 4, 4, 8));  // off = 4
  EXPECT_FALSE(br.visible(0, 5, 4, 8));
  EXPECT_TRUE(w.visible(3, 7, 4, 8));  // off = 4: keys 5, 6, 7
  EXPECT_TRUE(w.visible(3, 5, 4, 8));
  EXPECT_FALSE(w.visible(3, 4, 4, 8));
  for (const Mask& m : {Mask{}, tl, br, w}) {
    for (int64_t i = 0; i < 4; ++i) {
      int64_t first = m.first_visible(i, 4, 8), last = m.last_visible(i, 4, 8);
      for (int64_t j = 0; j < 8; ++j) {
        EXPECT_EQ(m.visible(i, j, 4, 8), j >= first && j <= last)
            << to_string(m) << " i=" << i << " j=" << j;
      }
    }
  }
}

TEST(Spec, SimplestMaskKeepsTheSameKeys) {
  // Over every small shape and window: the same visible keys, never a more complex kind.
  std::vector<Mask> masks = {Mask{}, {MaskKind::causal_tl, 0}, {MaskKind::causal_br, 0}};
  for (int64_t w = 1; w <= 7; ++w) masks.push_back({MaskKind::window, w});
  for (const Mask& m : masks) {
    for (int64_t nq = 1; nq <= 6; ++nq) {
      for (int64_t nk = 1; nk <= 6; ++nk) {
        const Mask s = m.simplest(nq, nk);
        EXPECT_LE(static_cast<int>(s.kind), static_cast<int>(m.kind)) << to_string(m);
        for (int64_t i = 0; i < nq; ++i) {
          for (int64_t j = 0; j < nk; ++j) {
            EXPECT_EQ(s.visible(i, j, nq, nk), m.visible(i, j, nq, nk))
                << to_string(m) << " -> " << to_string(s) << " nq=" << nq << " nk=" << nk;
          }
        }
      }
    }
  }
  const Mask br{MaskKind::causal_br, 0}, tl{MaskKind::causal_tl, 0};
  EXPECT_EQ(br.simplest(1, 4096), Mask{});  // a decode step sees every key
  EXPECT_EQ(br.simplest(512, 512), tl);     // square: the same diagonal
  EXPECT_EQ(br.simplest(4, 8), br);         // a chunk of a prefill: still bottom-right
  EXPECT_EQ(br.simplest(8, 4), br);         // rows that see nothing stay as they are
  EXPECT_EQ(tl.simplest(1, 1), Mask{});
  EXPECT_EQ((Mask{MaskKind::window, 8}).simplest(4, 8), br);  // the window never cuts
  EXPECT_EQ((Mask{MaskKind::window, 3}).simplest(4, 8), (Mask{MaskKind::window, 3}));
}

TEST(Spec, ParsersRoundTripAndRejectUnknowns) {
  for (const char* m : {"none", "causal", "causal-br", "window:128"}) {
    auto mask = parse_mask(m);
    ASSERT_TRUE(mask) << m;
    EXPECT_EQ(to_string(*mask), m);
  }
  EXPECT_FALSE(parse_mask("window:0"));
  EXPECT_FALSE(parse_mask("window:x"));
  EXPECT_FALSE(parse_mask("diagonal"));
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_FALSE(parse_dtype("fp8"));
  for (DType t : {DType::fp32, DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    EXPECT_EQ(parse_dtype(to_string(t)), t);
  EXPECT_EQ(parse_dtype("e4m3"), DType::fp8_e4m3);
  EXPECT_EQ(parse_dtype("float8_e5m2"), DType::fp8_e5m2);
  EXPECT_EQ(parse_mode("fwd_bwd"), Mode::fwd_bwd);
  EXPECT_FALSE(parse_mode("both"));
  EXPECT_EQ(parse_layout("bshd"), Layout::bshd);
}

TEST(Spec, KeyAndLabelNameEveryAxis) {
  Spec s = valid();
  s.mask = {MaskKind::window, 64};
  EXPECT_EQ(s.key(), "b2.hq8.hkv2.q128.k256.d64.dv64.fp16.window:64.fwd.bhsd");
  EXPECT_EQ(s.label(), "B2 H8/2 Nq128 Nk256 D64 fp16 window:64 fwd");
  s.dtype = DType::fp8_e4m3;
  EXPECT_TRUE(s.validate().empty());
  EXPECT_EQ(s.key(), "b2.hq8.hkv2.q128.k256.d64.dv64.fp8_e4m3.window:64.fwd.bhsd");
  EXPECT_EQ(dtype_bytes(s.dtype), 1u);
  EXPECT_TRUE(is_fp8(DType::fp8_e5m2));
  EXPECT_FALSE(is_fp8(DType::bf16));
  EXPECT_EQ(fp8_format(DType::fp8_e5m2), 1);
  EXPECT_EQ(fp8_format(DType::fp16), -1);
  s.dtype = DType::bf16;
  s.softcap = 50;
  s.sinks = true;
  EXPECT_TRUE(s.validate().empty());
  EXPECT_EQ(s.key(), "b2.hq8.hkv2.q128.k256.d64.dv64.bf16.window:64.fwd.bhsd.cap50.sinks");
  EXPECT_EQ(s.label(), "B2 H8/2 Nq128 Nk256 D64 bf16 window:64 fwd softcap50 sinks");
}

}  // namespace
}  // namespace attnprof
