// A shared latent (Spec::shared_latent, absorbed MLA: V is K's first Dv columns) on the CPU: the
// host tensors hold V's values in K's first columns, paged and ragged too; every CPU provider
// passes at it (they read the V the harness binds); the byte model counts the latent once; the
// spec's key, label and checks; the JSON round trip; the model that sets it.
#include <gtest/gtest.h>

#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/grid.hpp"
#include "attnprof/model.hpp"
#include "attnprof/result_json.hpp"
#include "attnprof/sink.hpp"
#include "attnprof/verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

Spec latent(Layout layout = Layout::bhsd) {
  Spec s{.batch = 2,
         .q_heads = 8,
         .kv_heads = 1,
         .q_len = 2,
         .kv_len = 40,
         .head_dim = 24,
         .v_head_dim = 16,
         .dtype = DType::bf16,
         .mask = Mask{MaskKind::causal_br, 0},
         .layout = layout};
  s.shared_latent = true;
  return s;
}

TEST(SharedLatent, KHoldsVInItsFirstColumns) {
  for (Layout layout : {Layout::bhsd, Layout::bshd})
    for (int64_t page : {int64_t{0}, int64_t{8}}) {
      Spec s = latent(layout);
      s.page_size = page;
      auto engine = make_cpu_engine(1);
      auto t = engine->allocate(s, true, InputFill{.seed = 5});
      const Io& io = t->io();
      int own = 0;
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t pos = 0; pos < s.kv_len; ++pos) {
          for (int64_t d = 0; d < s.dv(); ++d)
            ASSERT_EQ(io.k.as<float>()[io.k.offset(b, 0, pos, d)],
                      io.v.as<float>()[io.v.offset(b, 0, pos, d)])
                << b << " " << pos << " " << d;
          for (int64_t d = s.dv(); d < s.head_dim; ++d)
            own += io.k.as<float>()[io.k.offset(b, 0, pos, d)] !=
                   io.v.as<float>()[io.v.offset(b, 0, pos, d - s.dv())];
        }
      // The rope columns are K's own values, not a copy of V's.
      EXPECT_GT(own, s.batch * s.kv_len * (s.head_dim - s.dv()) * 9 / 10);
    }
}

TEST(SharedLatent, EveryCpuProviderPasses) {
  auto engine = make_cpu_engine(2);
  const InputFill fill{.seed = 8};
  for (auto make : {make_cpu_reference, make_cpu_naive, make_cpu_flash})
    for (const char* lens : {"", "40/7"}) {
      auto p = make();
      Spec s = latent();
      s.seqlens = lens;
      const HostOutputs out = testing_specs::run_once(*p, *engine, s, fill, 2);
      const VerifyResult r = verify_outputs(s, fill, out);
      EXPECT_TRUE(verify_passed(r)) << p->name() << " " << s.label() << ": " << r.detail;
    }
}

TEST(SharedLatent, TheByteModelCountsTheLatentOnce) {
  Spec s = latent();
  Spec apart = s;
  apart.shared_latent = false;
  const double v = 2.0 * 1 * 40 * 16 * 2;  // B x Hkv x Nk x Dv x 2 bytes
  EXPECT_DOUBLE_EQ(min_bytes(s), min_bytes(apart) - v);
  EXPECT_DOUBLE_EQ(flops(s), flops(apart));
}

TEST(SharedLatent, KeyLabelChecksAndJson) {
  Spec s = latent();
  EXPECT_TRUE(s.validate().empty());
  EXPECT_EQ(s.key(), "b2.hq8.hkv1.q2.k40.d24.dv16.bf16.causal-br.fwd.bhsd.latent");
  EXPECT_EQ(s.label(), "B2 H8/1 Nq2 Nk40 D24/16 bf16 causal-br fwd latent");
  Result r;
  r.spec = s;
  r.provider = "cpu.reference";
  EXPECT_TRUE(from_json_line(to_json_line(r)).spec.shared_latent);
  r.spec.shared_latent = false;
  EXPECT_FALSE(from_json_line(to_json_line(r)).spec.shared_latent);
  Spec wide = s;
  wide.v_head_dim = 32;
  ASSERT_EQ(wide.validate().size(), 1u);
  EXPECT_EQ(wide.validate()[0],
            "a shared latent is V as K's first Dv columns: it needs v_head_dim <= head_dim (got "
            "32 > 24)");
  Spec back = s;
  back.mode = Mode::bwd;
  back.mask = Mask{};
  ASSERT_EQ(back.validate().size(), 1u);
  EXPECT_NE(back.validate()[0].find("forward only"), std::string::npos);
}

TEST(SharedLatent, DeepSeekV3sDecodeModelSetsIt) {
  EXPECT_EQ(find_model("deepseek-v3-mla-decode").value("shared_latent"), "on");
  EXPECT_EQ(find_model("deepseek-v3").value("shared_latent"), "");
  for (const Spec& s : expand(load_preset("deepseek-v3").series.at(1)))
    EXPECT_TRUE(s.shared_latent) << s.label();
}

}  // namespace
}  // namespace attnprof
