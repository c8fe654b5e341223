// The supervisor/worker line protocol: every message round-trips exactly, anything else is
// refused with a one-line reason, and the poisoned-worker rule.
#include <gtest/gtest.h>

#include <cmath>

#include "run/protocol.hpp"

namespace attnprof::protocol {
namespace {

Spec odd_spec() {
  return {.batch = 3,
          .q_heads = 8,
          .kv_heads = 2,
          .q_len = 17,
          .kv_len = 129,
          .head_dim = 96,
          .v_head_dim = 64,
          .dtype = DType::bf16,
          .mask = {MaskKind::window, 7},
          .mode = Mode::fwd_bwd,
          .layout = Layout::bshd,
          .scale = 0.1};  // not exact in binary: must come back bit for bit
}

TEST(Protocol, RequestRoundTripsExactly) {
  Request r;
  r.provider = "cpu.flash";
  r.spec = odd_spec();
  r.options.seed = 0xFFFF'FFFF'FFFF'FFF0ull;
  r.options.measure.mode = TimingMode::graph;
  r.options.measure.rule.min_samples = 7;
  r.options.measure.rule.max_noise = 0.003;
  r.options.measure.rule.min_time_s = 1.0 / 3;
  r.options.measure.rule.timeout_s = 2.5;
  r.options.measure.rule.over_limit_s = 0.125;
  r.options.auto_peaks = AutoPeaks::any;
  r.options.verify.sample_rows = 11;
  r.options.verify.full = true;
  r.options.verify.repeats = 4;
  r.options.warmup_launches = 4;
  r.options.trace_kernels = false;
  r.options.threads = 3;
  r.settings = {{"pipeline", "p64x3"}, {"split", "8:2048"}};
  const std::string line = encode_request(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const Request back = decode_request(line);
  EXPECT_EQ(back.provider, r.provider);
  EXPECT_EQ(back.spec, r.spec);
  EXPECT_EQ(back.options.seed, r.options.seed);
  EXPECT_EQ(back.options.measure.mode, TimingMode::graph);
  EXPECT_EQ(back.options.measure.rule.min_samples, 7);
  EXPECT_EQ(back.options.measure.rule.max_noise, 0.003);
  EXPECT_EQ(back.options.measure.rule.min_time_s, 1.0 / 3);
  EXPECT_EQ(back.options.measure.rule.timeout_s, 2.5);
  EXPECT_EQ(back.options.measure.rule.over_limit_s, 0.125);
  EXPECT_EQ(back.options.auto_peaks, AutoPeaks::any);
  EXPECT_EQ(back.options.verify.sample_rows, 11);
  EXPECT_EQ(back.options.verify.full_check_flops, r.options.verify.full_check_flops);
  EXPECT_TRUE(back.options.verify.full);
  EXPECT_EQ(back.options.verify.repeats, 4);
  EXPECT_EQ(back.options.warmup_launches, 4);
  EXPECT_FALSE(back.options.trace_kernels);
  EXPECT_EQ(back.options.threads, 3);
  EXPECT_EQ(back.settings, r.settings);  // the point's settings travel with it (protocol 3)
}

TEST(Protocol, ReplyCarriesTheRow) {
  Result r;
  r.provider = "cpu.naive";
  r.spec = odd_spec();
  r.status = Status::failed;
  r.reason = "line one\nline two";
  r.timing.median_us = std::nan("");
  r.env = {{"git_commit", "abc"}};
  {
    const std::string line = encode_reply(r);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    const Reply back = decode_reply(line);
    EXPECT_EQ(back.row.reason, r.reason);
    EXPECT_EQ(back.row.spec, r.spec);
    EXPECT_EQ(back.row.status, Status::failed);
    EXPECT_TRUE(std::isnan(back.row.timing.median_us));
    EXPECT_EQ(back.row.env, r.env);
  }
}

TEST(Protocol, HelloRoundTrips) {
  Hello h;
  h.pid = 4242;
  WorkerEngine cpu;
  cpu.kind = DeviceKind::cpu;
  cpu.available = true;
  cpu.device = "cpu: test";
  cpu.threads = 6;
  cpu.memory_bytes = int64_t{1} << 40;
  cpu.env = {{"device", "cpu: test"}, {"git_commit", "abc"}};
  WorkerEngine cuda;
  cuda.kind = DeviceKind::cuda;
  cuda.reason = "no CUDA driver";
  h.engines = {cpu, cuda};
  const Hello back = decode_hello(encode_hello(h));
  EXPECT_EQ(back.pid, 4242);
  ASSERT_EQ(back.engines.size(), 2u);
  EXPECT_EQ(back.engines[0].threads, 6);
  EXPECT_EQ(back.engines[0].memory_bytes, int64_t{1} << 40);
  EXPECT_EQ(back.engines[0].env, cpu.env);
  EXPECT_EQ(back.engines[1].kind, DeviceKind::cuda);
  EXPECT_FALSE(back.engines[1].available);
  EXPECT_EQ(back.engines[1].reason, "no CUDA driver");
}

TEST(Protocol, AnythingElseIsRefusedWithAReason) {
  struct Case {
    std::string line;
    const char* expect;
  };
  const Case cases[] = {
      {"Segmentation fault", "not JSON"},
      {"[1,2]", "expected a JSON object"},
      {R"({"point":{"provider":"cpu.naive"}})", "'spec'"},
      {R"({"hello":{"protocol":99,"pid":1,"engines":[]}})", "protocol 99"},
      {R"({"row":"not a row"})", "expected a JSON object"},
      {R"({"row":{"schema_version":99}})", "schema_version 99"},
  };
  for (const Case& c : cases) {
    try {
      if (c.line.find("hello") != std::string::npos) {
        decode_hello(c.line);
      } else if (c.line.find("row") != std::string::npos) {
        decode_reply(c.line);
      } else {
        decode_request(c.line);
      }
      ADD_FAILURE() << "accepted: " << c.line;
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.expect), std::string::npos) << c.line << ": " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(Protocol, TheFaultTravelsTyped) {
  // Whether the worker is poisoned is the row's fault, classified where it was caught; no text
  // is searched on the way (a sticky-sounding reason with another fault stays that fault).
  for (Fault f : {Fault::sticky_device, Fault::oom, Fault::library, Fault::none}) {
    Result r;
    r.provider = "cpu.naive";
    r.status = status_of(f);
    r.fault = f;
    r.reason = "cudaErrorIllegalAddress (an illegal memory access was encountered)";
    const Reply back = decode_reply(encode_reply(r));
    EXPECT_EQ(back.row.fault, f);
    EXPECT_EQ(back.row.status, status_of(f));
  }
}

}  // namespace
}  // namespace attnprof::protocol
