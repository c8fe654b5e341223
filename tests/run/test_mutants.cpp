// Mutation tests of verification (docs/method.md, "Verification"): every test.mutant.* ends
// `incorrect` through the point lifecycle on the CPU, at shapes whose lengths are multiples of no
// tile, while its unmutated base passes at the same shape; the host's sample (beyond its budget)
// still catches every bug of a tile or more. tests/gpu/test_device_verify.cpp does the same on the
// GPU with the device check.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "attnprof/engine.hpp"
#include "attnprof/runner.hpp"
#include "one_point.hpp"
#include "providers/factories.hpp"
#include "providers/test/mutant.hpp"
#include "test_specs.hpp"

namespace attnprof {
namespace {

using namespace testing_specs;
using test::Mutation;

RunOptions quick_options() {
  RunOptions o = quick_run_options();
  o.threads = 2;
  return o;
}

// Lengths 3000, 5000, 12289 and 1537: multiples of no tile of 64 (nor of 16 but for 3000 and
// 5000, which are of 8). Small heads and batch keep the CPU's work in seconds.
std::vector<test::MutationCase> cases() {
  return {
      {make_spec(2, 4, 2, 3000, 3000, 32, bf16),
       {Mutation::dropped_tail_tile, Mutation::wrong_row, Mutation::wrong_pair,
        Mutation::swapped_kv_heads, Mutation::wrong_lse, Mutation::race, Mutation::row_off_5pct}},
      {make_spec(1, 4, 2, 5000, 5000, 32, fp16, kCausal),
       {Mutation::dropped_tail_tile, Mutation::wrong_row, Mutation::wrong_pair,
        Mutation::swapped_kv_heads, Mutation::diagonal_off_by_one, Mutation::wrong_lse,
        Mutation::race, Mutation::row_off_5pct}},
      {make_spec(1, 2, 1, 12289, 12289, 16, fp32, window(1000)),
       {Mutation::dropped_tail_tile, Mutation::wrong_row, Mutation::wrong_pair,
        Mutation::window_too_wide, Mutation::wrong_lse, Mutation::race, Mutation::row_off_5pct}},
      {make_spec(1, 2, 1, 1537, 1537, 16, fp32, kCausal, Mode::bwd),
       {Mutation::wrong_dk_head, Mutation::race}},
  };
}

Result run(Provider& p, const Spec& s, const RunOptions& o) {
  static std::unique_ptr<Engine> engine = make_cpu_engine(2);
  return run_point(s, p, *engine, o);
}

// A mutation added to the list and to no case would prove nothing: every one is run here.
TEST(Mutants, EveryMutationIsInTheCpuCases) {
  for (Mutation m : test::kMutations) {
    bool listed = false;
    for (const test::MutationCase& c : cases())
      listed = listed || std::find(c.mutations.begin(), c.mutations.end(), m) != c.mutations.end();
    EXPECT_TRUE(listed) << test::to_string(m) << " is in no case of cases()";
  }
}

TEST(Mutants, EveryMutationIsCaughtAndItsBasePasses) {
  for (const test::MutationCase& c : cases()) {
    RunOptions o = quick_options();
    auto base = c.spec.mode == Mode::fwd ? make_cpu_flash() : make_cpu_reference();
    const Result ok = run(*base, c.spec, o);
    ASSERT_EQ(ok.status, Status::passed) << c.spec.label() << ": " << ok.reason;
    EXPECT_EQ(ok.verify.sampling, "all") << c.spec.label();
    // The first, the last timed and (outside mode bwd) the one on new input values.
    EXPECT_EQ(ok.verify.launches_checked, c.spec.mode == Mode::bwd ? 2 : 3) << c.spec.label();
    for (Mutation m : c.mutations) {
      // The CPU engine checks no repeats by default; the race needs them.
      o.verify.repeats = m == Mutation::race ? 10 : 0;
      auto mutant = test::make_mutant(m, DeviceKind::cpu);
      const Result r = run(*mutant, c.spec, o);
      EXPECT_EQ(r.status, Status::incorrect)
          << test::to_string(m) << " at " << c.spec.label() << ": " << r.reason;
      EXPECT_GT(r.verify.seconds, 0.0);
    }
  }
}

// Where the bug is, the verdict says: the row, the (batch, head), the tensor.
TEST(Mutants, TheVerdictNamesTheRow) {
  const RunOptions o = quick_options();
  const Spec s = make_spec(2, 4, 2, 3000, 3000, 32, bf16);
  auto reason = [&](Mutation m) {
    auto mutant = test::make_mutant(m, DeviceKind::cpu);
    return run(*mutant, s, o).reason;
  };
  // wrong_row: (batch 1, head 2), row 3000 / 2 + 7.
  EXPECT_NE(reason(Mutation::wrong_row).find("o row (b=1, h=2, i=1507)"), std::string::npos);
  EXPECT_NE(reason(Mutation::wrong_lse).find("lse row (b=1, h=2, i=1507)"), std::string::npos);
  // dropped_tail_tile: the last query tile (rows 2944..2999) of the last (batch, head).
  const std::string dropped = reason(Mutation::dropped_tail_tile);
  EXPECT_NE(dropped.find("o row (b=1, h=3, i=29"), std::string::npos) << dropped;
  EXPECT_NE(reason(Mutation::wrong_pair).find("o row (b=1, h=2,"), std::string::npos);
}

// Beyond the host's budget, its sample still sees every bug of a tile (16 rows) or more and of a
// whole (batch, head); a single interior row is what only the full check (or the GPU) sees.
TEST(Mutants, TheHostSampleCatchesTileAndHeadBugs) {
  RunOptions o = quick_options();
  o.verify.full_check_flops = 0;  // every point is beyond the budget
  const Spec s = make_spec(1, 4, 2, 5000, 5000, 32, fp16, kCausal);
  for (Mutation m : {Mutation::dropped_tail_tile, Mutation::wrong_pair, Mutation::swapped_kv_heads,
                     Mutation::diagonal_off_by_one}) {
    auto mutant = test::make_mutant(m, DeviceKind::cpu);
    const Result r = run(*mutant, s, o);
    EXPECT_EQ(r.status, Status::incorrect) << test::to_string(m) << ": " << r.reason;
    EXPECT_EQ(r.verify.sampling, "sample");
    EXPECT_LT(r.verify.rows_checked, r.verify.rows_total);
  }
  auto base = make_cpu_flash();
  const Result ok = run(*base, s, o);
  EXPECT_EQ(ok.status, Status::passed) << ok.reason;
  // --verify full checks every row whatever the budget says, and finds the single row.
  o.verify.full = true;
  auto row = test::make_mutant(Mutation::wrong_row, DeviceKind::cpu);
  const Result full = run(*row, s, o);
  EXPECT_EQ(full.status, Status::incorrect) << full.reason;
  EXPECT_EQ(full.verify.rows_checked, full.verify.rows_total);
}

// The race damages one launch in ten: the first check and the last timed launch may both miss
// it, the repeats do not.
TEST(Mutants, ARaceIsCaughtByTheRepeats) {
  RunOptions o = quick_options();
  const Spec s = make_spec(1, 2, 1, 1000, 1000, 16, fp32);
  o.measure.rule.min_samples = o.measure.rule.max_samples = 3;  // launches 1..4 before the checks
  o.verify.repeats = 0;
  auto race = test::make_mutant(Mutation::race, DeviceKind::cpu);
  EXPECT_EQ(run(*race, s, o).status, Status::passed);  // launch 10 is never checked
  o.verify.repeats = 10;
  const Result r = run(*race, s, o);
  EXPECT_EQ(r.status, Status::incorrect) << r.reason;
  EXPECT_NE(r.reason.find("repeat launch"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace attnprof
