#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnprof/journal.hpp"
#include "attnprof/sink.hpp"
#include "report/fixtures.hpp"

namespace attnprof {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Same bits, or both NaN (NaN's payload and sign are not kept; docs/results.md says so).
::testing::AssertionResult same_double(const char* a_expr, const char* b_expr, double a, double b) {
  if ((std::isnan(a) && std::isnan(b)) ||
      std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << a_expr << " = " << a << " but " << b_expr << " = " << b;
}
#define EXPECT_SAME_DOUBLE(a, b) EXPECT_PRED_FORMAT2(same_double, a, b)

void expect_same_optional(const std::optional<double>& a, const std::optional<double>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (a) {
    EXPECT_SAME_DOUBLE(*a, *b);
  }
}

void expect_same(const Result& a, const Result& b) {
  EXPECT_EQ(a.schema_version, b.schema_version);
  EXPECT_EQ(a.provider, b.provider);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.spec.batch, b.spec.batch);
  EXPECT_EQ(a.spec.q_heads, b.spec.q_heads);
  EXPECT_EQ(a.spec.kv_heads, b.spec.kv_heads);
  EXPECT_EQ(a.spec.q_len, b.spec.q_len);
  EXPECT_EQ(a.spec.kv_len, b.spec.kv_len);
  EXPECT_EQ(a.spec.head_dim, b.spec.head_dim);
  EXPECT_EQ(a.spec.v_head_dim, b.spec.v_head_dim);
  EXPECT_EQ(a.spec.dtype, b.spec.dtype);
  EXPECT_EQ(a.spec.mask, b.spec.mask);
  EXPECT_EQ(a.spec.mode, b.spec.mode);
  EXPECT_EQ(a.spec.layout, b.spec.layout);
  EXPECT_SAME_DOUBLE(a.spec.scale, b.spec.scale);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.device, b.device);
  const TimingResult &ta = a.timing, &tb = b.timing;
  EXPECT_EQ(ta.mode, tb.mode);
  EXPECT_SAME_DOUBLE(ta.median_us, tb.median_us);
  EXPECT_SAME_DOUBLE(ta.mean_us, tb.mean_us);
  EXPECT_SAME_DOUBLE(ta.min_us, tb.min_us);
  EXPECT_SAME_DOUBLE(ta.p5_us, tb.p5_us);
  EXPECT_SAME_DOUBLE(ta.p95_us, tb.p95_us);
  EXPECT_SAME_DOUBLE(ta.cv, tb.cv);
  EXPECT_SAME_DOUBLE(ta.rel_noise, tb.rel_noise);
  EXPECT_EQ(ta.samples, tb.samples);
  EXPECT_EQ(ta.launches_per_sample, tb.launches_per_sample);
  EXPECT_EQ(ta.noisy, tb.noisy);
  EXPECT_EQ(ta.stop_reason, tb.stop_reason);
  EXPECT_EQ(ta.dropped_throttled, tb.dropped_throttled);
  EXPECT_SAME_DOUBLE(ta.clock_mhz, tb.clock_mhz);
  EXPECT_SAME_DOUBLE(a.tflops, b.tflops);
  EXPECT_SAME_DOUBLE(a.gbps, b.gbps);
  EXPECT_SAME_DOUBLE(a.tokens_per_s, b.tokens_per_s);
  EXPECT_SAME_DOUBLE(a.flops, b.flops);
  EXPECT_SAME_DOUBLE(a.bytes, b.bytes);
  EXPECT_EQ(a.flop_convention, b.flop_convention);
  expect_same_optional(a.pct_peak_flops, b.pct_peak_flops);
  expect_same_optional(a.pct_peak_bw, b.pct_peak_bw);
  EXPECT_EQ(a.bound, b.bound);
  EXPECT_EQ(a.memory.peak_bytes, b.memory.peak_bytes);
  EXPECT_EQ(a.memory.extra_bytes, b.memory.extra_bytes);
  EXPECT_EQ(a.memory.analytic_bytes, b.memory.analytic_bytes);
  EXPECT_EQ(a.memory.workspace_bytes, b.memory.workspace_bytes);
  EXPECT_EQ(a.memory.process_hwm_bytes, b.memory.process_hwm_bytes);
  const VerifyResult &va = a.verify, &vb = b.verify;
  EXPECT_EQ(va.checked, vb.checked);
  EXPECT_SAME_DOUBLE(va.max_abs_err, vb.max_abs_err);
  EXPECT_SAME_DOUBLE(va.rel_l2_err, vb.rel_l2_err);
  EXPECT_SAME_DOUBLE(va.tolerance, vb.tolerance);
  EXPECT_SAME_DOUBLE(va.lse_max_abs_err, vb.lse_max_abs_err);
  EXPECT_SAME_DOUBLE(va.lse_tolerance, vb.lse_tolerance);
  EXPECT_EQ(va.rows_checked, vb.rows_checked);
  EXPECT_EQ(va.rows_total, vb.rows_total);
  EXPECT_EQ(va.nan_count, vb.nan_count);
  EXPECT_EQ(va.sampling, vb.sampling);
  EXPECT_EQ(va.detail, vb.detail);
  EXPECT_SAME_DOUBLE(va.seconds, vb.seconds);
  EXPECT_EQ(va.launches_checked, vb.launches_checked);
  EXPECT_SAME_DOUBLE(va.reference_disagreement, vb.reference_disagreement);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].name, b.kernels[i].name);
    EXPECT_EQ(a.kernels[i].count, b.kernels[i].count);
    EXPECT_SAME_DOUBLE(a.kernels[i].total_us, b.kernels[i].total_us);
  }
  EXPECT_EQ(a.kernels_note, b.kernels_note);
  EXPECT_EQ(a.env, b.env);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.fault, b.fault);
  EXPECT_EQ(ta.clock_policy, tb.clock_policy);
  EXPECT_SAME_DOUBLE(ta.power_w, tb.power_w);
  EXPECT_EQ(ta.copies, tb.copies);
  EXPECT_SAME_DOUBLE(ta.host_load, tb.host_load);
  EXPECT_SAME_DOUBLE(ta.host_busy, tb.host_busy);
  EXPECT_SAME_DOUBLE(a.peak_tflops, b.peak_tflops);
  EXPECT_SAME_DOUBLE(a.peak_tbps, b.peak_tbps);
  EXPECT_EQ(a.peaks_source, b.peaks_source);
  EXPECT_SAME_DOUBLE(a.peak_clock_mhz, b.peak_clock_mhz);
  expect_same_optional(a.pct_peak_flops_at_clock, b.pct_peak_flops_at_clock);
  EXPECT_SAME_DOUBLE(a.datasheet_tflops, b.datasheet_tflops);
  expect_same_optional(a.pct_datasheet_flops, b.pct_datasheet_flops);
  const ProviderTraits &xa = a.traits, &xb = b.traits;
  EXPECT_EQ(xa.name, xb.name);
  EXPECT_EQ(xa.description, xb.description);
  EXPECT_EQ(xa.device, xb.device);
  EXPECT_EQ(xa.family, xb.family);
  EXPECT_EQ(xa.fused, xb.fused);
  EXPECT_EQ(xa.library, xb.library);
  EXPECT_EQ(xa.library_version, xb.library_version);
  EXPECT_EQ(xa.in_default_set, xb.in_default_set);
  EXPECT_EQ(xa.role, xb.role);
  EXPECT_EQ(xa.variant_of, xb.variant_of);
  EXPECT_EQ(xa.forward, xb.forward);
  EXPECT_EQ(xa.backward, xb.backward);
  EXPECT_EQ(xa.writes_lse, xb.writes_lse);
  ASSERT_EQ(a.trace.has_value(), b.trace.has_value());
  if (a.trace) {
    ASSERT_EQ(a.trace->ranges.size(), b.trace->ranges.size());
    ASSERT_EQ(a.trace->device_events.size(), b.trace->device_events.size());
    for (std::size_t i = 0; i < a.trace->device_events.size(); ++i) {
      const TraceEvent &ea = a.trace->device_events[i], &eb = b.trace->device_events[i];
      EXPECT_EQ(ea.name, eb.name);
      EXPECT_EQ(ea.category, eb.category);
      EXPECT_EQ(ea.kind, eb.kind);
      EXPECT_EQ(ea.stream, eb.stream);
      EXPECT_EQ(ea.start_ns, eb.start_ns);
      EXPECT_EQ(ea.end_ns, eb.end_ns);
      EXPECT_EQ(ea.grid, eb.grid);
      EXPECT_EQ(ea.block, eb.block);
      EXPECT_EQ(ea.bytes, eb.bytes);
    }
    EXPECT_EQ(a.trace->timed_stream, b.trace->timed_stream);
    EXPECT_EQ(a.trace->timed_launches, b.trace->timed_launches);
  }
}

