#include <filesystem>
#include <string>

#include <gtest/gtest.h>

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

TEST(Csv, HeaderListsTheDocumentedColumns) {
  EXPECT_EQ(csv_header(),
            "provider,status,reason,batch,q_heads,kv_heads,q_len,kv_len,head_dim,v_head_dim,"
            "dtype,mask,mode,page_size,softcap,sinks,seqlens,timing_mode,median_us,p5_us,p95_us,cv,"
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
  EXPECT_EQ(fields[36],
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, true>;fill_poison");
  EXPECT_EQ(fields[37], "plain");
}

TEST(Csv, UnmeasuredFieldsAreEmptyNotZero) {
  const auto fields = parse_record(to_csv_row(test::sample_results()[2]));  // not_supported
  ASSERT_EQ(fields.size(), 46u);
  for (int i :
       {18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 30, 31, 33, 34, 35, 40, 41, 42, 43, 44, 45}) {
    EXPECT_EQ(fields[static_cast<std::size_t>(i)], "") << "column " << i;
  }
  EXPECT_EQ(fields[13], "0");         // page_size: contiguous K and V
  EXPECT_EQ(fields[14], "0");         // softcap: none
  EXPECT_EQ(fields[15], "0");         // sinks: off
  EXPECT_EQ(fields[16], "");          // seqlens: uniform lengths
  EXPECT_EQ(fields[32], "50331648");  // analytic bytes are known without running
  EXPECT_EQ(fields[9], "96");         // v_head_dim is the effective one, never 0
  EXPECT_EQ(fields[38], "20261129");  // the seed, the whole unsigned range
  EXPECT_EQ(parse_record(to_csv_row(test::sample_results()[1]))[38], "18446744073709551615");
  EXPECT_EQ(parse_record(to_csv_row(test::sample_results()[7]))[38], "");  // skipped: never tried
  EXPECT_EQ(fields[39], to_string(test::sample_results()[2].fault));       // the fault, always
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
