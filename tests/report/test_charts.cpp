// The HTML report's charts: the library found is Chart.js 3 or 4 and safe to inline, or the reason
// says why not; each figure's data carries what the page draws, with nothing that could end its
// <script>. (Whether a browser draws them: tests/browser/check_report.py.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attnprof/report.hpp"
#include "report/html_charts.hpp"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

ChartLibrary library_from(const std::string& text) {
  const fs::path path =
      fs::path(::testing::TempDir()) / ("attnprof_chart_" + std::to_string(::getpid()) + ".js");
  std::ofstream(path) << text;
  setenv("ATTNPROF_CHARTJS", path.c_str(), 1);
  ChartLibrary lib = find_chart_library();
  unsetenv("ATTNPROF_CHARTJS");
  fs::remove(path);
  return lib;
}

TEST(Charts, TheLibraryIsChartJs3Or4AndSafeToInline) {
  const ChartLibrary good = library_from("/*!\n * Chart.js v3.9.1\n */\nvar Chart;\n");
  EXPECT_TRUE(good.found) << good.reason;
  EXPECT_EQ(good.version, "3.9.1");
  EXPECT_EQ(good.script, "/*!\n * Chart.js v3.9.1\n */\nvar Chart;\n");
  const ChartLibrary old = library_from("/*!\n * Chart.js v2.9.4\n */\n");
  EXPECT_FALSE(old.found);
  EXPECT_NE(old.reason.find("is Chart.js 2.9.4; the report needs 3 or 4"), std::string::npos)
      << old.reason;
  const ChartLibrary other = library_from("/* plotly */ var Plotly;");
  EXPECT_FALSE(other.found);
  EXPECT_NE(other.reason.find("is not Chart.js"), std::string::npos) << other.reason;
  const ChartLibrary ends = library_from("/*! Chart.js v4.4.1 */ var s = '</script>';");
  EXPECT_FALSE(ends.found);
  EXPECT_NE(ends.reason.find("would end the page's script early"), std::string::npos)
      << ends.reason;
  EXPECT_TRUE(ends.script.empty());
}

TEST(Charts, EachFigureCarriesWhatThePageDraws) {
  Figure f;
  f.id = "fig01-latency";
  f.plot.title = "Latency </script><b>";
  f.plot.x_label = "sequence length N";
  f.plot.y_label = "ms";
  f.plot.reference_y = 1.0;
  f.plot.series = {{"cpu.naive", {{64, 2.5}, {128, 0}, {256, -1}, {512, 9}}, 0},
                   {"nothing to show", {{64, 0}}, 1},
                   {"roof", {{1, 2}, {10, 20}}, 12, PlotStyle::ceiling}};
  const std::string text = chart_data_json({&f});
  EXPECT_EQ(text.find('<'), std::string::npos) << text;  // '<' only as \u003c
  const auto j = nlohmann::json::parse(text);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["title"], "Latency </script><b>");
  EXPECT_EQ(j[0]["reference_y"], 1.0);
  EXPECT_TRUE(j[0]["log_x"].get<bool>());
  ASSERT_EQ(j[0]["series"].size(), 2u);  // a series a log axis cannot show is left out
  EXPECT_EQ(j[0]["series"][0]["points"], nlohmann::json::parse("[[64, 2.5], [512, 9]]"));
  EXPECT_EQ(j[0]["series"][0]["color"], "#0072b2");
  EXPECT_EQ(j[0]["series"][0]["style"], "linespoints");
  EXPECT_EQ(j[0]["series"][1]["style"], "ceiling");
  EXPECT_EQ(j[0]["series"][1]["color"], "#555555");
  EXPECT_EQ(j[0]["series"][1]["marker"], 1);  // past the palette's ten colours, another marker
}

}  // namespace
}  // namespace attnprof
