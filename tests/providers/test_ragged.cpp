// Ragged batches (Spec::seqlens) on the CPU: the host tensors' lengths and padding, every CPU
// provider verified at each sequence's own lengths, a provider that ignores the lengths caught,
// the runner refusing a ragged point to a provider without the trait, and the JSON round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attnprof/engine.hpp"
#include "attnprof/paging.hpp"
#include "attnprof/ragged.hpp"
#include "attnprof/result_json.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/traits.hpp"
#include "attnprof/verify.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"

namespace attnprof {
namespace {

// Five sequences of 1 to 70 keys in tensors of 70: every mask, GQA, a V head dim of its own.
Spec ragged(Mask mask, int64_t q_len = 70, Layout layout = Layout::bhsd) {
  Spec s{.batch = 5,
         .q_heads = 4,
         .kv_heads = 2,
         .q_len = q_len,
         .kv_len = 70,
         .head_dim = 8,
         .v_head_dim = 12,
         .dtype = DType::fp32,
         .mask = mask,
         .layout = layout};
  s.seqlens = "70/1/33/9/64";
  return s;
}

const Mask kMasks[] = {Mask{}, Mask{MaskKind::causal_tl, 0}, Mask{MaskKind::causal_br, 0},
                       Mask{MaskKind::window, 6}};

TEST(RaggedCpu, HostTensorsHoldTheLengthsAndPadKeysWithTheTailValue) {
  for (Layout layout : {Layout::bhsd, Layout::bshd}) {
    const Spec s = ragged(Mask{}, 70, layout);
    auto engine = make_cpu_engine(1);
    auto t = engine->allocate(s, true, InputFill{.seed = 4});
    const Io& io = t->io();
    ASSERT_NE(io.seq_q, nullptr);
    const SeqLens l = seq_lens(s);
    for (int64_t b = 0; b < s.batch; ++b) {
      EXPECT_EQ(io.seq_q[b], l.q[size_t(b)]);
      EXPECT_EQ(io.seq_kv[b], l.kv[size_t(b)]);
      for (int64_t pos = 0; pos < s.kv_len; ++pos) {
        const float k = io.k.as<float>()[io.k.offset(b, 1, pos, 3)];
        EXPECT_EQ(k == kPageTailValue, pos >= l.kv[size_t(b)]) << b << " " << pos;
      }
    }
    EXPECT_EQ(t->bytes(), tensor_bytes(io) + 10 * 4);
    Spec flat = s;
    flat.seqlens.clear();
    EXPECT_EQ(engine->allocate(flat, true, InputFill{.seed = 4})->io().seq_q, nullptr);
  }
}

TEST(RaggedCpu, EveryCpuProviderPassesAtEachSequencesLengths) {
  auto engine = make_cpu_engine(2);
  const InputFill fill{.seed = 21};
  for (auto make : {make_cpu_reference, make_cpu_naive, make_cpu_flash})
    for (const Mask& mask : kMasks)
      for (int64_t q_len : {int64_t{1}, int64_t{20}, int64_t{70}}) {
        auto p = make();
        const Spec s = ragged(mask, q_len);
        ASSERT_TRUE(p->traits().ragged) << p->name();
        const HostOutputs out = testing_specs::run_once(*p, *engine, s, fill, 2);
        const VerifyResult r = verify_outputs(s, fill, out);
        EXPECT_TRUE(verify_passed(r)) << p->name() << " " << s.label() << ": " << r.detail;
        EXPECT_EQ(r.rows_total, seq_lens(s).q_total() * s.q_heads);
        EXPECT_EQ(r.sampling, "all");
      }
}

// The reference of a ragged sequence is the reference of that sequence alone: sequence 2 (33
// keys) against a uniform batch of one 33-key sequence with the same values.
TEST(RaggedCpu, ASequenceIsComputedAsIfItWereAlone) {
  Spec s = ragged(Mask{MaskKind::causal_br, 0}, 20);
  s.seqlens = "33";
  s.batch = 1;
  Spec alone = s;
  alone.seqlens.clear();
  alone.kv_len = 33;
  alone.q_len = 20;
  auto engine = make_cpu_engine(1);
  auto p = make_cpu_reference();
  const InputFill fill{.seed = 2, .pattern = InputPattern::mask_coverage};
  const HostOutputs a = testing_specs::run_once(*p, *engine, s, fill);
  const HostOutputs b = testing_specs::run_once(*p, *engine, alone, fill);
  // Q = 0, V keyed on the key's position: each row is the mean of its visible keys' values.
  for (int64_t h = 0; h < s.q_heads; ++h)
    for (int64_t i = 0; i < 20; ++i)
      for (int64_t d = 0; d < s.dv(); ++d)
        EXPECT_EQ(a.o[size_t(((h * 20) + i) * s.dv() + d)],
                  b.o[size_t(((h * 20) + i) * s.dv() + d)]);
}

// A provider that ignores the lengths (runs the padded shape as if uniform) reads the padding
// keys and fails: the lengths withheld from cpu.naive's launch. (Top-left causal is left out:
// there row i of a sequence sees keys 0..i whatever the padding, so ignoring the lengths is
// harmless on every row that is an output.)
TEST(RaggedCpu, IgnoringTheLengthsIsCaught) {
  auto engine = make_cpu_engine(1);
  const InputFill fill{.seed = 8};
  for (const Mask& mask : {kMasks[0], kMasks[2], kMasks[3]}) {
    const Spec s = ragged(mask, 20);
    auto p = make_cpu_naive();
    testing_specs::OnePoint pt = testing_specs::prepare_point(*p, *engine, s, fill);
    Io blind = pt.io();
    blind.seq_q = blind.seq_kv = nullptr;
    pt.tensors->poison_outputs();
    pt.run->launch(engine->stream(), blind);
    const VerifyResult r = verify_outputs(s, fill, pt.tensors->read_outputs());
    EXPECT_FALSE(verify_passed(r)) << to_string(mask) << ": " << r.detail;
    // The same launch with the lengths passes.
    const VerifyResult ok = verify_outputs(s, fill, pt.launch_and_read(*engine));
    EXPECT_TRUE(verify_passed(ok)) << ok.detail;
  }
}

// Padding rows are no output: NaN left there (the poison a provider need not overwrite) is not
// counted, while a NaN in a sequence's row is.
TEST(RaggedCpu, PaddingRowsAreNotScannedButSequenceRowsAre) {
  const Spec s = ragged(Mask{}, 70);
  auto engine = make_cpu_engine(1);
  const InputFill fill{.seed = 3};
  auto p = make_cpu_reference();
  HostOutputs out = testing_specs::run_once(*p, *engine, s, fill);
  // Sequence 1 holds one key: its rows 1.. are padding (the reference leaves them poisoned).
  ASSERT_TRUE(std::isnan(out.o[size_t(((1 * s.q_heads) * 70 + 5) * s.dv())]));
  EXPECT_TRUE(verify_passed(verify_outputs(s, fill, out)));
  out.o[size_t(((1 * s.q_heads) * 70 + 0) * s.dv())] = NAN;  // its one row
  const VerifyResult r = verify_outputs(s, fill, out);
  EXPECT_FALSE(verify_passed(r));
  EXPECT_EQ(r.nan_count, 1);
}

TEST(RaggedCpu, TheRunnerRefusesARaggedPointToAProviderWithoutTheTrait) {
  ProviderTraits t;
  t.name = "x.uniform";
  EXPECT_EQ(variant_refusal(t, ragged(Mask{})),
            "x.uniform takes uniform lengths only: it has no ragged batches (seqlens "
            "70/1/33/9/64)");
  t.ragged = true;
  EXPECT_EQ(variant_refusal(t, ragged(Mask{})), "");
  auto engine = make_cpu_engine(1);
  auto ref = make_cpu_reference();
  const Result yes = run_point(ragged(Mask{MaskKind::causal_tl, 0}), *ref, *engine,
                               testing_specs::quick_run_options());
  EXPECT_EQ(yes.status, Status::passed) << yes.reason;
  const Result back = result_from_json(nlohmann::json::parse(to_json(yes).dump()));
  EXPECT_EQ(back.spec, ragged(Mask{MaskKind::causal_tl, 0}));
  EXPECT_TRUE(back.traits.ragged);
  EXPECT_EQ(to_json(ragged(Mask{}, 70))["seqlens"], "70/1/33/9/64");
  Spec flat = ragged(Mask{});
  flat.seqlens.clear();
  EXPECT_FALSE(to_json(flat).contains("seqlens"));
  // tokens/s counts the sequences' queries, not the padding.
  EXPECT_NEAR(yes.tokens_per_s * yes.timing.median_us * 1e-6, double(seq_lens(yes.spec).q_total()),
              1e-6 * double(seq_lens(yes.spec).q_total()));
}

}  // namespace
}  // namespace attnprof
