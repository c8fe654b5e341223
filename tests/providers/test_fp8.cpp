// fp8 on the CPU: cpu.reference takes fp8 points, forward and backward (its host tensors hold
// the real values of the scaled fp8 inputs) and passes at the fp8 bounds; the runner refuses an fp8
// point to a provider without the fp8 trait in one sentence; the row and its traits survive the
// JSON round trip; the byte model counts one byte per element.
#include <gtest/gtest.h>

#include <string>

#include "attnprof/engine.hpp"
#include "attnprof/model.hpp"
#include "attnprof/result_json.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

Spec fp8_spec(DType t) {
  return {.batch = 2,
          .q_heads = 4,
          .kv_heads = 2,
          .q_len = 33,
          .kv_len = 70,
          .head_dim = 16,
          .v_head_dim = 8,
          .dtype = t,
          .mask = Mask{MaskKind::causal_br, 0}};
}

TEST(Fp8, TheReferencePassesAndOthersAreRefusedInWords) {
  auto engine = make_cpu_engine(1);
  const RunOptions o = testing_specs::quick_run_options();
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    for (Mode mode : {Mode::fwd, Mode::bwd, Mode::fwd_bwd}) {
      Spec s = fp8_spec(t);
      s.mode = mode;
      auto ref = make_cpu_reference();
      const Result yes = run_point(s, *ref, *engine, o);
      EXPECT_EQ(yes.status, Status::passed) << yes.reason;
      EXPECT_TRUE(yes.traits.fp8);
      // Backward rows (dQ, dK, dV; fwd_bwd's O too) are judged ratio-first: the bound named is the
      // worst row's, the gradient bound when a gradient row is the worst.
      if (mode == Mode::fwd) {
        EXPECT_EQ(yes.verify.tolerance, tolerance_for(t).output);
      }
      if (mode == Mode::bwd) {
        EXPECT_EQ(yes.verify.tolerance, tolerance_for(t).gradient);
      }
      // The reference computes in fp64 from the very values the fp8 codes hold: no fp8 error.
      EXPECT_LT(yes.verify.rel_l2_err, 1e-6) << yes.verify.detail;
      const Result back = result_from_json(nlohmann::json::parse(to_json(yes).dump()));
      EXPECT_EQ(back.spec, s);
      EXPECT_TRUE(back.traits.fp8);
      auto naive = make_cpu_naive();
      const Result no = run_point(s, *naive, *engine, o);
      EXPECT_EQ(no.status, Status::not_supported);
      EXPECT_EQ(no.reason, "cpu.naive computes in fp32, fp16 or bf16 only: it takes no " +
                               std::string(to_string(t)) + " inputs");
      EXPECT_FALSE(to_json(naive->traits()).contains("fp8"));
    }
  }
}

TEST(Fp8, BytesAreOnePerElement) {
  Spec s = fp8_spec(DType::fp8_e4m3);
  s.mask = {};
  Spec b = s;
  b.dtype = DType::bf16;
  EXPECT_EQ(flops(s), flops(b));
  EXPECT_EQ(2 * min_bytes(s), min_bytes(b));
  EXPECT_EQ(min_bytes(s), double(s.q_elems() + s.k_elems() + s.v_elems() + s.o_elems()));
}

}  // namespace
}  // namespace attnprof
