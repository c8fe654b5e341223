// The Chrome/Perfetto export: a golden file from fixed events, and the structure the viewers
// need (valid JSON, "X" events in µs, one process per provider, named tracks).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "attnprof/trace.hpp"
#include "report/fixtures.hpp"
#include "trace_fixtures.hpp"

namespace attnprof {
namespace {

using nlohmann::json;
using testing::kernel;
using testing::memcpy_event;
using testing::phased_trace;

// Two providers, the second not supported; CUPTI-like absolute timestamps.
std::vector<Result> example() {
  const uint64_t t0 = 1'700'000'000'000'000'000ull;
  Result naive = phased_trace("cuda.naive", 1);
  for (TraceEvent& r : naive.trace->ranges) {
    r.start_ns += t0;
    r.end_ns += t0;
  }
  TraceEvent gemm =
      kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", t0 + 300'123, t0 + 360'456);
  gemm.grid = Dim3{132, 1, 1};
  gemm.block = Dim3{384, 1, 1};
  naive.trace->device_events = {
      memcpy_event("memcpy HtoD", t0 + 5'000, t0 + 7'500, 1 << 20), gemm,
      kernel("void attnprof::cuda::(anonymous namespace)::masked_softmax_kernel<__nv_bfloat16, "
             "8>(__nv_bfloat16 const*, __nv_bfloat16*, long, long, long, attnprof::cuda::RowMask)",
             t0 + 360'500, t0 + 390'000),
      kernel("side_stream_kernel", t0 + 390'000, t0 + 391'000, 13)};
  Result unsupported = phased_trace("cudnn.sdpa", 0);
  unsupported.status = Status::not_supported;
  unsupported.reason = "mask window:128 is not supported";
  unsupported.trace->ranges.clear();
  return {naive, unsupported};
}

// The one golden rule of the tests (report/fixtures.hpp): ATTNPROF_UPDATE_GOLDEN=1 rewrites the
// file and the test is reported skipped, never passed.
TEST(ChromeTrace, MatchesTheGoldenFile) {
  test::expect_golden("trace_example.json", chrome_trace_json(example()));
}

TEST(ChromeTrace, IsValidJsonWithTheEventsViewersNeed) {
  const json doc = json::parse(chrome_trace_json(example()));
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  const json& events = doc.at("traceEvents");
  std::set<int64_t> pids;
  std::map<std::string, json> by_name;
  int complete = 0;
  for (const json& e : events) {
    const std::string ph = e.at("ph");
    ASSERT_TRUE(ph == "X" || ph == "M") << e.dump();
    pids.insert(e.at("pid").get<int64_t>());
    if (ph == "X") {
      ++complete;
      EXPECT_TRUE(e.at("ts").is_number() && e.at("dur").is_number()) << e.dump();
      EXPECT_TRUE(e.at("tid").is_number_integer()) << e.dump();
      EXPECT_GE(e.at("ts").get<double>(), 0.0);
      by_name[e.at("name")] = e;
    }
  }
  EXPECT_EQ(pids, (std::set<int64_t>{1, 2}));
  EXPECT_EQ(complete, 8);  // 4 phases + 4 device events; the unsupported provider has none
  // ts/dur in µs from the provider's first event, exact to the nanosecond.
  const json& gemm = by_name.at("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_DOUBLE_EQ(gemm.at("ts").get<double>(), 300.123);
  EXPECT_DOUBLE_EQ(gemm.at("dur").get<double>(), 60.333);
  EXPECT_EQ(gemm.at("tid"), 7);
  EXPECT_EQ(gemm.at("cat"), "GEMM");
  EXPECT_EQ(gemm.at("args").at("grid"), json::array({132, 1, 1}));
  const json& timed = by_name.at("timed");
  EXPECT_EQ(timed.at("cat"), "phase");
  EXPECT_EQ(timed.at("tid"), 0);  // the phases track
  EXPECT_EQ(by_name.at("side_stream_kernel").at("tid"), 13);
  EXPECT_EQ(by_name.at("memcpy HtoD").at("args").at("bytes"), 1 << 20);
}

TEST(ChromeTrace, NamesProcessesAndTracks) {
  const json doc = json::parse(chrome_trace_json(example()));
  std::set<std::string> names;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("args").contains("name")) names.insert(e.at("args").at("name"));
  }
  EXPECT_TRUE(names.count("phases (host)"));
  EXPECT_TRUE(names.count("stream 7 (timed)"));
  EXPECT_TRUE(names.count("stream 13"));
  EXPECT_TRUE(names.count("cuda.naive · B2 H16 N8192 D128 bf16 none fwd · NVIDIA H200"))
      << doc.dump(1);
}

TEST(ChromeTrace, PhasesMoveOffTrackZeroWhenAStreamHasIdZero) {
  Result t = phased_trace("cuda.naive", 1);
  t.trace->device_events = {kernel("k", 300'000, 310'000, 0), kernel("k2", 310'000, 320'000, 5)};
  const json doc = json::parse(chrome_trace_json({t}));
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("cat") == "phase") {
      EXPECT_EQ(e.at("tid"), 6);
    }
  }
}

}  // namespace
}  // namespace attnprof
