// The comparison as JSON (`attnprof compare --json`, attnprof.compare in Python): a golden file
// of fixed rows (a SLOWER point, a SAME one, one that broke, one missing from B, one only in B),
// and its counts read back against the comparison they came from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attnprof/compare.hpp"
#include "report/fixtures.hpp"

namespace attnprof {
namespace {

Result row(const std::string& provider, int64_t seq, double median_us) {
  Result r;
  r.provider = provider;
  r.status = Status::passed;
  r.spec = test::make_spec(1, 8, 8, seq, seq, 64, DType::fp16, {}, Mode::fwd);
  r.timing = test::make_timing("cold", median_us, median_us * 1.1, 200, false);
  return r;
}

Comparison fixed_comparison() {
  std::vector<Result> a = {row("p.slow", 1024, 100), row("p.same", 1024, 50),
                           row("p.broke", 1024, 70), row("p.gone", 1024, 30)};
  std::vector<Result> b = {row("p.slow", 1024, 125), row("p.same", 1024, 50.1),
                           row("p.broke", 1024, 70), row("p.new", 1024, 10)};
  b[2].status = Status::incorrect;
  b[2].reason = "row 3: rel err 0.2 > 0.01";
  return compare_runs(a, b, CompareOptions{});
}

TEST(CompareJson, MatchesTheGoldenFile) {
  test::expect_golden("compare.json",
                      comparison_json(fixed_comparison(), "a.jsonl", "b.jsonl", CompareOptions{}));
}

TEST(CompareJson, SaysWhatTheComparisonSays) {
  const Comparison c = fixed_comparison();
  const nlohmann::json j =
      nlohmann::json::parse(comparison_json(c, "a.jsonl", "b.jsonl", CompareOptions{}));
  const nlohmann::json& s = j.at("summary");
  EXPECT_EQ(s.at("compared"), c.rows.size());
  EXPECT_EQ(s.at("slower"), c.count(Verdict::slower));
  EXPECT_EQ(s.at("same"), c.count(Verdict::same));
  EXPECT_EQ(s.at("broken"), c.broken());
  EXPECT_EQ(s.at("regression"), c.has_regression(false));
  EXPECT_DOUBLE_EQ(s.at("geomean_ratio").get<double>(), c.geomean_ratio());
  ASSERT_EQ(j.at("rows").size(), c.rows.size());
  for (size_t i = 0; i < c.rows.size(); ++i) {
    EXPECT_EQ(j["rows"][i].at("verdict"), to_string(c.rows[i].verdict));
    EXPECT_DOUBLE_EQ(j["rows"][i].at("ratio").get<double>(), c.rows[i].ratio);
  }
  EXPECT_EQ(j.at("changes").size(), c.changes.size());
  EXPECT_EQ(j.at("missing"), c.missing);
  EXPECT_EQ(j.at("only_new"), c.only_head);
}

TEST(CompareJson, AnUnknownNoiseIsNull) {
  std::vector<Result> a = {row("p", 64, 10)}, b = {row("p", 64, 11)};
  b[0].timing.samples = 1;  // nothing known about its noise
  const nlohmann::json j =
      nlohmann::json::parse(comparison_json(compare_runs(a, b, {}), "a", "b", CompareOptions{}));
  EXPECT_TRUE(j["rows"][0].at("noise").is_null());
  EXPECT_EQ(j["rows"][0].at("verdict"), "AMBIGUOUS");
}

}  // namespace
}  // namespace attnprof
