// Report generation: golden Markdown from a fixed journal; HTML that is well formed (tags
// balance, ids unique) and holds every figure's canvas and data with the charting library inlined
// and nothing to fetch; a report without the library or gnuplot still has its tables and says
// where its charts are or which package brings them; bad input is one clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "attnprof/journal.hpp"
#include "attnprof/registry.hpp"
#include "attnprof/report.hpp"
#include "attnprof/sink.hpp"
#include "attnprof/tune.hpp"
#include "report/fixtures.hpp"
#include "report/plots.hpp"
#include "report/report_model.hpp"

namespace attnprof {
namespace {

std::vector<Result> golden_rows() {
  // Schema 1 rows: their traits come from this build's table, as `attnprof report` fills them.
  std::vector<Result> rows = read_journal(test::golden_path("report_input.jsonl")).rows;
  backfill_traits(rows);
  return rows;
}

ReportOptions golden_options() {
  ReportOptions o;
  o.source = "report_input.jsonl";
  return o;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Checks that every element is closed in order; returns "" or what is wrong. Knows enough HTML
// for these pages: void elements, <!DOCTYPE>, comments, raw <style>, quoted attributes.
std::string tag_balance_error(const std::string& html) {
  static const std::set<std::string> kVoid = {"meta", "br", "img", "hr", "link", "input"};
  std::vector<std::string> open;
  std::size_t at = 0;
  while ((at = html.find('<', at)) != std::string::npos) {
    if (html.compare(at, 4, "<!--") == 0) {
      at = html.find("-->", at);
      if (at == std::string::npos) return "unclosed comment";
      continue;
    }
    std::size_t end = at + 1;
    char quote = 0;
    for (; end < html.size(); ++end) {
      const char c = html[end];
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        break;
      }
    }
    if (end >= html.size()) return "unterminated tag at " + std::to_string(at);
    const std::string tag = html.substr(at + 1, end - at - 1);
    at = end + 1;
    if (tag.empty() || tag[0] == '!' || tag[0] == '?') continue;
    const bool closing = tag[0] == '/';
    const std::size_t name_start = closing ? 1 : 0;
    const std::size_t name_end = tag.find_first_of(" \t\n/", name_start);
    const std::string name = tag.substr(name_start, name_end - name_start);
    if (closing) {
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes <" + (open.empty() ? "nothing" : open.back()) + ">";
      }
      open.pop_back();
    } else if (tag.back() != '/' && !kVoid.contains(name)) {
      open.push_back(name);
      if (name == "style" || name == "script") {  // raw text up to its end tag
        at = html.find("</" + name + ">", at);
        if (at == std::string::npos) return "unclosed <" + name + ">";
      }
    }
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("attnprof_report_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(Report, MarkdownMatchesGoldenFile) {
  MarkdownPlots plots;
  plots.drawn = true;
  plots.plots_dir = "report-plots";
  test::expect_golden("report.md", markdown_report(golden_rows(), golden_options(), plots));
}

// A charting library for the tests: Chart.js's banner and a line of script (what the browser check,
// tests/browser/check_report.py, runs is the real one).
std::filesystem::path fake_chart_library(const std::filesystem::path& dir) {
  const auto path = dir / "chart.umd.js";
  std::ofstream(path) << "/*!\n * Chart.js v4.4.1\n */\nwindow.Chart = function () {};\n";
  return path;
}

TEST(Report, HtmlIsWellFormedAndHoldsEveryChart) {
  const auto dir = temp_dir("html");
  setenv("ATTNPROF_CHARTJS", fake_chart_library(dir).c_str(), 1);
  setenv("ATTNPROF_GNUPLOT", "/nonexistent/gnuplot", 1);
  const auto warnings =
      write_report(golden_rows(), golden_options(), {dir / "r.html", dir / "r.md"});
  unsetenv("ATTNPROF_CHARTJS");
  unsetenv("ATTNPROF_GNUPLOT");
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  const std::string html = test::read_text(dir / "r.html");
  EXPECT_EQ(tag_balance_error(html), "");
  const auto model = build_report_model(golden_rows(), golden_options());
  const std::size_t figures = model.figures().size();
  EXPECT_EQ(figures, 10u);  // 5 for the MHA series (with % of peak), 4 for GQA, 1 roofline
  EXPECT_EQ(count(html, "<canvas id="), figures);
  EXPECT_EQ(count(html, "\"series\":"), figures);                // each figure's data
  EXPECT_EQ(count(html, "window.Chart = function () {};"), 1u);  // the library, inlined once
  EXPECT_NE(
      html.find("Charts drawn by Chart.js 4.4.1, inlined from " + (dir / "chart.umd.js").string()),
      std::string::npos);
  EXPECT_EQ(count(html, "<table>"), model.tables.size() + 2);  // the answer and the seeds
  // The answer first: its table right under the title, then the findings.
  EXPECT_LT(html.find("<section id=\"answer\">"), html.find("<section id=\"findings\">"));
  EXPECT_EQ(html.find("<section"), html.find("<section id=\"answer\">"));
  EXPECT_NE(html.find("<li>Deploy <code>cudnn.sdpa</code> for prefill"), std::string::npos);
  // Nothing is fetched when the page is viewed.
  EXPECT_EQ(count(html, " src="), 0u);
  EXPECT_EQ(count(html, "href=\"http"), 0u);
  std::set<std::string> ids;
  for (std::size_t at = html.find(" id="); at != std::string::npos;
       at = html.find(" id=", at + 1)) {
    const char q = html[at + 4];
    const std::string id = html.substr(at + 5, html.find(q, at + 5) - at - 5);
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
  }
  // Without gnuplot the Markdown points to the HTML, in one line.
  const std::string md = test::read_text(dir / "r.md");
  EXPECT_NE(md.find("Charts: the charts are in the HTML report, r.html (SVG files here need "
                    "gnuplot: /nonexistent/gnuplot could not be run"),
            std::string::npos)
      << md;
  EXPECT_FALSE(std::filesystem::exists(dir / "r-plots"));
  std::filesystem::remove_all(dir);
}

TEST(Report, WithoutAChartLibraryTheReportSaysWhichPackageBringsIt) {
  const auto dir = temp_dir("nocharts");
  setenv("ATTNPROF_CHARTJS", "/nonexistent/chart.js", 1);
  setenv("ATTNPROF_GNUPLOT", "/nonexistent/gnuplot", 1);
  const auto warnings =
      write_report(golden_rows(), golden_options(), {dir / "r.html", dir / "r.md"});
  unsetenv("ATTNPROF_CHARTJS");
  unsetenv("ATTNPROF_GNUPLOT");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].rfind("charts omitted: ATTNPROF_CHARTJS: /nonexistent/chart.js cannot be "
                              "read",
                              0),
            0u)
      << warnings[0];
  EXPECT_NE(warnings[0].find("apt-get install libjs-chart.js"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[1].rfind("Markdown plots omitted: /nonexistent/gnuplot could not be run", 0),
            0u)
      << warnings[1];
  const std::string html = test::read_text(dir / "r.html");
  EXPECT_EQ(tag_balance_error(html), "");
  EXPECT_EQ(count(html, "<canvas"), 0u);
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(
      count(html, "<p class=\"note\">Charts omitted: ATTNPROF_CHARTJS: /nonexistent/chart.js"), 1u);
  EXPECT_GE(count(html, "<table>"), 4u);
  const std::string md = test::read_text(dir / "r.md");
  EXPECT_NE(md.find("Charts: /nonexistent/gnuplot could not be run"), std::string::npos) << md;
  EXPECT_NE(md.find("the HTML report (--html) draws them in a browser"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Where gnuplot runs, the Markdown file links its figures as SVG files beside it.
TEST(Report, MarkdownLinksSvgFilesWhereGnuplotRuns) {
  if (!find_plotter().available) GTEST_SKIP() << find_plotter().reason;
  const auto dir = temp_dir("svg");
  const auto warnings = write_report(golden_rows(), golden_options(), {"", dir / "r.md"});
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  const ReportModel model = build_report_model(golden_rows(), golden_options());
  for (const Figure* f : model.figures()) {
    EXPECT_TRUE(std::filesystem::exists(dir / "r-plots" / (f->id + ".svg"))) << f->id;
  }
  EXPECT_NE(test::read_text(dir / "r.md").find("](r-plots/fig01-latency.svg)"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A journal merged from several builds names every build in its summary, in order.
TEST(Report, SummaryNamesEveryBuildOfTheRows) {
  std::vector<Result> rows = golden_rows();
  ASSERT_GE(rows.size(), 3u);
  rows[1].env["git_commit"] = "fedcba987654";
  rows[2].env["git_commit"] = "fedcba987654";
  const std::string md = markdown_report(rows, golden_options(), {});
  EXPECT_NE(md.find("git_commit 0123abcd4567 (also fedcba987654), build_type Release"),
            std::string::npos)
      << md.substr(0, 800);
}

// Findings keep their code spans and escape the rest; a provider's name and reason never become
// Markdown.
TEST(Report, MarkdownEscapesTextFromTheRows) {
  std::vector<Result> rows = golden_rows();
  rows.push_back(rows.front());
  rows.back().provider = "evil_<i>x</i>*";
  rows.back().status = Status::failed;
  rows.back().reason = "a | b *c* <script>";
  const std::string md = markdown_report(rows, golden_options(), {});
  // The reason is never in a code span (where "<" is shown as written), so every "<" is escaped.
  for (std::size_t at = md.find("<script>"); at != std::string::npos;
       at = md.find("<script>", at + 1)) {
    EXPECT_TRUE(at > 0 && md[at - 1] == '\\') << "unescaped <script> in: " << md;
  }
  EXPECT_NE(md.find("evil\\_\\<i>x\\</i>\\*"), std::string::npos) << md;
  EXPECT_NE(md.find("a \\| b \\*c\\* \\<script>"), std::string::npos) << md;
  EXPECT_EQ(finding_markdown("`a_b` and _a_b_ <x>"), "`a_b` and \\_a_b\\_ \\<x>");
}

// `report --tune`: what `tune --json` wrote comes back as a finding per provider and a table.
TEST(Report, TuneAnswersBecomeFindingsAndATable) {
  const auto point = [](int64_t b, bool fits, double tokens, double p95_us, int64_t bytes) {
    TunePoint p;
    p.value = b;
    p.fits = fits;
    p.why_not = fits ? "" : "p95 120 ms > limit 100 ms";
    p.result.status = Status::passed;
    p.result.tokens_per_s = tokens;
    p.result.timing.p95_us = p95_us;
    p.result.timing.samples = 59;
    p.result.memory.peak_bytes = bytes;
    return p;
  };
  Spec spec;
  spec.q_heads = spec.kv_heads = 16;
  spec.q_len = spec.kv_len = 1024;
  spec.head_dim = 64;
  spec.dtype = DType::fp16;
  TuneResult fits;
  fits.provider = "cudnn.sdpa";
  fits.spec = spec;
  fits.curve = {point(1, true, 1e6, 2000, 64 << 20), point(96, true, 5.2e6, 80000, 3LL << 30),
                point(101, false, 5.1e6, 120000, 3LL << 30)};
  fits.largest = fits.optimal = 96;
  fits.boundary = "batch 101: p95 120 ms > limit 100 ms";
  TuneResult none;
  none.provider = "cuda.naive";
  none.spec = spec;
  none.curve = {point(1, false, 1e5, 120000, 1LL << 30)};
  none.boundary = "batch 1: p95 120 ms > limit 100 ms";
  const TuneLimits limits{int64_t{14} << 30, 100000.0};
  const auto path = std::filesystem::temp_directory_path() /
                    ("attnprof_tune_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << tune_summary_json({fits, none}, limits);
  }
  ReportOptions options = golden_options();
  options.tune = read_tune_summary(path);
  std::filesystem::remove(path);
  const auto model = build_report_model(golden_rows(), options);
  std::vector<std::string> tune;
  for (const Finding* f : model.findings())
    if (f->topic == "tune" && f->text.starts_with("Deploy:")) tune.push_back(f->text);
  ASSERT_EQ(tune.size(), 2u);  // under each provider, in the order the rows name them
  EXPECT_EQ(tune[0],
            "Deploy: `cuda.naive` fits no batch under 14.0 GiB of peak memory and a p95 of 100 ms "
            "at B1 H16 N1024 D64 fp16 none fwd (batch 1: p95 120 ms > limit 100 ms).");
  EXPECT_EQ(tune[1],
            "Deploy: `cudnn.sdpa` fits up to batch 96 under 14.0 GiB of peak memory and a p95 of "
            "100 ms at B1 H16 N1024 D64 fp16 none fwd; the most tokens/s, 5.20 M, at batch 96 "
            "(p95 80.0 ms from 59 samples, peak memory 3.00 GiB; 3 batches measured; above: batch "
            "101: p95 120 ms > limit 100 ms).");
  // The headline names the one to deploy: the most tokens/s of those that fit.
  const auto batch = std::find_if(model.headline.begin(), model.headline.end(),
                                  [](const Finding& f) { return f.topic == "tune"; });
  ASSERT_NE(batch, model.headline.end());
  EXPECT_EQ(batch->text,
            "Batch to deploy under 14.0 GiB of peak memory and a p95 of 100 ms: `cudnn.sdpa` at "
            "batch 96 of B1 H16 N1024 D64 fp16 none fwd, the most tokens/s of the 2 providers "
            "tuned (5.20 M tokens/s, p95 80.0 ms from 59 samples, peak memory 3.00 GiB; up to "
            "batch 96 fits); 1 provider fits no batch.");
  ASSERT_FALSE(model.tables.empty());
  EXPECT_EQ(model.tables.front().heading, "Batch to deploy (attnprof tune)");
  EXPECT_EQ(model.tables.front().table.rows.size(), 2u);
  // A file that is not a tune summary is one line naming it.
  const auto bad = std::filesystem::temp_directory_path() /
                   ("attnprof_not_tune_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(bad);
    out << "{\"rows\": []}";
  }
  try {
    (void)read_tune_summary(bad);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a `tune --json` file"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(bad);
}

// The roofline: every passed point by FLOP per minimum byte against TFLOP/s, per device and dtype,
// under the measured ceilings with the ridge where they meet.
TEST(Report, RooflinePlacesEveryPassedPointUnderTheMeasuredCeilings) {
  std::vector<Result> rows = golden_rows();
  int64_t passed = 0;
  for (Result& r : rows) {
    r.peak_tflops = 800;
    r.peak_tbps = 4;
    if (r.status == Status::passed && r.tflops > 0) ++passed;
  }
  const ReportModel m = build_report_model(rows, golden_options());
  const auto roof = std::find_if(m.groups.begin(), m.groups.end(),
                                 [](const FigureGroup& g) { return g.title == "Roofline"; });
  ASSERT_NE(roof, m.groups.end());
  int64_t shown = 0;
  for (const Figure& f : roof->figures) {
    EXPECT_NE(f.alt.find("ridge at 200 FLOP/B"), std::string::npos) << f.alt;
    ASSERT_FALSE(f.plot.series.empty());
    const PlotSeries& ceiling = f.plot.series.back();
    EXPECT_EQ(ceiling.style, PlotStyle::ceiling);
    ASSERT_EQ(ceiling.points.size(), 3u);
    EXPECT_DOUBLE_EQ(ceiling.points[1].first, 200.0);
    EXPECT_DOUBLE_EQ(ceiling.points[1].second, 800.0);
    EXPECT_DOUBLE_EQ(ceiling.points[0].second, 4 * ceiling.points[0].first);
    for (std::size_t i = 0; i + 1 < f.plot.series.size(); ++i) {
      EXPECT_EQ(f.plot.series[i].style, PlotStyle::points);
      shown += static_cast<int64_t>(f.plot.series[i].points.size());
    }
    EXPECT_NE(gnuplot_script(f.plot, "x.svg").find("with points pt 7"), std::string::npos);
  }
  EXPECT_EQ(shown, passed);
}

TEST(Report, NoPassedRowsAndUnknownBaselineAreOneLineErrors) {
  std::vector<Result> broken = test::sample_results();
  std::erase_if(broken, [](const Result& r) { return r.status == Status::passed; });
  try {
    markdown_report(broken, golden_options(), {});
    FAIL() << "reported on rows that all failed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "no passed rows to report on (6 rows: 1 incorrect, 1 not_supported, 1 oom, 1 "
              "failed, 1 timeout, 1 skipped)");
  }
  EXPECT_THROW(markdown_report({}, golden_options(), {}), std::runtime_error);
  ReportOptions o = golden_options();
  o.baseline = "cuda.flash9";
  try {
    markdown_report(golden_rows(), o, {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--baseline: 'cuda.flash9' has no passed rows here"),
              std::string::npos);
  }
  o.baseline = "cuda.math";  // any provider with passed rows may be the baseline
  EXPECT_NE(markdown_report(golden_rows(), o, {}).find("Baseline for speedups: cuda.math"),
            std::string::npos);
}

TEST(Plots, ScriptDrawsLogAxesFromDatablocksAndQuotesText) {
  PlotSpec p;
  p.title = "it's a title";
  p.x_label = "N";
  p.y_label = "ms";
  p.series = {{"a", {{256, 1.5}, {512, 0}, {1024, -1}}, 0}, {"none", {{64, 0}}, 1}};
  const std::string s = gnuplot_script(p, "/tmp/x.svg");
  EXPECT_NE(s.find("set terminal svg"), std::string::npos);
  EXPECT_NE(s.find("set title 'it''s a title'"), std::string::npos) << s;
  EXPECT_NE(s.find("set logscale x 2"), std::string::npos);
  EXPECT_NE(s.find("$d0 << EOD\n256 1.5\nEOD\n"), std::string::npos) << s;  // y <= 0 left out
  EXPECT_EQ(s.find("$d1"), std::string::npos) << s;  // a series with nothing to show
  EXPECT_NE(s.find("title 'a'"), std::string::npos);
}

}  // namespace
}  // namespace attnprof