// Every field set to something other than its default, with the values that break naive
// writers: non-finite numbers, subnormals, -0.0, the largest double, 1/3, int64 extremes,
// text with quotes, backslashes, newlines, tabs and non-ASCII.
Result fully_populated() {
  Result r;
  r.provider = "cuda.flash2";
  r.status = Status::incorrect;
  r.reason = "rel_l2_err 0.31 > 0.02\n\"quoted\" \\ back\tslash, µs";
  r.spec = test::make_spec(3, 12, 4, 1000, 4096, 96, DType::bf16, {MaskKind::window, 128},
                           Mode::fwd_bwd);
  r.spec.v_head_dim = 64;
  r.spec.layout = Layout::bshd;
  r.spec.scale = 1.0 / 3.0;
  r.seed = std::numeric_limits<uint64_t>::max();
  r.device = "NVIDIA H200";
  r.timing.mode = "cold";
  r.timing.median_us = 0.1;
  r.timing.mean_us = 1e-310;  // subnormal
  r.timing.min_us = -0.0;
  r.timing.p5_us = std::numeric_limits<double>::max();
  r.timing.p95_us = std::numeric_limits<double>::denorm_min();
  r.timing.cv = kNaN;
  r.timing.rel_noise = 0.1 + 0.2;
  r.timing.samples = std::numeric_limits<int64_t>::max();
  r.timing.launches_per_sample = 16;
  r.timing.noisy = true;
  r.timing.stop_reason = "timeout";
  r.timing.dropped_throttled = 3;
  r.timing.clock_mhz = 1980.5;
  r.tflops = 755.8123456789012;
  r.gbps = kInf;
  r.tokens_per_s = -kInf;
  r.flops = 64432898048;
  r.bytes = 5.0e10;
  r.flop_convention = std::string(kFlopConvention);
  r.pct_peak_flops = 76.4;
  r.pct_peak_bw = std::nullopt;
  r.bound = "compute";
  r.peak_clock_mhz = 1755;
  r.pct_peak_flops_at_clock = 71.2;
  r.datasheet_tflops = 989.4;
  r.pct_datasheet_flops = 61.8;
  r.memory = {51380224, -1048576, 50331648, 1048576, std::numeric_limits<int64_t>::min()};
  r.verify.checked = true;
  r.verify.max_abs_err = kInf;
  r.verify.rel_l2_err = 0.31;
  r.verify.tolerance = 0.02;
  r.verify.lse_max_abs_err = 1.5e-6;
  r.verify.lse_tolerance = 1e-5;
  r.verify.rows_checked = 517;
  r.verify.rows_total = 12000;
  r.verify.nan_count = 7;
  r.verify.sampling = "sample";
  r.verify.detail = "worst row b2 h11 i999 of O";
  r.verify.seconds = 0.125;
  r.verify.launches_checked = 12;
  r.verify.reference_disagreement = 3.5e-15;
  r.kernels = {{"void flash_fwd_kernel<Traits<128, 64>, true>", 16, 1364.0},
               {"poison \"fill\"", 1, 0.5}};
  r.kernels_note = "names from CUPTI";
  r.env = {{"gpu", "NVIDIA H200"}, {"driver", "560.35.03"}, {"empty", ""}, {"ü", "ß"}};
  r.started_at = "2026-01-12T09:30:00Z";
  r.fault = Fault::library;
  r.timing.clock_policy = "recover";
  r.timing.power_w = 699.5;
  r.timing.copies = 41;
  r.timing.host_load = 3.25;
  r.timing.host_busy = 0.125;
  r.peak_tflops = 792.5;
  r.peak_tbps = 4.48;
  r.peaks_source = "measured by attnprof peaks 2026-11-29T10:00:00Z";
  r.traits.name = "cuda.flash2";
  r.traits.description = "a \"fused\" kernel";
  r.traits.device = DeviceKind::cuda;
  r.traits.family = Family::fused;
  r.traits.fused = true;
  r.traits.library = "attnprof";
  r.traits.library_version = "0.1";
  r.traits.in_default_set = true;
  r.traits.role = Role::gqa_expansion;
  r.traits.variant_of = "cuda.flash";
  r.traits.backward = true;
  r.traits.writes_lse = true;
  r.audits = AuditSeconds{.outputs = 0.25, .inputs = 0.125, .launches = 1.5, .streams = 0.0625};
  PointTrace& t = r.trace.emplace();
  t.timed_stream = 13;
  t.timed_launches = 3;
  TraceEvent range;
  range.name = "timed";
  range.kind = TraceKind::range;
  range.start_ns = 10;
  range.end_ns = std::numeric_limits<uint64_t>::max() / 2;
  t.ranges = {range};
  TraceEvent k;
  k.name = "flash_fwd";
  k.category = KernelCategory::fused_attention;
  k.stream = 13;
  k.start_ns = 11;
  k.end_ns = 99;
  k.grid = Dim3{128, 16, 2};
  k.block = Dim3{256, 1, 1};
  t.device_events = {k};
  return r;
}

