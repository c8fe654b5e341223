// Cold timing is cold for every provider (docs/method.md, "Timing"): the harness owns the point's
// tensors and cold batches of short launches rotate through copies of them, with no code in the
// provider. A real provider on an L2-resident point, through the point lifecycle: cold must be
// slower than hot by more than the noise, and the batch must have rotated.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "engine_test_util.hpp"
#include "test_specs.hpp"

namespace attnprof::testing {
namespace {

RunOptions timed(const std::string& mode) {
  RunOptions o;
  o.measure.mode = *parse_timing_mode(mode);
  o.measure.rule.min_time_s = 0.2;
  o.measure.rule.timeout_s = 2.0;
  o.trace_kernels = false;
  return o;
}

void record(const std::string& what, const Result& r) {
  ::testing::Test::RecordProperty(what + "_median_us", std::to_string(r.timing.median_us));
  ::testing::Test::RecordProperty(what + "_rel_noise", std::to_string(r.timing.rel_noise));
  ::testing::Test::RecordProperty(what + "_launches", std::to_string(r.timing.launches_per_sample));
  ::testing::Test::RecordProperty(what + "_copies", std::to_string(r.timing.copies));
}

class ColdTiming : public CudaEngineTest {};

// Decode with GQA: one query token over K and V of 16 MiB, which a hot batch keeps in L2.
TEST_F(ColdTiming, ColdExceedsHotForAnL2ResidentPointOfARealProvider) {
  const Spec spec = testing_specs::make_spec(1, 32, 8, 1, 4096, 128, testing_specs::bf16,
                                             testing_specs::kCausalBr);
  // Each provider on its own: one that cannot run here (cuDNN not built) is named, and the other
  // is still measured; the test skips only when neither ran.
  std::string not_run;
  for (const char* name : {"cudnn.sdpa", "cuda.naive"}) {
    SCOPED_TRACE(name);
    Provider* p = find_provider(name);
    ASSERT_NE(p, nullptr);
    if (!p->availability().available) {
      not_run +=
          fmt::format("{}{}: {}", not_run.empty() ? "" : "; ", name, p->availability().reason);
      continue;
    }
    const Result hot = run_point(spec, *p, engine(), timed("hot"));
    const Result cold = run_point(spec, *p, engine(), timed("cold"));
    ASSERT_EQ(hot.status, Status::passed) << hot.reason;
    ASSERT_EQ(cold.status, Status::passed) << cold.reason;
    record(std::string(name) + "_hot", hot);
    record(std::string(name) + "_cold", cold);
    EXPECT_GT(cold.timing.launches_per_sample, 1) << "a short kernel is timed in batches";
    EXPECT_GT(cold.timing.copies, 2) << "the cold batch rotated through copies";
    EXPECT_EQ(hot.timing.copies, 1);
    const double noise = 3 * std::max(cold.timing.rel_noise, hot.timing.rel_noise);
    EXPECT_GT(cold.timing.median_us, hot.timing.median_us * (1 + noise))
        << "cold " << cold.timing.median_us << " us, hot " << hot.timing.median_us << " us";
    // The copies are the instrument's, not the point's: the footprint is the same.
    EXPECT_EQ(cold.memory.peak_bytes, hot.memory.peak_bytes);
  }
  if (!not_run.empty()) {
    RecordProperty("not_run", not_run);
    if (not_run.find("cuda.naive") != std::string::npos) GTEST_SKIP() << not_run;
  }
}

}  // namespace
}  // namespace attnprof::testing
