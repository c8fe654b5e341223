// Logit softcap and attention sinks (Spec::softcap, Spec::sinks) on the CPU: the harness holds
// the sink logits as an input; cpu.reference applies both and passes the host's check (whose
// block reference applies them too); outputs computed without them fail it; the runner refuses
// the points to a provider without the traits, in one sentence; the spec and the traits survive
// the JSON round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/io.hpp"
#include "attnprof/reference.hpp"
#include "attnprof/result_json.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

Spec modded(double softcap, bool sinks, Mask mask = Mask{MaskKind::causal_tl, 0}) {
  return {.batch = 2,
          .q_heads = 4,
          .kv_heads = 2,
          .q_len = 37,
          .kv_len = 37,
          .head_dim = 16,
          .v_head_dim = 8,
          .dtype = DType::fp32,
          .mask = mask,
          .softcap = softcap,
          .sinks = sinks};
}

// A softcap small enough to bend these scores (|s| reaches ~3 at D 16).
constexpr double kCap = 1.5;

TEST(ScoreMods, TheReferencePassesAndOthersAreRefusedInWords) {
  auto engine = make_cpu_engine(1);
  const RunOptions o = testing_specs::quick_run_options();
  for (const Spec& s : {modded(kCap, false), modded(0, true), modded(kCap, true),
                        modded(kCap, true, Mask{MaskKind::window, 5})}) {
    auto ref = make_cpu_reference();
    const Result yes = run_point(s, *ref, *engine, o);
    EXPECT_EQ(yes.status, Status::passed) << s.label() << ": " << yes.reason;
    EXPECT_LT(yes.verify.rel_l2_err, 1e-6) << s.label() << ": " << yes.verify.detail;
    const Result back = result_from_json(nlohmann::json::parse(to_json(yes).dump()));
    EXPECT_EQ(back.spec, s);
    EXPECT_TRUE(back.traits.softcap && back.traits.sinks);
    auto naive = make_cpu_naive();
    const Result no = run_point(s, *naive, *engine, o);
    EXPECT_EQ(no.status, Status::not_supported);
    EXPECT_EQ(no.reason, s.softcap > 0 ? "cpu.naive has no logit softcap (softcap 1.5)"
                                       : "cpu.naive has no attention sinks");
  }
  EXPECT_FALSE(to_json(modded(0, false)).contains("softcap"));
  EXPECT_FALSE(to_json(modded(0, false)).contains("sinks"));
}

// Outputs of the plain spec fail the check of the modified one: the check sees both modifiers.
TEST(ScoreMods, OutputsWithoutTheModifierFailTheCheck) {
  auto engine = make_cpu_engine(1);
  const InputFill fill{.seed = 11};
  for (const Spec& s : {modded(kCap, false), modded(0, true)}) {
    Spec plain = s;
    plain.softcap = 0;
    plain.sinks = false;
    auto ref = make_cpu_reference();
    testing_specs::OnePoint pt = testing_specs::prepare_point(*ref, *engine, plain, fill);
    const HostOutputs out = pt.launch_and_read(*engine);
    EXPECT_TRUE(verify_passed(verify_outputs(plain, fill, out, {})));
    const VerifyResult v = verify_outputs(s, fill, out, {});
    EXPECT_FALSE(verify_passed(v)) << s.label() << ": " << v.detail;
    EXPECT_GT(v.rel_l2_err, 10 * v.tolerance) << s.label();
  }
}

// The sink logits are an input of the point: the same for every provider, one per query head,
// fp32 whatever the dtype, and a row that sees no key gives the sink all its weight.
TEST(ScoreMods, SinkLogitsAreAnInputAndAnEmptyRowIsTheSinks) {
  Spec s = modded(0, true, Mask{MaskKind::causal_br, 0});
  s.dtype = DType::bf16;
  s.q_len = 40;  // > kv_len 37: rows 0..2 see no key
  const Io io = io_layout(s, DType::bf16, true);
  EXPECT_EQ(io.sink.elems(), s.q_heads);
  EXPECT_EQ(io.sink.storage, DType::fp32);
  const auto in = launch_inputs(s, io);
  EXPECT_NE(std::find(in.begin(), in.end(), TensorRole::sink), in.end());
  EXPECT_FALSE(io_layout(modded(0, false), DType::fp32, true).sink.present() ||
               io_layout(modded(0, false), DType::fp32, true).sink.elems() > 0);
  const std::vector<double> q = input_slice(s, 5, InputPattern::random, TensorId::q, 0, 1);
  const std::vector<double> k = input_slice(s, 5, InputPattern::random, TensorId::k, 0, 0);
  const std::vector<double> v = input_slice(s, 5, InputPattern::random, TensorId::v, 0, 0);
  const double sink = sink_of(s, {.seed = 5}, 1);
  EXPECT_EQ(sink, double(sink_logit(InputPattern::random, 5, 1)));
  EXPECT_NE(sink, sink_of(s, {.seed = 5}, 2));
  const RowRef empty = reference_row(s, q.data(), k, v, 0, sink);
  EXPECT_EQ(empty.lse, sink);
  for (double x : empty.o) EXPECT_EQ(x, 0.0);
  // A row that sees keys gives the sink exp(sink - lse) of its weight: O shrinks by that much.
  const RowRef with = reference_row(s, q.data() + 39 * s.head_dim, k, v, 39, sink);
  const RowRef without = reference_row(s, q.data() + 39 * s.head_dim, k, v, 39, kNoSink);
  const double kept = 1 - std::exp(sink - with.lse);
  for (int64_t c = 0; c < s.dv(); ++c)
    EXPECT_NEAR(with.o[size_t(c)], kept * without.o[size_t(c)], 1e-12);
}

}  // namespace
}  // namespace attnprof