TEST(JsonRow, FullyPopulatedResultRoundTripsExactly) {
  const Result r = fully_populated();
  const std::string line = to_json_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "a row must be one line";
  const Result back = from_json_line(line);
  expect_same(r, back);
  EXPECT_EQ(to_json_line(back), line);
}

// The audits' cost by kind survives the round trip, and a row of an older build, which wrote
// only their sum as audit_s, reads back with the sum kept as unsplit (and writes it back so).
TEST(JsonRow, AuditSecondsRoundTripByKindAndOlderRowsKeepTheirSum) {
  const Result r = fully_populated();
  const auto j = nlohmann::json::parse(to_json_line(r));
  EXPECT_SAME_DOUBLE(j.at("audit_s").get<double>(), 1.9375);
  EXPECT_SAME_DOUBLE(j.at("audits").at("launches_s").get<double>(), 1.5);
  const Result back = from_json_line(to_json_line(r));
  ASSERT_TRUE(back.audits.has_value());
  EXPECT_SAME_DOUBLE(back.audits->outputs, 0.25);
  EXPECT_SAME_DOUBLE(back.audits->inputs, 0.125);
  EXPECT_SAME_DOUBLE(back.audits->streams, 0.0625);
  EXPECT_SAME_DOUBLE(back.audits->unsplit, 0);

  auto older = j;
  older.erase("audits");
  const Result old = from_json_line(older.dump());
  ASSERT_TRUE(old.audits.has_value());
  EXPECT_SAME_DOUBLE(old.audits->unsplit, 1.9375);
  EXPECT_SAME_DOUBLE(old.audits->outputs, 0);
  const auto again = nlohmann::json::parse(to_json_line(old));
  EXPECT_SAME_DOUBLE(again.at("audit_s").get<double>(), 1.9375);
  EXPECT_FALSE(again.contains("audits"));
}

