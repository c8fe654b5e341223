// `attnprof trace` on the GPU: cuda.naive's timed launches are exactly two GEMMs and one
// softmax each, on the engine's stream, inside the "timed" range (CUPTI timestamps for both).
// Skips without a device, and where CUPTI is held by ncu or compute-sanitizer.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>

#include "attnprof/registry.hpp"
#include "attnprof/runner.hpp"
#include "attnprof/trace.hpp"
#include "engine_test_util.hpp"

namespace attnprof::testing {
namespace {

class TraceNaiveTest : public CudaEngineTest {};

TEST_F(TraceNaiveTest, TwoGemmsAndOneSoftmaxPerLaunch) {
  Provider* naive = find_provider("cuda.naive");
  ASSERT_NE(naive, nullptr);
  if (!naive->availability().available) GTEST_SKIP() << naive->availability().reason;
  Spec spec;
  spec.batch = 1;
  spec.q_heads = spec.kv_heads = 2;
  spec.q_len = spec.kv_len = 256;
  spec.head_dim = 64;
  spec.dtype = DType::bf16;
  // The point through the one lifecycle with the trace hooks, as `attnprof trace` runs it.
  RunOptions options;
  options.trace_launches = 3;
  options.trace_kernels = false;
  std::unique_ptr<PointHooks> hooks = trace_hooks_factory()(options, engine());
  ASSERT_NE(hooks, nullptr);
  const Result t = run_point(spec, *naive, engine(), options, hooks.get());
  ASSERT_EQ(t.status, Status::passed) << t.reason;
  if (t.kernels_note.rfind("unavailable", 0) == 0) GTEST_SKIP() << t.kernels_note;
  ASSERT_TRUE(t.trace.has_value());
  const PointTrace& trace = *t.trace;

  ASSERT_EQ(trace.ranges.size(), 5u);  // prepare, verify, warm-up, timed, verify-last
  for (size_t i = 0; i + 1 < trace.ranges.size(); ++i) {
    EXPECT_LE(trace.ranges[i].start_ns, trace.ranges[i].end_ns);
    EXPECT_LE(trace.ranges[i].end_ns, trace.ranges[i + 1].start_ns) << trace.ranges[i].name;
  }
  const TraceEvent& timed = trace.ranges[3];
  EXPECT_EQ(timed.name, kPhaseTimed);
  // The row's kernels are the timed range's: three launches of two GEMMs and a softmax.
  int64_t row_kernels = 0;
  for (const KernelRecord& k : t.kernels) row_kernels += k.count;
  EXPECT_EQ(row_kernels, 9);

  const Breakdown b = make_breakdown(t);
  EXPECT_EQ(b.launches, 3);
  EXPECT_TRUE(b.flags.empty()) << b.flags.front();
  // Kernels only: a memset the provider queues (a memset record, not a kernel) may come too.
  std::map<KernelCategory, int> kernels_by_category;
  for (const TraceEvent& e : events_in_phase(t, kPhaseTimed)) {
    if (e.kind == TraceKind::kernel) ++kernels_by_category[e.category];
  }
  EXPECT_EQ(kernels_by_category[KernelCategory::gemm], 2 * 3);
  EXPECT_EQ(kernels_by_category[KernelCategory::softmax_reduction], 1 * 3);
  EXPECT_EQ(kernels_by_category.size(), 2u) << "a kernel of another category ran";
  for (const TraceEvent& e : events_in_phase(t, kPhaseTimed)) {
    EXPECT_EQ(e.stream, trace.timed_stream) << e.name;
    EXPECT_LE(e.end_ns, timed.end_ns) << e.name;  // the range ends after a device synchronize
    ASSERT_TRUE(e.grid.has_value()) << e.name;
    EXPECT_GE(e.grid->x * e.grid->y * e.grid->z, 1u);
  }
  // The prepare and verify phases ran device work too (fills, copies), outside the breakdown.
  EXPECT_GT(trace.device_events.size(), events_in_phase(t, kPhaseTimed).size());

  const nlohmann::json doc = nlohmann::json::parse(chrome_trace_json({t}));
  int kernels = 0;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("args").at("kind") == "kernel") ++kernels;
  }
  EXPECT_GE(kernels, 9);
}

}  // namespace
}  // namespace attnprof::testing
