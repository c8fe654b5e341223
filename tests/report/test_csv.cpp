#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "attnprof/axes.hpp"
#include "attnprof/sink.hpp"
#include "report/fixtures.hpp"

namespace attnprof {
namespace {

std::string csv_of(const std::vector<Result>& rows) {
  std::string out = csv_header() + "\n";
  for (const Result& r : rows) out += to_csv_row(r) + "\n";
  return out;
}

TEST(Csv, MatchesGoldenFile) {
  test::expect_golden("results.csv", csv_of(test::sample_results()));
}

// The spec's columns are the axis table's JSON fields, in its order (spec_columns.hpp).
TEST(Csv, HeaderListsTheDocumentedColumns) {
  EXPECT_EQ(csv_header(),
            "provider,status,reason,batch,q_heads,kv_heads,q_len,kv_len,head_dim,v_head_dim,"
            "dtype,mask,mode,layout,scale,page_size,softcap,sinks,shared_latent,seqlens,"
            "timing_mode,median_us,p5_us,p95_us,cv,"
            "samples,noisy,"
            "tflops,gbps,"
            "tokens_per_s,pct_peak_flops,pct_peak_bw,bound,peak_bytes,extra_bytes,analytic_bytes,"
            "rel_l2_err,max_abs_err,tolerance,kernels,device,seed,fault,clock_policy,clock_mhz,"
            "power_w,rows_checked,rows_total,verify_s");
}

// Splits one RFC 4180 record (no embedded line breaks needed here) into its fields.
std::vector<std::string> parse_record(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

TEST(Csv, QuotesCommasQuotesAndLineBreaksPerRfc4180) {
  Result r = test::sample_results()[1];
  r.reason = "a, \"b\"\r\nc";
  r.device = "plain";
  const std::string row = to_csv_row(r);
  EXPECT_NE(row.find(",\"a, \"\"b\"\"\r\nc\","), std::string::npos) << row;
  // The kernels cell holds a comma (template arguments): quoted, names joined by ';'.
  r.reason = "";
  const auto fields = parse_record(to_csv_row(r));
  ASSERT_EQ(fields.size(), parse_record(csv_header()).size());
  EXPECT_EQ(fields[39],
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, true>;fill_poison");
  EXPECT_EQ(fields[40], "plain");
}

TEST(Csv, UnmeasuredFieldsAreEmptyNotZero) {
  const auto fields = parse_record(to_csv_row(test::sample_results()[2]));  // not_supported
  ASSERT_EQ(fields.size(), 49u);
  for (int i :
       {21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 33, 34, 36, 37, 38, 43, 44, 45, 46, 47, 48}) {
    EXPECT_EQ(fields[static_cast<std::size_t>(i)], "") << "column " << i;
  }
  // The spec's cells are the journal's values, every axis present.
  EXPECT_EQ(fields[9], "0");          // v_head_dim: 0 is the head dim, as in the journal
  EXPECT_EQ(fields[13], "bhsd");      // layout
  EXPECT_EQ(fields[14], "0");         // scale: 1/sqrt(head dim)
  EXPECT_EQ(fields[15], "0");         // page_size: contiguous K and V
  EXPECT_EQ(fields[16], "0");         // softcap: none
  EXPECT_EQ(fields[17], "false");     // sinks
  EXPECT_EQ(fields[18], "false");     // shared_latent
  EXPECT_EQ(fields[19], "off");       // seqlens: uniform lengths
  EXPECT_EQ(fields[35], "50331648");  // analytic bytes are known without running
  EXPECT_EQ(fields[41], "20261129");  // the seed, the whole unsigned range
  EXPECT_EQ(parse_record(to_csv_row(test::sample_results()[1]))[41], "18446744073709551615");
  EXPECT_EQ(parse_record(to_csv_row(test::sample_results()[7]))[41], "");  // skipped: never tried
  EXPECT_EQ(fields[42], to_string(test::sample_results()[2].fault));       // the fault, always
}

// Two points that differ on any one axis never print alike: not in the CSV, not in the label the
// report's tables show, not in the key that resume and compare use. A new axis fails here until
// it has a value to try.
TEST(Csv, EveryAxisChangesTheRowTheLabelAndTheKey) {
  const std::map<std::string, std::string> other = {
      {"batch", "3"},      {"heads", "8"},      {"kv_heads", "2"},    {"seq", "32"},
      {"kv_seq", "128"},   {"head_dim", "128"}, {"v_head_dim", "32"}, {"dtype", "bf16"},
      {"mask", "causal"},  {"mode", "bwd"},     {"layout", "bshd"},   {"scale", "0.5"},
      {"page_size", "16"}, {"softcap", "30"},   {"sinks", "on"},      {"shared_latent", "on"},
      {"seqlens", "8/64"}};
  Result base = test::sample_results()[0];
  base.spec = test::make_spec(2, 4, 4, 64, 64, 64, DType::fp16, {}, Mode::fwd);
  for (const Axis& a : axes()) {
    if (a.json.empty()) continue;  // a rule, not a field
    ASSERT_TRUE(other.contains(std::string(a.key))) << "give axis '" << a.key << "' a value here";
    Result changed = base;
    a.set(changed.spec, a.parse(other.at(std::string(a.key))).at(0));
    ASSERT_NE(changed.spec, base.spec) << a.key;
    EXPECT_NE(to_csv_row(changed), to_csv_row(base)) << a.key;
    EXPECT_NE(changed.spec.label(), base.spec.label()) << a.key;
    EXPECT_NE(changed.spec.key(), base.spec.key()) << a.key;
  }
}

TEST(Csv, SinkWritesHeaderThenRowsFlushedAsTheyCome) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "attnprof_test.csv";
  const auto rows = test::sample_results();
  {
    auto sink = make_csv_sink(path);
    sink->begin(static_cast<int64_t>(rows.size()));
    sink->write(rows[0]);
    EXPECT_EQ(test::read_text(path), csv_of({rows[0]}));
    for (std::size_t i = 1; i < rows.size(); ++i) sink->write(rows[i]);
    sink->end();
  }
  EXPECT_EQ(test::read_text(path), test::read_text(test::golden_path("results.csv")));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace attnprof