TEST(JsonRow, AbsentAndNonFiniteOptionalsStayDistinct) {
  Result r = fully_populated();
  r.pct_peak_flops = std::nullopt;
  r.pct_peak_bw = kNaN;
  const Result back = from_json_line(to_json_line(r));
  EXPECT_FALSE(back.pct_peak_flops.has_value());
  ASSERT_TRUE(back.pct_peak_bw.has_value());
  EXPECT_TRUE(std::isnan(*back.pct_peak_bw));
}

TEST(JsonRow, EveryFixtureRowRoundTrips) {
  for (const Result& r : test::sample_results()) {
    SCOPED_TRACE(r.provider + " " + std::string(to_string(r.status)));
    expect_same(r, from_json_line(to_json_line(r)));
  }
}

// The journal on disk: field order, number spelling and escaping are pinned here, and a
// journal written by an earlier build of this schema must keep reading.
TEST(JsonRow, MatchesGoldenJournalAndReadsItBack) {
  const auto rows = test::sample_results();
  std::string text;
  for (const Result& r : rows) text += to_json_line(r) + "\n";
  test::expect_golden("results.jsonl", text);
  const auto back = read_journal(test::golden_path("results.jsonl")).rows;
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) expect_same(rows[i], back[i]);
}

// results_before_seed.jsonl is the golden journal of schema 1 (before seeds, faults, traits and
// the clock policy): the same rows read back, with the new fields at their defaults and the
// provider's name standing in for its traits.
TEST(JsonRow, SchemaOneRowsStillRead) {
  const auto back = read_journal(test::golden_path("results_before_seed.jsonl")).rows;
  auto rows = test::sample_results();
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(back[i].schema_version, kSchemaVersion);  // read into this build's form
    EXPECT_EQ(back[i].traits.name, back[i].provider);
    EXPECT_TRUE(back[i].traits.description.empty());
    EXPECT_EQ(back[i].fault, Fault::none);
    rows[i].seed.reset();
    rows[i].traits.name = rows[i].provider;
    expect_same(rows[i], back[i]);
  }
}

