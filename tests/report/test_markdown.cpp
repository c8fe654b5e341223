#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "attnprof/sink.hpp"
#include "report/fixtures.hpp"

namespace attnprof {
namespace {

TEST(Markdown, MatchesGoldenFile) {
  test::expect_golden("results.md", to_markdown(test::sample_results()));
}

TEST(Markdown, PipesInTextAreEscapedAndRowsStayOnOneLine) {
  Result r = test::sample_results()[5];  // failed, two-line reason
  r.reason = "a | b\nc";
  const std::string md = to_markdown({r});
  EXPECT_NE(md.find("| a \\| b c |"), std::string::npos) << md;
}

// Provider names, reasons and notes come from code attnprof does not own (user providers): they
// are shown as written, never as Markdown (no emphasis, no HTML, no broken tables).
TEST(Markdown, UserTextIsEscaped) {
  Result r = test::sample_results()[5];
  r.provider = "my_kernel*v2";
  r.reason = "<b>boom</b> [link](x) `code` a\\b";
  const std::string md = to_markdown({r});
  EXPECT_NE(md.find("| my_kernel\\*v2 "), std::string::npos) << md;
  EXPECT_NE(md.find("\\<b>boom\\</b> \\[link\\](x) \\`code\\` a\\\\b"), std::string::npos) << md;
  for (std::size_t at = md.find('<'); at != std::string::npos; at = md.find('<', at + 1)) {
    EXPECT_TRUE(at > 0 && md[at - 1] == '\\') << "unescaped '<' in: " << md.substr(at, 40);
  }
}

TEST(Markdown, LegendNamesTheFlopConventionOfTheRows) {
  Result r = test::sample_results()[0];
  r.flop_convention = "custom convention";
  const std::string md = to_markdown({r});
  EXPECT_NE(md.find("FLOPs counted as `custom convention`"), std::string::npos) << md;
  // Rows without one (nothing ran) fall back to this build's convention.
  const std::string none = to_markdown({test::sample_results()[2]});
  EXPECT_NE(none.find(std::string(kFlopConvention)), std::string::npos) << none;
}

TEST(Markdown, SinkWritesTheWholeFileAtEnd) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "attnprof_test.md";
  std::filesystem::remove(path);
  const auto rows = test::sample_results();
  {
    auto sink = make_markdown_sink(path);
    sink->begin(static_cast<int64_t>(rows.size()));
    for (const Result& r : rows) sink->write(r);
    EXPECT_FALSE(std::filesystem::exists(path));
    sink->end();
  }
  EXPECT_EQ(test::read_text(path), test::read_text(test::golden_path("results.md")));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace attnprof