TEST(JsonRow, SeedIsAnUnsignedIntegerOrNull) {
  const auto j = nlohmann::json::parse(to_json_line(fully_populated()));
  EXPECT_EQ(j["seed"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  Result unseeded = fully_populated();
  unseeded.seed.reset();
  EXPECT_TRUE(nlohmann::json::parse(to_json_line(unseeded))["seed"].is_null());
  EXPECT_FALSE(from_json_line(to_json_line(unseeded)).seed.has_value());
}

TEST(JsonRow, NonFiniteNumbersAreStringsAndAbsentOptionalsNull) {
  const auto j = nlohmann::json::parse(to_json_line(fully_populated()));
  EXPECT_EQ(j["timing"]["cv"], "nan");
  EXPECT_EQ(j["gbps"], "inf");
  EXPECT_EQ(j["tokens_per_s"], "-inf");
  EXPECT_EQ(j["verify"]["max_abs_err"], "inf");
  EXPECT_TRUE(j["pct_peak_bw"].is_null());
  EXPECT_EQ(j["pct_peak_flops"], 76.4);
  EXPECT_EQ(j["spec"]["mask"], "window:128");
  EXPECT_EQ(j["status"], "incorrect");
}

// The field names are the schema of docs/results.md; renaming one must fail here first.
TEST(JsonRow, FieldNamesAreTheDocumentedSchema) {
  const auto j = nlohmann::json::parse(to_json_line(fully_populated()));
  auto keys = [](const nlohmann::json& object) {
    std::set<std::string> out;
    for (const auto& item : object.items()) out.insert(item.key());
    return out;
  };
  EXPECT_EQ(keys(j), (std::set<std::string>{"schema_version",
                                            "provider",
                                            "traits",
                                            "status",
                                            "fault",
                                            "reason",
                                            "spec",
                                            "seed",
                                            "device",
                                            "timing",
                                            "tflops",
                                            "gbps",
                                            "tokens_per_s",
                                            "flops",
                                            "bytes",
                                            "flop_convention",
                                            "pct_peak_flops",
                                            "pct_peak_bw",
                                            "bound",
                                            "peak_tflops",
                                            "peak_tbps",
                                            "peaks_source",
                                            "memory",
                                            "verify",
                                            "kernels",
                                            "kernels_note",
                                            "env",
                                            "started_at",
                                            "trace",
                                            "audit_s",
                                            "audits",
                                            "peak_clock_mhz",
                                            "pct_peak_flops_at_clock",
                                            "datasheet_tflops",
                                            "pct_datasheet_flops"}));
  EXPECT_EQ(keys(j["audits"]),
            (std::set<std::string>{"outputs_s", "inputs_s", "launches_s", "streams_s"}));
  EXPECT_EQ(keys(j["traits"]),
            (std::set<std::string>{"name", "description", "device", "family", "fused", "library",
                                   "library_version", "in_default_set", "role", "variant_of",
                                   "forward", "backward", "writes_lse"}));
  EXPECT_EQ(keys(j["spec"]),
            (std::set<std::string>{"batch", "q_heads", "kv_heads", "q_len", "kv_len", "head_dim",
                                   "v_head_dim", "dtype", "mask", "mode", "layout", "scale"}));
  EXPECT_EQ(keys(j["timing"]), (std::set<std::string>{"mode",
                                                      "median_us",
                                                      "mean_us",
                                                      "min_us",
                                                      "p5_us",
                                                      "p95_us",
                                                      "cv",
                                                      "rel_noise",
                                                      "samples",
                                                      "launches_per_sample",
                                                      "noisy",
                                                      "stop_reason",
                                                      "dropped_throttled",
                                                      "clock_settling",
                                                      "clock_mhz",
                                                      "clock_policy",
                                                      "power_w",
                                                      "copies",
                                                      "host_load",
                                                      "host_busy"}));
  EXPECT_EQ(keys(j["memory"]), (std::set<std::string>{"peak_bytes", "extra_bytes", "analytic_bytes",
                                                      "workspace_bytes", "process_hwm_bytes"}));
  EXPECT_EQ(
      keys(j["verify"]),
      (std::set<std::string>{"checked", "max_abs_err", "rel_l2_err", "tolerance", "lse_max_abs_err",
                             "lse_tolerance", "rows_checked", "rows_total", "nan_count", "sampling",
                             "detail", "seconds", "launches_checked", "reference_disagreement"}));
  EXPECT_EQ(keys(j["kernels"][0]), (std::set<std::string>{"name", "count", "total_us"}));
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
}

// The exception message of from_json_line(line), or "" when it does not throw.
std::string error_of(const std::string& line) {
  try {
    (void)from_json_line(line);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string edited(void (*edit)(nlohmann::json&)) {
  auto j = nlohmann::json::parse(to_json_line(fully_populated()));
  edit(j);
  return j.dump();
}

// Schema 2 rows lack the verification's time, launches and cross-check: they read with those at
// their defaults.
TEST(JsonRow, SchemaTwoRowsReadWithoutTheVerificationsCost) {
  const std::string line = edited([](nlohmann::json& j) {
    j["schema_version"] = 2;
    for (const char* key : {"seconds", "launches_checked", "reference_disagreement"})
      j["verify"].erase(key);
  });
  const Result back = from_json_line(line);
  Result want = fully_populated();
  want.verify.seconds = 0;
  want.verify.launches_checked = 0;
  want.verify.reference_disagreement = -1;
  expect_same(want, back);
}

TEST(JsonRow, OtherSchemaVersionIsRefusedWithOneLine) {
  const std::string line = edited([](nlohmann::json& j) {
    j["schema_version"] = 4;
    j.erase("timing");  // a newer schema may lay fields out differently: version comes first
  });
  EXPECT_EQ(error_of(line), "journal schema_version 4, this build reads 1 to 3");
}

TEST(JsonRow, MalformedLinesAreRefusedWithOneLine) {
  const std::string full = to_json_line(fully_populated());
  const std::string cut = error_of(full.substr(0, full.size() / 2));
  EXPECT_EQ(cut.rfind("malformed journal line: invalid JSON at column ", 0), 0u) << cut;
  EXPECT_EQ(cut.find('\n'), std::string::npos) << cut;

  EXPECT_EQ(error_of("[1, 2]"), "malformed journal line: expected a JSON object");
  EXPECT_EQ(error_of("{}"), "malformed journal line: missing field 'schema_version'");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["timing"].erase("median_us"); })),
            "malformed journal line: missing field 'timing.median_us'");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["timing"]["samples"] = 1.5; })),
            "malformed journal line: field 'timing.samples' must be an integer");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["gbps"] = "fast"; })),
            "malformed journal line: field 'gbps' must be a number, \"nan\", \"inf\" or \"-inf\"");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["spec"]["dtype"] = "fp8"; })),
            "malformed journal line: field 'spec.dtype': 'fp8' is not one of fp32, fp16, bf16, "
            "fp8_e4m3, fp8_e5m2");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["status"] = "ok"; })),
            "malformed journal line: field 'status': unknown value 'ok' (passed, incorrect, "
            "not_supported, oom, failed, timeout, skipped)");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["kernels"][1].erase("count"); })),
            "malformed journal line: missing field 'kernels[1].count'");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["env"]["gpu"] = 1; })),
            "malformed journal line: field 'env.gpu' must be a string");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["timing"]["noisy"] = 1; })),
            "malformed journal line: field 'timing.noisy' must be true or false");
  EXPECT_EQ(error_of(edited([](nlohmann::json& j) { j["seed"] = -1; })),
            "malformed journal line: field 'seed' must be an integer from 0 to 2^64-1, or null");
}

TEST(JsonRow, UnknownFieldsAreIgnored) {
  const std::string line = edited([](nlohmann::json& j) { j["added_later"] = {1, 2}; });
  expect_same(fully_populated(), from_json_line(line));
}

}  // namespace
}  // namespace attnprof
